/**
 * An embedded `orders` container as the app declares it: its indexing policy's queried fields and
 * its unique keys (src/adapters/indexing-policy.ts), so that a test's writers are arbitrated by the
 * same unique slot as on Azure.
 */
import { createEmbeddedStore, type EmbeddedStore } from '../../local/store/document-store';
import { queriedFieldsOf, uniqueKeysOf } from '../../src/adapters/indexing-policy';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../../src/services/order-documents';
import type { DocumentContainer } from '../../src/services/ports';

export function appOrdersContainer(store: EmbeddedStore = createEmbeddedStore()): DocumentContainer {
  return store.container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH, {
    queriedFields: queriedFieldsOf(ORDERS_CONTAINER),
    uniqueKeys: uniqueKeysOf(ORDERS_CONTAINER),
  });
}
