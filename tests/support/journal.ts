/** The operators' journal on a store of its own, for tests that call the HTTP functions directly. */
import { createEmbeddedStore } from '../../local/store/document-store';
import {
  createOperationsJournal,
  OPERATIONS_CONTAINER,
  OPERATIONS_PARTITION_KEY_PATH,
  type OperationsJournal,
} from '../../src/services/operations/operations-journal';
import { queriedFieldsOf } from '../../src/adapters/indexing-policy';

export function testJournal(): OperationsJournal {
  return createOperationsJournal(
    createEmbeddedStore().container(OPERATIONS_CONTAINER, OPERATIONS_PARTITION_KEY_PATH, {
      queriedFields: queriedFieldsOf(OPERATIONS_CONTAINER),
    }),
  );
}
