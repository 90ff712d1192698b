/**
 * The reload-and-retry of the order write, run by what really makes it run: two consumer
 * processes (each its own session cache) applying DIFFERENT entries of one order, one of them on a
 * stale or cold cache. The racing-delivery tests elsewhere deliver the same message twice, where the
 * entry's transaction record always loses first and these branches never run.
 */
import { appOrdersContainer } from '../support/orders-container';
import { createOrderCache, type OrderCache } from '../../src/services/convoy/order-cache';
import { applyEntry, type ConsumerDeps } from '../../src/services/idempotent-consumer';
import { createEmbeddedStore } from '../../local/store/document-store';
import {
  ORDER_GAP_ID,
  ORDER_HEADER_ID,
  ORDERS_CONTAINER,
  ORDERS_PARTITION_KEY_PATH,
  readOrderLines,
  readOrderState,
  readTransactionRecords,
  type GapDocument,
  type OrderDocument,
} from '../../src/services/order-documents';
import type { BatchOperation, DocumentContainer, FulfillmentInput } from '../../src/services/ports';
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
  return appOrdersContainer();
}

async function order(orders: DocumentContainer, orderId: string): Promise<OrderDocument | undefined> {
  return readOrderState(orders, orderId);
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

/**
 * An entry that only takes the next slot writes its record alone, not the header
 * (docs/documents.md, "The header and the records"), so the header's etag no longer arbitrates two
 * writers of that slot: the orders container's unique key on `slot` does, and the gap document
 * keeps a writer who has not seen the buffer from taking the awaited slot alone. Two consumers of
 * one session after a lost lock, each on its own cache, race for real here (Promise.all on one
 * store).
 */
describe('two writers of one slot, without the header', () => {
  /** Both consumers have seen the order at its first entry, the header's etag unchanged since. */
  async function openedByBoth(orders: DocumentContainer): Promise<[Consumer, Consumer, string]> {
    const a = consumer(orders);
    const b = consumer(orders);
    await applyEntry(a.deps, deliveredEntry(created('O-U', 'T-1')));
    const seen = await orders.read<OrderDocument>('O-U', ORDER_HEADER_ID);
    if (seen === undefined) throw new Error('order O-U not written');
    b.cache.set('O-U', seen);
    return [a, b, seen.etag];
  }

  it.each([
    ['A first', false],
    ['B first', true],
  ])(
    'one transaction takes the slot, the other is parked sequence-conflict, and the header is not written (%s)',
    async (_order, bFirst) => {
      const orders = ordersContainer();
      const [a, b, etag] = await openedByBoth(orders);
      const fromA = () => applyEntry(a.deps, deliveredEntry(added('O-U', 'T-2A', 2, 1, 100)));
      const fromB = () => applyEntry(b.deps, deliveredEntry(added('O-U', 'T-2B', 2, 3, 100)));
      const outcomes = await Promise.all(bFirst ? [fromB(), fromA()] : [fromA(), fromB()]);
      const kinds = outcomes.map((outcome) => (outcome.kind === 'parked' ? outcome.reason : outcome.kind));
      expect(kinds.sort()).toEqual(['applied', 'sequence-conflict']);
      const ids = await recordIds(orders, 'O-U');
      expect(ids).toHaveLength(2);
      const winner = ids.find((id) => id !== 'T-1');
      expect(await order(orders, 'O-U')).toMatchObject({
        appliedSequence: 2,
        lineCount: 1,
        total: winner === 'T-2A' ? 100 : 300,
      });
      // Neither writer touched the header: the slot alone decided.
      expect((await orders.read('O-U', ORDER_HEADER_ID))?.etag).toBe(etag);
    },
  );

  it('without the unique key both would take the slot: the key is what arbitrates', async () => {
    const orders = createEmbeddedStore().container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH);
    const [a, b] = await openedByBoth(orders);
    const outcomes = await Promise.all([
      applyEntry(a.deps, deliveredEntry(added('O-U', 'T-2A', 2))),
      applyEntry(b.deps, deliveredEntry(added('O-U', 'T-2B', 2))),
    ]);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['applied', 'applied']);
    expect(await recordIds(orders, 'O-U')).toEqual(['T-1', 'T-2A', 'T-2B']);
  });

  it('a writer on a stale copy cannot buffer behind a slot another took alone: the gap document finds it', async () => {
    const orders = ordersContainer();
    const [a, b] = await openedByBoth(orders);
    await applyEntry(a.deps, deliveredEntry(added('O-U', 'T-2', 2)));
    // B still sees the order at 1: on that copy entry 3 would wait for 2, which is taken.
    const outcome = await applyEntry(b.deps, deliveredEntry(added('O-U', 'T-3', 3)));
    expect(outcome).toMatchObject({ kind: 'applied', applied: 1 });
    expect(await order(orders, 'O-U')).toMatchObject({ appliedSequence: 3, buffered: [], lineCount: 2 });
    expect(await orders.read('O-U', ORDER_GAP_ID)).toBeUndefined();
  });

  it('a writer that has not seen the buffer cannot take the awaited slot alone: it reloads and releases the buffer', async () => {
    const orders = ordersContainer();
    const [a, b] = await openedByBoth(orders);
    // B buffers entry 3; the gap document holds slot 2.
    expect(await applyEntry(b.deps, deliveredEntry(added('O-U', 'T-3', 3)))).toMatchObject({
      kind: 'buffered',
    });
    expect((await orders.read<GapDocument>('O-U', ORDER_GAP_ID))?.document.slot).toBe(2);
    // A, whose copy has no buffer, takes slot 2 and finds it held: it reads the order and releases 3.
    const outcome = await applyEntry(a.deps, deliveredEntry(added('O-U', 'T-2', 2)));
    expect(outcome).toMatchObject({ kind: 'applied', applied: 2 });
    expect(await order(orders, 'O-U')).toMatchObject({ appliedSequence: 3, buffered: [], lineCount: 2 });
    expect(await orders.read('O-U', ORDER_GAP_ID)).toBeUndefined();
  });

  it('without the gap document the buffer would be left releasable with no one to release it', async () => {
    // The same race on a store that turns the gap document's writes into reads of the header.
    const store = ordersContainer();
    const isGap = (operation: BatchOperation): boolean =>
      operation.op === 'delete' || operation.op === 'read'
        ? operation.id === ORDER_GAP_ID
        : operation.document.id === ORDER_GAP_ID;
    const withoutGap: DocumentContainer = {
      ...store,
      name: store.name,
      partitionKeyPath: store.partitionKeyPath,
      batch: (partitionKey, operations) =>
        store.batch(
          partitionKey,
          operations.map((operation) => (isGap(operation) ? { op: 'read', id: ORDER_HEADER_ID } : operation)),
        ),
    };
    const [a, b] = await openedByBoth(withoutGap);
    await applyEntry(b.deps, deliveredEntry(added('O-U', 'T-3', 3)));
    await applyEntry(a.deps, deliveredEntry(added('O-U', 'T-2', 2)));
    const stuck = await order(store, 'O-U');
    expect(stuck?.appliedSequence).toBe(2);
    expect(stuck?.buffered.map((waiting) => waiting.entry.sequence)).toEqual([3]);
  });
});
