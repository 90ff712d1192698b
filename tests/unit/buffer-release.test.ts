/**
 * Releasing a long buffer when its gap fills. Each released entry writes its transaction
 * record, and a Cosmos DB transactional batch holds at most 100 operations (the embedded store
 * refuses more, as Azure does), so the consumer releases what fits in one batch, writes it, and goes
 * on in further batches, each a consistent state; a crash between two batches leaves the rest
 * releasable, and any later delivery on the order, a duplicate included, goes on draining.
 */
import { appOrdersContainer } from '../support/orders-container';
import type { Entry } from '../../src/domain/entry';
import { MAX_RECORD_WRITES, releasable } from '../../src/domain/order';
import { createOrderCache } from '../../src/services/convoy/order-cache';
import { applyEntry, type ConsumerDeps } from '../../src/services/idempotent-consumer';
import {
  ORDER_HEADER_ID,
  readOrderLines,
  readTransactionRecords,
  type OrderDocument,
} from '../../src/services/order-documents';
import {
  MAX_BATCH_OPERATIONS,
  type BatchOperation,
  type DocumentContainer,
  type FulfillmentInput,
} from '../../src/services/ports';
import { added, amended, created, deliveredEntry } from '../support/e2e';

const ignore = (): void => {};
const BUFFERED = 160;

interface World {
  orders: DocumentContainer;
  deps: ConsumerDeps;
  started: FulfillmentInput[];
  batchSizes: number[];
  /** The value of every `entries.applied` metric, in order. */
  appliedMetrics: number[];
  /** Batches still allowed to commit; then the process "crashes" (every batch throws). */
  batchesLeft: number;
}

function world(): World {
  const inner = appOrdersContainer();
  const self: World = {
    orders: inner,
    deps: undefined as unknown as ConsumerDeps,
    started: [],
    batchSizes: [],
    appliedMetrics: [],
    batchesLeft: Number.POSITIVE_INFINITY,
  };
  const orders: DocumentContainer = {
    ...inner,
    name: inner.name,
    partitionKeyPath: inner.partitionKeyPath,
    create: (document) => inner.create(document),
    read: (partitionKey, id) => inner.read(partitionKey, id),
    replace: (document, options) => inner.replace(document, options),
    upsert: (document, options) => inner.upsert(document, options),
    delete: (partitionKey, id, options) => inner.delete(partitionKey, id, options),
    query: (spec) => inner.query(spec),
    async batch(partitionKey, operations: readonly BatchOperation[]) {
      if (self.batchesLeft <= 0) throw new Error('crashed');
      self.batchesLeft -= 1;
      self.batchSizes.push(operations.length);
      return inner.batch(partitionKey, operations);
    },
  };
  self.orders = orders;
  self.deps = {
    orders,
    sender: { send: async () => undefined },
    fulfillment: { start: async (input) => void self.started.push(input) },
    telemetry: {
      trace: ignore,
      event: ignore,
      metric: (name, value) => {
        if (name === 'entries.applied') self.appliedMetrics.push(value);
      },
    },
    cache: createOrderCache(),
  };
  return self;
}

/** An order whose entry 2 comes last: 3 to BUFFERED + 2 wait for it, the last one final; every
 * tenth entry amends the line before it. */
function longGap(orderId: string): { first: Entry; gap: Entry; buffered: Entry[] } {
  const buffered: Entry[] = [];
  const last = BUFFERED + 2;
  for (let sequence = 3; sequence <= last; sequence++) {
    buffered.push(
      sequence % 10 === 0
        ? amended(orderId, `T-${sequence}`, sequence, `T-${sequence - 1}`, 3, sequence === last)
        : added(orderId, `T-${sequence}`, sequence, 1, 10, sequence === last),
    );
  }
  return { first: created(orderId, 'T-1'), gap: added(orderId, 'T-2', 2, 1, 10), buffered };
}

async function header(w: World, orderId: string): Promise<OrderDocument> {
  const stored = await w.orders.read<OrderDocument>(orderId, ORDER_HEADER_ID);
  if (stored === undefined) throw new Error(`no order ${orderId}`);
  return stored.document;
}

/** The order as applying every entry once in sequence order leaves it. */
function expectedTotal(): number {
  let total = 10; // T-2
  for (let sequence = 3; sequence <= BUFFERED + 2; sequence++) total += sequence % 10 === 0 ? 20 : 10;
  return total;
}

describe('releasing more buffered entries than one batch can hold', () => {
  it('the domain bound keeps a release within a Cosmos batch (the header and its records)', () => {
    expect(MAX_RECORD_WRITES + 1).toBe(MAX_BATCH_OPERATIONS);
  });

  it(`releases ${BUFFERED} buffered entries in successive batches of at most 100 operations`, async () => {
    const w = world();
    const { first, gap, buffered } = longGap('O-G');
    await applyEntry(w.deps, deliveredEntry(first));
    for (const entry of buffered) await applyEntry(w.deps, deliveredEntry(entry));
    expect((await header(w, 'O-G')).buffered).toHaveLength(BUFFERED);

    w.batchSizes.length = 0;
    w.appliedMetrics.length = 0;
    const outcome = await applyEntry(w.deps, deliveredEntry(gap));
    expect(outcome).toMatchObject({ kind: 'applied', orderId: 'O-G' });
    expect(w.batchSizes.length).toBeGreaterThan(1);
    // One metric per batch, the first for the change, the others for the drain: every entry counted once.
    expect(w.appliedMetrics).toHaveLength(w.batchSizes.length);
    expect(w.appliedMetrics.reduce((sum, n) => sum + n, 0)).toBe(BUFFERED + 1);
    expect(Math.max(...w.batchSizes)).toBeLessThanOrEqual(MAX_BATCH_OPERATIONS);

    const done = await header(w, 'O-G');
    expect(done).toMatchObject({
      status: 'submitted',
      appliedSequence: BUFFERED + 2,
      finalSequence: BUFFERED + 2,
      buffered: [],
      total: expectedTotal(),
    });
    const records = await readTransactionRecords(w.orders, 'O-G');
    expect(records).toHaveLength(BUFFERED + 2);
    expect(records.filter((record) => record.outcome !== 'applied')).toEqual([]);
    const lines = await readOrderLines(w.orders, 'O-G');
    expect(lines).toHaveLength(done.lineCount);
    expect(lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0)).toBe(done.total);
    expect(w.started.map((input) => input.orderId)).toEqual(['O-G']);
  });

  it('after a crash between two batches, a duplicate delivery drains the rest; the order ends the same', async () => {
    const w = world();
    const { first, gap, buffered } = longGap('O-K');
    await applyEntry(w.deps, deliveredEntry(first));
    for (const entry of buffered) await applyEntry(w.deps, deliveredEntry(entry));

    // The gap's own batch commits, then the process dies before the next one.
    w.batchesLeft = 1;
    await expect(applyEntry(w.deps, deliveredEntry(gap))).rejects.toThrow('crashed');
    const between = await header(w, 'O-K');
    expect(releasable(between)).toBe(true);
    expect(between.buffered.length).toBeGreaterThan(0);
    expect(between.buffered.length).toBeLessThan(BUFFERED);
    // A consistent state: every slot taken has its record, the total is that of the lines.
    const lines = await readOrderLines(w.orders, 'O-K');
    expect(lines).toHaveLength(between.lineCount);
    expect(lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0)).toBe(between.total);
    expect(w.started).toEqual([]);

    // A new process (cold cache) gets the redelivery: a duplicate, and the buffer drains.
    w.batchesLeft = Number.POSITIVE_INFINITY;
    const fresh = { ...w.deps, cache: createOrderCache() };
    const outcome = await applyEntry(fresh, deliveredEntry(gap));
    expect(outcome).toEqual({ kind: 'duplicate', orderId: 'O-K' });
    expect(await header(w, 'O-K')).toMatchObject({
      status: 'submitted',
      appliedSequence: BUFFERED + 2,
      buffered: [],
      total: expectedTotal(),
    });
    expect(await readTransactionRecords(w.orders, 'O-K')).toHaveLength(BUFFERED + 2);
    expect(w.started.map((input) => input.orderId)).toEqual(['O-K']);
  });
});
