/**
 * The consumer's reads and writes of an order (src/services/convoy/order-store.ts), on a scripted
 * container: the batch it sends, what it makes of each result the store can give, and its reads.
 */
import { PermanentError } from '../../src/domain/errors';
import type { TransactionRecord } from '../../src/domain/order';
import { createOrderCache, type OrderCache } from '../../src/services/convoy/order-cache';
import {
  knownRecords,
  readOrder,
  readRecord,
  reloadOrder,
  writeOrderBatch,
  type OrderStore,
} from '../../src/services/convoy/order-store';
import {
  gapDocument,
  ORDER_GAP_ID,
  ORDER_HEADER_ID,
  transactionDocument,
  type OrderDocument,
  type TransactionDocument,
} from '../../src/services/order-documents';
import type {
  BatchOperation,
  BatchResult,
  Document,
  DocumentContainer,
  QuerySpec,
  Stored,
} from '../../src/services/ports';

interface Script {
  store: OrderStore;
  cache: OrderCache;
  batches: BatchOperation[][];
  reads: string[];
  /** What the next batch returns. */
  result: BatchResult;
  /** What a read finds, by id. */
  stored: Map<string, Stored>;
}

function scripted(): Script {
  const cache = createOrderCache();
  const self: Script = {
    cache,
    batches: [],
    reads: [],
    result: { ok: true, results: [] },
    stored: new Map(),
    store: undefined as unknown as OrderStore,
  };
  const unused = (): never => {
    throw new Error('not used by the order writes');
  };
  const orders: DocumentContainer = {
    name: 'orders',
    partitionKeyPath: '/orderId',
    create: unused,
    replace: unused,
    upsert: unused,
    delete: unused,
    // The records past the header's snapshot, as readRolledForward asks for them.
    query: async <T extends Document>(spec: QuerySpec) => {
      self.reads.push(`query ${JSON.stringify(spec)}`);
      const above = spec.above?.slot ?? -Infinity;
      return [...self.stored.values()].filter(
        ({ document }) =>
          (document as TransactionDocument).kind === 'transaction' &&
          (document as TransactionDocument).slot > above,
      ) as Array<Stored<T>>;
    },
    read: async <T extends Document>(partitionKey: string, id: string) => {
      self.reads.push(`${partitionKey}/${id}`);
      return self.stored.get(id) as Stored<T> | undefined;
    },
    batch: async (_partitionKey, operations) => {
      self.batches.push([...operations]);
      return self.result;
    },
  };
  self.store = { orders, cache };
  return self;
}

const header = (appliedSequence = 1): OrderDocument => ({
  id: ORDER_HEADER_ID,
  kind: 'order',
  orderId: 'O-1',
  status: 'open',
  customerId: 'C',
  currency: 'EUR',
  lineCount: 1,
  total: 100,
  appliedSequence,
  finalSequence: null,
  buffered: [],
  correlationId: null,
  outbox: null,
});

/** An entry of the order waiting in its buffer. */
const bufferedEntry = (sequence: number): OrderDocument['buffered'][number] => ({
  messageId: `M-${sequence}`,
  digest: `d-${sequence}`,
  entry: {
    transactionId: `T-${sequence}`,
    orderId: 'O-1',
    sequence,
    type: 'TransactionAdded',
    data: { sku: 'S', quantity: 1, unitPrice: 100 },
  },
  properties: {},
});

/** The order submitted by its final entry at this sequence: a status change, so the header is written. */
const submitted = (appliedSequence: number): OrderDocument => ({
  ...header(appliedSequence),
  status: 'submitted',
  finalSequence: appliedSequence,
});

const record = (transactionId: string, sequence: number, quantity = 1): TransactionRecord => ({
  transactionId,
  digest: `d-${transactionId}`,
  sequence,
  outcome: 'applied',
  line: { sku: 'S', quantity, unitPrice: 100 },
});

const storedRecord = (
  transactionId: string,
  sequence: number,
  etag: string,
): Stored<TransactionDocument> => ({
  document: transactionDocument('O-1', record(transactionId, sequence)),
  etag,
});

describe('writeOrderBatch', () => {
  it('creates the new record and the header of a new order, and caches both with their etags', async () => {
    const s = scripted();
    s.result = {
      ok: true,
      results: [
        { status: 201, etag: 'r1' },
        { status: 201, etag: 'h1' },
      ],
    };
    const outcome = await writeOrderBatch(s.store, header(), undefined, {
      created: record('T-1', 1),
      changed: [],
    });
    expect(outcome).toEqual({ kind: 'written' });
    expect(s.batches).toEqual([
      [
        { op: 'create', document: transactionDocument('O-1', record('T-1', 1)) },
        { op: 'create', document: header() },
      ],
    ]);
    expect(s.cache.get('O-1')).toEqual({ document: header(), etag: 'h1' });
    expect(s.cache.record('O-1', 'T-1')).toEqual({
      document: transactionDocument('O-1', record('T-1', 1)),
      etag: 'r1',
    });
  });

  it('replaces the changed records on the etag it has cached, without one where it has none, and the header on its etag', async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(1), etag: 'h1' });
    s.cache.remember('O-1', storedRecord('T-1', 1, 'r1'));
    s.result = {
      ok: true,
      results: [
        { status: 201, etag: 'r3' },
        { status: 200, etag: 'r1b' },
        { status: 200 },
        { status: 200, etag: 'h2' },
      ],
    };
    const changed = [record('T-1', 1, 5), record('T-2', 2, 7)];
    const outcome = await writeOrderBatch(
      s.store,
      submitted(3),
      { document: header(1), etag: 'h1' },
      { created: record('T-3', 3), changed },
    );
    expect(outcome).toEqual({ kind: 'written' });
    expect(s.batches).toEqual([
      [
        { op: 'create', document: transactionDocument('O-1', record('T-3', 3)) },
        { op: 'replace', document: transactionDocument('O-1', changed[0]), ifMatch: 'r1' },
        { op: 'replace', document: transactionDocument('O-1', changed[1]) },
        { op: 'replace', document: submitted(3), ifMatch: 'h1' },
      ],
    ]);
    expect(Object.keys(s.batches[0][2])).not.toContain('ifMatch');
    expect(s.cache.get('O-1')).toEqual({ document: submitted(3), etag: 'h2' });
    expect(s.cache.record('O-1', 'T-1')?.etag).toBe('r1b');
    expect(s.cache.record('O-1', 'T-3')?.etag).toBe('r3');
    // A result without an etag leaves nothing to remember.
    expect(s.cache.record('O-1', 'T-2')).toBeUndefined();
  });

  it("writes the entry's record alone, with the order's totals, when it only takes the next slot; the cache runs ahead under the header's etag", async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(1), etag: 'h1' });
    s.cache.remember('O-1', storedRecord('T-1', 1, 'r1'));
    s.result = {
      ok: true,
      results: [
        { status: 201, etag: 'r2' },
        { status: 200, etag: 'r1b' },
      ],
    };
    const after = { ...header(2), lineCount: 2, total: 700 };
    const outcome = await writeOrderBatch(
      s.store,
      after,
      { document: header(1), etag: 'h1' },
      {
        created: record('T-2', 2),
        changed: [record('T-1', 1, 5)],
      },
    );
    expect(outcome).toEqual({ kind: 'written' });
    expect(s.batches).toEqual([
      [
        {
          op: 'create',
          document: transactionDocument('O-1', record('T-2', 2), { lineCount: 2, total: 700 }),
        },
        { op: 'replace', document: transactionDocument('O-1', record('T-1', 1, 5)), ifMatch: 'r1' },
      ],
    ]);
    expect(s.cache.get('O-1')).toEqual({ document: after, etag: 'h1' });
    expect(s.cache.record('O-1', 'T-2')?.etag).toBe('r2');
  });

  it.each([
    ['a snapshot falls due', header(15), header(16)],
    ['the outbox changes', header(1), { ...header(2), outbox: { parks: [], startFulfillment: null } }],
    ['the correlation changes', header(1), { ...header(2), correlationId: 'c' }],
  ])('writes the header with the record when %s', async (_what, before, after) => {
    const s = scripted();
    s.result = {
      ok: true,
      results: [
        { status: 201, etag: 'r' },
        { status: 200, etag: 'h2' },
      ],
    };
    await writeOrderBatch(
      s.store,
      after,
      { document: before, etag: 'h1' },
      {
        created: record('T-X', after.appliedSequence),
        changed: [],
      },
    );
    expect(s.batches[0].map((operation) => operation.op)).toEqual(['create', 'replace']);
    expect(s.cache.get('O-1')?.etag).toBe('h2');
  });

  it('holds the awaited slot with the gap document while entries wait, moves it, and frees it first for the entry that fills it', async () => {
    const s = scripted();
    const buffering = { ...header(1), buffered: [bufferedEntry(3)] };
    s.result = {
      ok: true,
      results: [{ status: 201 }, { status: 201, etag: 'r3' }, { status: 200, etag: 'h2' }],
    };
    await writeOrderBatch(
      s.store,
      buffering,
      { document: header(1), etag: 'h1' },
      {
        created: { ...record('T-3', 3), outcome: 'buffered' },
        changed: [],
      },
    );
    expect(s.batches[0][0]).toEqual({ op: 'create', document: gapDocument('O-1', 2) });
    expect(gapDocument('O-1', 2)).toEqual({ id: ORDER_GAP_ID, kind: 'gap', orderId: 'O-1', slot: 2 });

    // Entry 2 fills the gap and releases 3; 5 still waits, now for 4.
    const moved = { ...header(3), buffered: [bufferedEntry(5)] };
    s.result = {
      ok: true,
      results: [{ status: 200 }, { status: 201 }, { status: 200 }, { status: 200, etag: 'h3' }],
    };
    await writeOrderBatch(
      s.store,
      moved,
      { document: { ...buffering, buffered: [bufferedEntry(3), bufferedEntry(5)] }, etag: 'h2' },
      {
        created: record('T-2', 2),
        changed: [record('T-3', 3)],
      },
    );
    expect(s.batches[1][0]).toEqual({ op: 'replace', document: gapDocument('O-1', 4) });

    s.result = {
      ok: true,
      results: [{ status: 204 }, { status: 201 }, { status: 200 }, { status: 200, etag: 'h4' }],
    };
    await writeOrderBatch(
      s.store,
      header(5),
      { document: moved, etag: 'h3' },
      {
        created: record('T-4', 4),
        changed: [record('T-5', 5)],
      },
    );
    expect(s.batches[2][0]).toEqual({ op: 'delete', id: ORDER_GAP_ID });
  });

  it.each([
    ['its create finds one there (409: a writer that had not seen the order move on)', [409, 424, 424]],
    ['its create finds the slot taken by a record (409 on the unique slot)', [409, 424, 424]],
  ])('loses the race when the gap document %s', async (_what, statuses) => {
    const s = scripted();
    s.result = { ok: false, results: statuses.map((status) => ({ status })) };
    const buffering = { ...header(1), buffered: [bufferedEntry(3)] };
    const outcome = await writeOrderBatch(
      s.store,
      buffering,
      { document: header(1), etag: 'h1' },
      {
        created: { ...record('T-3', 3), outcome: 'buffered' },
        changed: [],
      },
    );
    expect(outcome).toEqual({ kind: 'lost' });
    expect(s.batches[0][0]).toEqual({ op: 'create', document: gapDocument('O-1', 2) });
  });

  it('loses the race when the gap document it frees is gone (404)', async () => {
    const s = scripted();
    s.result = { ok: false, results: [{ status: 404 }, { status: 424 }, { status: 424 }, { status: 424 }] };
    const outcome = await writeOrderBatch(
      s.store,
      header(3),
      { document: { ...header(1), buffered: [bufferedEntry(3)] }, etag: 'h1' },
      { created: record('T-2', 2), changed: [record('T-3', 3)] },
    );
    expect(outcome).toEqual({ kind: 'lost' });
    expect(s.batches[0][0]).toEqual({ op: 'delete', id: ORDER_GAP_ID });
  });

  it('replaces records only, with no record created, when the change creates none', async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(1), etag: 'h1' });
    s.cache.remember('O-1', storedRecord('T-1', 1, 'r1'));
    s.result = {
      ok: true,
      results: [
        { status: 200, etag: 'r1b' },
        { status: 200, etag: 'h2' },
      ],
    };
    await writeOrderBatch(
      s.store,
      header(2),
      { document: header(1), etag: 'h1' },
      {
        created: null,
        changed: [record('T-1', 1, 5)],
      },
    );
    expect(s.batches[0]).toEqual([
      { op: 'replace', document: transactionDocument('O-1', record('T-1', 1, 5)), ifMatch: 'r1' },
      { op: 'replace', document: header(2), ifMatch: 'h1' },
    ]);
    expect(s.cache.get('O-1')?.etag).toBe('h2');
  });

  it('refuses a committed batch without the etag of the header, and caches nothing', async () => {
    const s = scripted();
    s.result = { ok: true, results: [{ status: 201, etag: 'r1' }, { status: 201 }] };
    const write = writeOrderBatch(s.store, header(), undefined, { created: record('T-1', 1), changed: [] });
    await expect(write).rejects.toThrow(PermanentError);
    await expect(write).rejects.toMatchObject({ code: 'missing-etag' });
    await expect(
      writeOrderBatch(s.store, header(), undefined, { created: record('T-1', 1), changed: [] }),
    ).rejects.toThrow('the batch for order O-1 returned no etag for the order');
    expect(s.cache.get('O-1')).toBeUndefined();
  });

  it("says the entry's record exists when its create gets 409, reading nothing (the consumer reads the record)", async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(1), etag: 'h1' });
    s.stored.set('txn:T-1', storedRecord('T-1', 1, 'r1'));
    s.result = { ok: false, results: [{ status: 409 }, { status: 424 }] };
    const outcome = await writeOrderBatch(s.store, header(), undefined, {
      created: record('T-1', 1),
      changed: [],
    });
    expect(outcome).toEqual({ kind: 'record-exists' });
    expect(s.reads).toEqual([]);
    expect(s.cache.get('O-1')).toEqual({ document: header(1), etag: 'h1' });
  });

  it.each([
    ['the header create (409: a cold cache over an existing order)', [424, 409]],
    ['the header replace (412: a stale cache)', [424, 412]],
    ['the header replace (404)', [424, 404]],
  ])('loses the race on %s, reading nothing', async (_what, statuses) => {
    const s = scripted();
    s.result = { ok: false, results: statuses.map((status) => ({ status })) };
    const outcome = await writeOrderBatch(s.store, header(), undefined, {
      created: record('T-2', 2),
      changed: [],
    });
    expect(outcome).toEqual({ kind: 'lost' });
    expect(s.reads).toEqual([]);
    expect(s.cache.get('O-1')).toBeUndefined();
  });

  it.each([
    ['a changed record replaced on a stale etag (412)', [412, 424], { kind: 'lost' }],
    ['a conflict on a changed record (409)', [409, 424], { kind: 'lost' }],
  ])('loses the race on %s', async (_what, statuses, expected) => {
    const s = scripted();
    s.result = { ok: false, results: statuses.map((status) => ({ status })) };
    const outcome = await writeOrderBatch(
      s.store,
      header(2),
      { document: header(1), etag: 'h1' },
      {
        created: null,
        changed: [record('T-1', 1, 5)],
      },
    );
    expect(outcome).toEqual(expected);
    expect(s.reads).toEqual([]);
  });

  it.each([
    ['a changed record that is gone (404)', [404, 424], '404, 424'],
    ['a status it does not know', [424, 500], '424, 500'],
    ['no failed operation', [424, 424], '424, 424'],
  ])('refuses %s, naming the statuses', async (_what, statuses, shown) => {
    const s = scripted();
    s.result = { ok: false, results: statuses.map((status) => ({ status })) };
    const write = writeOrderBatch(
      s.store,
      header(2),
      { document: header(1), etag: 'h1' },
      {
        created: null,
        changed: [record('T-1', 1, 5)],
      },
    );
    await expect(write).rejects.toThrow(
      new PermanentError('unexpected-batch-result', `batch for order O-1 failed with statuses ${shown}`),
    );
    await expect(write).rejects.toMatchObject({ code: 'unexpected-batch-result' });
    await expect(write).rejects.toThrow(PermanentError);
  });

  it('refuses a 404 on a record the change creates', async () => {
    const s = scripted();
    s.result = { ok: false, results: [{ status: 404 }, { status: 424 }] };
    await expect(
      writeOrderBatch(s.store, header(), undefined, { created: record('T-1', 1), changed: [] }),
    ).rejects.toThrow('batch for order O-1 failed with statuses 404, 424');
  });
});

describe('reading', () => {
  it('readRecord reads the record in the order partition and remembers it when found', async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(), etag: 'h1' });
    s.stored.set('txn:T-1', storedRecord('T-1', 1, 'r1'));
    expect(await readRecord(s.store, 'O-1', 'T-1')).toEqual(storedRecord('T-1', 1, 'r1'));
    expect(s.cache.record('O-1', 'T-1')?.etag).toBe('r1');
    expect(await readRecord(s.store, 'O-1', 'T-2')).toBeUndefined();
    expect(s.reads).toEqual(['O-1/txn:T-1', 'O-1/txn:T-2']);
  });

  it('knownRecords takes the cached records and reads the others, leaving out the absent ones', async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(), etag: 'h1' });
    s.cache.remember('O-1', storedRecord('T-1', 1, 'r1'));
    s.stored.set('txn:T-2', storedRecord('T-2', 2, 'r2'));
    const known = await knownRecords(s.store, 'O-1', ['T-1', 'T-2', 'T-3']);
    expect(known).toEqual(
      new Map([
        ['T-1', record('T-1', 1)],
        ['T-2', record('T-2', 2)],
      ]),
    );
    expect(s.reads.sort()).toEqual(['O-1/txn:T-2', 'O-1/txn:T-3']);
    expect(await knownRecords(s.store, 'O-1', [])).toEqual(new Map());
  });

  it("reloadOrder rolls the stored header forward over the records past it, caches that, and forgets the order's cached records", async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(1), etag: 'h1' });
    s.cache.remember('O-1', storedRecord('T-1', 1, 'r1'));
    s.stored.set(ORDER_HEADER_ID, { document: header(1), etag: 'h1' });
    expect(await reloadOrder(s.store, 'O-1')).toEqual({ document: header(1), etag: 'h1' });
    // Another writer may have replaced a record without touching the header: the cached ones go.
    expect(s.cache.record('O-1', 'T-1')).toBeUndefined();

    const two = transactionDocument('O-1', record('T-2', 2), { lineCount: 2, total: 200 });
    const three = transactionDocument('O-1', record('T-3', 3), { lineCount: 3, total: 300 });
    const five = transactionDocument('O-1', record('T-5', 5), { lineCount: 9, total: 900 });
    s.stored.set(two.id, { document: two, etag: 'r2' });
    s.stored.set(three.id, { document: three, etag: 'r3' });
    // After a missing slot, a record is not a taken slot of the order.
    s.stored.set(five.id, { document: five, etag: 'r5' });
    const rolled = { ...header(3), lineCount: 3, total: 300 };
    expect(await reloadOrder(s.store, 'O-1')).toEqual({ document: rolled, etag: 'h1' });
    expect(s.cache.get('O-1')).toEqual({ document: rolled, etag: 'h1' });
    expect(s.reads.filter((read) => !read.startsWith('query'))).toEqual(['O-1/order', 'O-1/order']);
  });

  it('readOrder takes the cached header on the first attempt and reloads it on a later one', async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(1), etag: 'h1' });
    s.stored.set(ORDER_HEADER_ID, { document: header(2), etag: 'h2' });
    expect(await readOrder(s.store, 'O-1', 1)).toEqual({ document: header(1), etag: 'h1' });
    expect(s.reads).toEqual([]);
    expect(await readOrder(s.store, 'O-1', 2)).toEqual({ document: header(2), etag: 'h2' });
    expect(s.reads[0]).toEqual('O-1/order');
    expect(s.cache.get('O-1')).toEqual({ document: header(2), etag: 'h2' });
  });

  it('reloadOrder forgets an order that is not stored', async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(1), etag: 'h1' });
    expect(await reloadOrder(s.store, 'O-1')).toBeUndefined();
    expect(s.cache.get('O-1')).toBeUndefined();
  });
});
