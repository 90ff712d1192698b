/** The consumer's cache of orders and their last records (src/services/convoy/order-cache.ts). */
import { CACHED_RECORDS_PER_ORDER, createOrderCache } from '../../src/services/convoy/order-cache';
import type { OrderDocument, TransactionDocument } from '../../src/services/order-documents';
import type { Stored } from '../../src/services/ports';

const header = (orderId: string, etag = 'e1'): Stored<OrderDocument> => ({
  document: {
    id: orderId,
    kind: 'order',
    orderId,
    status: 'open',
    customerId: 'C',
    currency: 'EUR',
    lineCount: 0,
    total: 0,
    appliedSequence: 1,
    finalSequence: null,
    buffered: [],
    correlationId: null,
    outbox: null,
  },
  etag,
});

const record = (orderId: string, transactionId: string, etag = 'r1'): Stored<TransactionDocument> => ({
  document: {
    id: `txn:${transactionId}`,
    kind: 'transaction',
    orderId,
    slot: 1,
    transactionId,
    digest: 'd',
    sequence: 1,
    outcome: 'applied',
  },
  etag,
});

describe('the order cache', () => {
  it('gives back what was set, and nothing for an order never set or deleted', () => {
    const cache = createOrderCache();
    expect(cache.get('O-1')).toBeUndefined();
    cache.set('O-1', header('O-1'));
    expect(cache.get('O-1')).toEqual(header('O-1'));
    cache.set('O-1', header('O-1', 'e2'));
    expect(cache.get('O-1')?.etag).toBe('e2');
    cache.delete('O-1');
    expect(cache.get('O-1')).toBeUndefined();
  });

  it('forgets the least recently used order past its capacity; a get counts as a use', () => {
    const cache = createOrderCache(2);
    cache.set('O-1', header('O-1'));
    cache.set('O-2', header('O-2'));
    expect(cache.get('O-1')?.etag).toBe('e1');
    cache.set('O-3', header('O-3'));
    expect(cache.get('O-2')).toBeUndefined();
    expect(cache.get('O-1')).toBeDefined();
    expect(cache.get('O-3')).toBeDefined();
    // A set of a cached order is a use too, and does not count it twice.
    cache.set('O-1', header('O-1', 'e2'));
    cache.set('O-4', header('O-4'));
    expect(cache.get('O-3')).toBeUndefined();
    expect(cache.get('O-1')?.etag).toBe('e2');
    expect(cache.get('O-4')).toBeDefined();
  });

  it('counts every get as a use, of the order used last too, and after a delete', () => {
    const cache = createOrderCache(2);
    cache.set('O-1', header('O-1'));
    cache.set('O-2', header('O-2'));
    cache.get('O-1');
    cache.get('O-1');
    cache.get('O-2');
    cache.set('O-3', header('O-3'));
    expect(cache.get('O-1')).toBeUndefined();
    expect(cache.get('O-2')).toBeDefined();
    cache.delete('O-3');
    cache.set('O-3', header('O-3'));
    cache.get('O-2');
    cache.set('O-4', header('O-4'));
    expect(cache.get('O-3')).toBeUndefined();
    expect(cache.get('O-2')).toBeDefined();
  });

  it('holds 10,000 orders by default', () => {
    const cache = createOrderCache();
    for (let i = 0; i <= 10_000; i++) cache.set(`O-${i}`, header(`O-${i}`));
    expect(cache.get('O-0')).toBeUndefined();
    expect(cache.get('O-1')).toBeDefined();
    expect(cache.get('O-10000')).toBeDefined();
  });

  it("keeps records only with a cached order, through the order's later sets", () => {
    const cache = createOrderCache();
    cache.remember('O-1', record('O-1', 'T-1'));
    expect(cache.record('O-1', 'T-1')).toBeUndefined();
    cache.set('O-1', header('O-1'));
    cache.remember('O-1', record('O-1', 'T-1'));
    expect(cache.record('O-1', 'T-1')).toEqual(record('O-1', 'T-1'));
    expect(cache.record('O-1', 'T-2')).toBeUndefined();
    expect(cache.record('O-2', 'T-1')).toBeUndefined();
    cache.set('O-1', header('O-1', 'e2'));
    expect(cache.record('O-1', 'T-1')?.etag).toBe('r1');
    cache.remember('O-1', record('O-1', 'T-1', 'r2'));
    expect(cache.record('O-1', 'T-1')?.etag).toBe('r2');
    cache.forgetRecords('O-1');
    expect(cache.record('O-1', 'T-1')).toBeUndefined();
    expect(cache.get('O-1')?.etag).toBe('e2');
    cache.forgetRecords('O-9');
    cache.delete('O-1');
    cache.set('O-1', header('O-1'));
    cache.remember('O-1', record('O-1', 'T-1'));
    cache.delete('O-1');
    cache.set('O-1', header('O-1'));
    expect(cache.record('O-1', 'T-1')).toBeUndefined();
  });

  it(`keeps the ${CACHED_RECORDS_PER_ORDER} records of an order remembered last; remembering again counts as new`, () => {
    expect(CACHED_RECORDS_PER_ORDER).toBe(16);
    const cache = createOrderCache();
    cache.set('O-1', header('O-1'));
    for (let i = 1; i <= CACHED_RECORDS_PER_ORDER; i++) cache.remember('O-1', record('O-1', `T-${i}`));
    cache.remember('O-1', record('O-1', 'T-1', 'r2'));
    cache.remember('O-1', record('O-1', 'T-17'));
    expect(cache.record('O-1', 'T-2')).toBeUndefined();
    expect(cache.record('O-1', 'T-1')?.etag).toBe('r2');
    for (let i = 3; i <= 17; i++) expect(cache.record('O-1', `T-${i}`)).toBeDefined();
  });
});
