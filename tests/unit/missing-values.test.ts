/**
 * No silent fallbacks: a value the code relies on and does not have is an error naming it, never
 * an empty string cached or sent on (such as `etag: result.results[1].etag ?? ''`).
 */
import { PermanentError } from '../../src/domain/errors';
import { newOrderState } from '../../src/domain/order';
import { createEmbeddedStore } from '../../local/store/document-store';
import { createOrderCache } from '../../src/services/convoy/order-cache';
import { applyEntry } from '../../src/services/idempotent-consumer';
import {
  fulfillmentInputOf,
  ORDERS_CONTAINER,
  ORDERS_PARTITION_KEY_PATH,
} from '../../src/services/order-documents';
import type { DeliveredMessage, DocumentContainer } from '../../src/services/ports';
import { created, entryMessageFor } from '../support/e2e';

const ignore = (): void => {};

describe('the consumer', () => {
  it('refuses a committed batch that came back without the order etag, and caches nothing', async () => {
    const store = createEmbeddedStore().container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH);
    // A store that commits the batch but loses the order's etag in its answer.
    const orders: DocumentContainer = Object.assign(Object.create(store) as DocumentContainer, {
      batch: async (...args: Parameters<DocumentContainer['batch']>) => {
        const result = await store.batch(...args);
        return { ...result, results: result.results.map(({ status }) => ({ status })) };
      },
    });
    const cache = createOrderCache();
    const outgoing = entryMessageFor(created('O-E', 'T-1'));
    const message: DeliveredMessage = {
      ...outgoing,
      deliveryCount: 1,
      sequenceNumber: 1,
      correlationId: undefined,
    };
    const error: unknown = await applyEntry(
      {
        orders,
        sender: { send: async () => undefined },
        fulfillment: { start: async () => undefined },
        telemetry: { trace: ignore, event: ignore, metric: ignore },
        cache,
      },
      message,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentError);
    expect(error).toMatchObject({ code: 'missing-etag' });
    expect(cache.get('O-E')).toBeUndefined();
  });
});

describe('fulfillmentInputOf', () => {
  it('refuses an order whose OrderCreated was not applied instead of inventing a customer', () => {
    expect(() => fulfillmentInputOf(newOrderState('O-P'), null)).toThrow(
      'order O-P has no customerId: its OrderCreated was not applied',
    );
    expect(() => fulfillmentInputOf({ ...newOrderState('O-P'), customerId: 'C' }, null)).toThrow(
      'order O-P has no currency',
    );
  });
});
