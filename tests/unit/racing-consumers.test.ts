/**
 * The reload-and-retry of the order write, run by what really makes it run: two consumer
 * processes (each its own session cache) applying DIFFERENT entries of one order, one of them on a
 * stale or cold cache. The racing-delivery tests elsewhere deliver the same message twice, where the
 * entry's transaction record always loses first and these branches never run.
 */
import { createEmbeddedStore } from '../../local/store/document-store';
import { createOrderCache, type OrderCache } from '../../src/services/convoy/order-cache';
import { applyEntry, type ConsumerDeps } from '../../src/services/idempotent-consumer';
import {
  ORDER_HEADER_ID,
  ORDERS_CONTAINER,
  ORDERS_PARTITION_KEY_PATH,
  readOrderLines,
  readTransactionRecords,
  type OrderDocument,
} from '../../src/services/order-documents';
import type { DocumentContainer, FulfillmentInput } from '../../src/services/ports';
import { added, amended, created, deliveredEntry } from '../support/e2e';

const ignore = (): void => {};

interface Consumer {
  deps: ConsumerDeps;
  cache: OrderCache;
  started: FulfillmentInput[];
  failStart: boolean;
}

/** One consumer process: its own cache, the shared orders container. */
function consumer(orders: DocumentContainer): Consumer {
  const cache = createOrderCache();
  const self: Consumer = {
    cache,
    started: [],
    failStart: false,
    deps: {
      orders,
      sender: { send: async () => undefined },
      fulfillment: {
        start: async (input) => {
          if (self.failStart) throw new Error('fulfillment down');
          self.started.push(input);
        },
      },
      telemetry: { trace: ignore, event: ignore, metric: ignore },
      cache,
    },
  };
  return self;
}

function ordersContainer(): DocumentContainer {
  return createEmbeddedStore().container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH);
}

async function order(orders: DocumentContainer, orderId: string): Promise<OrderDocument | undefined> {
  return (await orders.read<OrderDocument>(orderId, ORDER_HEADER_ID))?.document;
}

/** The transactionIds the order's transaction records hold. */
async function recordIds(orders: DocumentContainer, orderId: string): Promise<string[]> {
  return (await readTransactionRecords(orders, orderId)).map((record) => record.transactionId).sort();
}

describe('two consumers with different entries of one order', () => {
  it('a stale cache loses the replace (412), reloads, and applies its entry on what the other wrote', async () => {
    const orders = ordersContainer();
    const a = consumer(orders);
    const b = consumer(orders);
    await applyEntry(a.deps, deliveredEntry(created('O-S', 'T-1')));
    // B saw the order at sequence 1 (its cache), then A moved it on to 2 behind B's back.
    const seen = await orders.read<OrderDocument>('O-S', ORDER_HEADER_ID);
    if (seen === undefined) throw new Error('order O-S not written');
    b.cache.set('O-S', seen);
    await applyEntry(a.deps, deliveredEntry(added('O-S', 'T-2', 2)));

    // On its stale copy B would buffer entry 3 (waiting for 2); after the 412 it sees 2 and applies.
    const outcome = await applyEntry(b.deps, deliveredEntry(added('O-S', 'T-3', 3)));
    expect(outcome).toEqual({ kind: 'applied', orderId: 'O-S', applied: 1, rejected: 0, submitted: false });
    const stored = await order(orders, 'O-S');
    expect(stored?.appliedSequence).toBe(3);
    expect(await recordIds(orders, 'O-S')).toEqual(['T-1', 'T-2', 'T-3']);
    expect(b.cache.get('O-S')?.document.appliedSequence).toBe(3);
  });

  it('a cold cache over an existing order loses the create (409), reloads, and applies its entry', async () => {
    const orders = ordersContainer();
    const a = consumer(orders);
    const b = consumer(orders);
    await applyEntry(a.deps, deliveredEntry(created('O-C', 'T-1')));

    // B has never seen O-C: it decides on a new order (entry 2 would wait for 1) and creates it.
    const outcome = await applyEntry(b.deps, deliveredEntry(added('O-C', 'T-2', 2)));
    expect(outcome).toEqual({ kind: 'applied', orderId: 'O-C', applied: 1, rejected: 0, submitted: false });
    const stored = await order(orders, 'O-C');
    expect(stored?.appliedSequence).toBe(2);
    expect(stored?.customerId).toBe('C-O-C');
    expect(await recordIds(orders, 'O-C')).toEqual(['T-1', 'T-2']);
  });

  it('a cold cache amends a line another consumer added: it reads the record of the line, then replaces it', async () => {
    const orders = ordersContainer();
    const a = consumer(orders);
    const b = consumer(orders);
    await applyEntry(a.deps, deliveredEntry(created('O-M', 'T-1')));
    await applyEntry(a.deps, deliveredEntry(added('O-M', 'T-2', 2, 2, 100)));

    const outcome = await applyEntry(b.deps, deliveredEntry(amended('O-M', 'T-3', 3, 'T-2', 5)));
    expect(outcome).toEqual({ kind: 'applied', orderId: 'O-M', applied: 1, rejected: 0, submitted: false });
    expect(await order(orders, 'O-M')).toMatchObject({ appliedSequence: 3, lineCount: 1, total: 500 });
    expect(await readOrderLines(orders, 'O-M')).toEqual([
      { transactionId: 'T-2', sku: 'SKU-T-2', quantity: 5, unitPrice: 100 },
    ]);
    // The first consumer's cached record of T-2 is stale now: its next amendment reloads and reads again.
    const again = await applyEntry(a.deps, deliveredEntry(amended('O-M', 'T-4', 4, 'T-2', 1)));
    expect(again).toMatchObject({ kind: 'applied', applied: 1 });
    expect(await order(orders, 'O-M')).toMatchObject({ appliedSequence: 4, total: 100 });
  });
});

describe('an entry committed before whose effect failed', () => {
  it('is a duplicate to a cold consumer (the 409 of its transaction record), which does the pending effect again', async () => {
    const orders = ordersContainer();
    const a = consumer(orders);
    const b = consumer(orders);
    const final = deliveredEntry(created('O-R', 'T-1', 1, true));
    a.failStart = true;
    // A commits the order and its marker, then the saga start fails: the message is tried again.
    await expect(applyEntry(a.deps, final)).rejects.toThrow('fulfillment down');
    expect((await order(orders, 'O-R'))?.outbox?.startFulfillment?.orderId).toBe('O-R');

    // The redelivery lands on B, whose cache is cold: its batch finds the marker taken.
    const outcome = await applyEntry(b.deps, final);
    expect(outcome).toEqual({ kind: 'duplicate', orderId: 'O-R' });
    expect(b.started.map((s) => s.orderId)).toEqual(['O-R']);
  });
});
