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
    query: unused,
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
      header(3),
      { document: header(1), etag: 'h1' },
      { created: record('T-3', 3), changed },
    );
    expect(outcome).toEqual({ kind: 'written' });
    expect(s.batches).toEqual([
      [
        { op: 'create', document: transactionDocument('O-1', record('T-3', 3)) },
        { op: 'replace', document: transactionDocument('O-1', changed[0]), ifMatch: 'r1' },
        { op: 'replace', document: transactionDocument('O-1', changed[1]) },
        { op: 'replace', document: header(3), ifMatch: 'h1' },
      ],
    ]);
    expect(Object.keys(s.batches[0][2])).not.toContain('ifMatch');
    expect(s.cache.get('O-1')).toEqual({ document: header(3), etag: 'h2' });
    expect(s.cache.record('O-1', 'T-1')?.etag).toBe('r1b');
    expect(s.cache.record('O-1', 'T-3')?.etag).toBe('r3');
    // A result without an etag leaves nothing to remember.
    expect(s.cache.record('O-1', 'T-2')).toBeUndefined();
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

  it("reloadOrder caches the stored header; another etag than the cached one voids the order's cached records", async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(1), etag: 'h1' });
    s.cache.remember('O-1', storedRecord('T-1', 1, 'r1'));
    s.stored.set(ORDER_HEADER_ID, { document: header(1), etag: 'h1' });
    expect(await reloadOrder(s.store, 'O-1')).toEqual({ document: header(1), etag: 'h1' });
    expect(s.cache.record('O-1', 'T-1')?.etag).toBe('r1');

    s.stored.set(ORDER_HEADER_ID, { document: header(2), etag: 'h2' });
    expect(await reloadOrder(s.store, 'O-1')).toEqual({ document: header(2), etag: 'h2' });
    expect(s.cache.get('O-1')).toEqual({ document: header(2), etag: 'h2' });
    expect(s.cache.record('O-1', 'T-1')).toBeUndefined();
    expect(s.reads).toEqual(['O-1/order', 'O-1/order']);
  });

  it('readOrder takes the cached header on the first attempt and reloads it on a later one', async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(1), etag: 'h1' });
    s.stored.set(ORDER_HEADER_ID, { document: header(2), etag: 'h2' });
    expect(await readOrder(s.store, 'O-1', 1)).toEqual({ document: header(1), etag: 'h1' });
    expect(s.reads).toEqual([]);
    expect(await readOrder(s.store, 'O-1', 2)).toEqual({ document: header(2), etag: 'h2' });
    expect(s.reads).toEqual(['O-1/order']);
    expect(s.cache.get('O-1')).toEqual({ document: header(2), etag: 'h2' });
  });

  it('reloadOrder forgets an order that is not stored', async () => {
    const s = scripted();
    s.cache.set('O-1', { document: header(1), etag: 'h1' });
    expect(await reloadOrder(s.store, 'O-1')).toBeUndefined();
    expect(s.cache.get('O-1')).toBeUndefined();
  });
});
