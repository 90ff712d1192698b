/**
 * The embedded store beyond the shared contract (document-container.test.ts): `close()`, a batch's
 * results as copies of their own, many partitions of one container, ids and partition keys that
 * look alike or name Object.prototype members (kept in Maps: data like any other), and TTL.
 */
import { createEmbeddedStore, type EmbeddedStore } from '../../local/store/document-store';
import { LOOK_ALIKE_KEYS } from '../support/look-alike-keys';

let open: EmbeddedStore[] = [];

beforeEach(() => {
  open = [];
});

afterEach(() => {
  for (const store of open) store.close();
});

function newStore(options: { now?: () => number; latencyMs?: number } = {}): EmbeddedStore {
  const store = createEmbeddedStore(options);
  open.push(store);
  return store;
}

/** A document whose JSON text is about `bytes` long. */
const sized = (id: string, bytes: number, extra: Record<string, unknown> = {}) => ({
  id,
  orderId: 'o1',
  ...extra,
  pad: 'p'.repeat(Math.max(0, bytes - 40)),
});

describe('embedded store', () => {
  test('a batch writing one document twice keeps its last text; a create then delete leaves none', async () => {
    const orders = newStore().container('orders', '/orderId');
    await orders.create(sized('a', 200, { version: 1 }));
    const batch = await orders.batch('o1', [
      { op: 'replace', document: sized('a', 200, { version: 2 }) },
      { op: 'create', document: sized('gone', 200) },
      { op: 'replace', document: sized('a', 200, { version: 3 }) },
      { op: 'delete', id: 'gone' },
    ]);
    expect(batch.ok).toBe(true);
    expect(batch.results.map((result) => result.document?.version)).toEqual([2, undefined, 3, undefined]);
    await expect(orders.read('o1', 'a')).resolves.toMatchObject({ document: { version: 3 } });
    await expect(orders.read('o1', 'gone')).resolves.toBeUndefined();
  });

  test("a batch's results keep the document they were given after later writes", async () => {
    const orders = newStore().container('orders', '/orderId');
    await orders.create(sized('a', 200, { version: 1 }));
    const read = await orders.batch('o1', [{ op: 'read', id: 'a' }]);
    const written = await orders.batch('o1', [{ op: 'replace', document: sized('a', 200, { version: 2 }) }]);
    await orders.replace(sized('a', 200, { version: 3 }));
    await orders.delete('o1', 'a');
    for (const id of ['x', 'y', 'z']) await orders.create(sized(id, 200, { version: 9 }));
    expect(read.results[0].document).toMatchObject({ id: 'a', version: 1 });
    expect(written.results[0].document).toMatchObject({ id: 'a', version: 2 });
  });

  test('after close() every call rejects or throws; a second close does nothing', async () => {
    const store = newStore();
    const orders = store.container('orders', '/orderId');
    await orders.create(sized('a', 200));
    store.close();
    const closed = { code: 'store-closed' };
    await expect(orders.read('o1', 'a')).rejects.toMatchObject(closed);
    await expect(orders.create(sized('b', 200))).rejects.toMatchObject(closed);
    await expect(orders.replace(sized('a', 200))).rejects.toMatchObject(closed);
    await expect(orders.upsert(sized('a', 200))).rejects.toMatchObject(closed);
    await expect(orders.delete('o1', 'a')).rejects.toMatchObject(closed);
    await expect(orders.batch('o1', [{ op: 'read', id: 'a' }])).rejects.toMatchObject(closed);
    await expect(orders.query({})).rejects.toMatchObject(closed);
    expect(() => store.container('sagas', '/orderId')).toThrow(expect.objectContaining(closed));
    expect(() => store.close()).not.toThrow();
  });

  test('a call waiting out its latency when the store closes rejects', async () => {
    const store = newStore({ latencyMs: 5 });
    const orders = store.container('orders', '/orderId');
    const pending = orders.create(sized('a', 200));
    store.close();
    await expect(pending).rejects.toMatchObject({ code: 'store-closed' });
  });

  test('a multi-byte text is stored and read back as it was', async () => {
    const orders = newStore().container('orders', '/orderId');
    const note = 'Grüße, 注文 ✓ 🚚'.repeat(40);
    await orders.create({ id: 'a', orderId: 'o1', note });
    await orders.create({ id: 'b', orderId: 'o1', note: note.slice(0, 7) });
    await expect(orders.read('o1', 'a')).resolves.toMatchObject({ document: { note } });
    await expect(orders.read('o1', 'b')).resolves.toMatchObject({ document: { note: note.slice(0, 7) } });
  });

  test('1,000 partitions of one container: each reads, lists and queries only its own documents, after growth and deletes', async () => {
    const orders = newStore().container('orders', '/orderId');
    const partitions = 1000;
    for (let n = 0; n < partitions; n += 1) {
      const orderId = `O-${n}`;
      expect((await orders.create({ id: orderId, orderId, n })).status).toBe(201);
      expect((await orders.create({ id: `${orderId}-T1`, orderId, n })).status).toBe(201);
      // The same id in every partition: a document per partition, not one for the container.
      expect((await orders.create({ id: 'marker', orderId, n })).status).toBe(201);
      if (n % 2 === 0) expect((await orders.delete(orderId, `${orderId}-T1`)).status).toBe(204);
    }
    const wrong: number[] = [];
    for (let n = 0; n < partitions; n += 1) {
      const listed = await orders.query<{ id: string; n: number }>({ partitionKey: `O-${n}` });
      const ids = listed.map(({ document }) => document.id).sort();
      const expected = (n % 2 === 0 ? [`O-${n}`, 'marker'] : [`O-${n}`, `O-${n}-T1`, 'marker']).sort();
      const marker = await orders.read<{ id: string; n: number }>(`O-${n}`, 'marker');
      if (
        ids.join() !== expected.join() ||
        listed.some(({ document }) => document.n !== n) ||
        marker?.document.n !== n
      ) {
        wrong.push(n);
      }
    }
    expect(wrong).toEqual([]);
    expect(await orders.query({})).toHaveLength(partitions * 2 + partitions / 2);
    expect(await orders.query({ where: { n: 7 } })).toHaveLength(3);
    await expect(orders.query({ partitionKey: 'O-none' })).resolves.toEqual([]);
    await expect(orders.read('O-none', 'marker')).resolves.toBeUndefined();
  });

  test('ids and partition keys that look alike, are multi-byte or name Object.prototype are documents of their own', async () => {
    const orders = newStore().container('orders', '/orderId');
    const ids = [...LOOK_ALIKE_KEYS, 'toString', 'a', 'A', 'a '];
    const keys = ['__proto__', 'hasOwnProperty', 'k', 'K', 'ключ', '🔑'];
    for (const orderId of keys) {
      for (const id of ids)
        expect((await orders.create({ id, orderId, pair: `${orderId}|${id}` })).status).toBe(201);
    }
    for (const orderId of keys) {
      for (const id of ids) {
        await expect(orders.read(orderId, id)).resolves.toMatchObject({
          document: { id, orderId, pair: `${orderId}|${id}` },
        });
        expect((await orders.create({ id, orderId })).status).toBe(409);
      }
      const listed = await orders.query<{ id: string }>({ partitionKey: orderId });
      expect(listed.map(({ document }) => document.id).sort()).toEqual([...ids].sort());
    }
    expect(await orders.query({ partitionKey: 'KEY' })).toEqual([]);
    await expect(orders.read('k', 'À')).resolves.toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('pair');
  });

  test('an expired document is gone from reads, lists and queries; its neighbours in the partition stay', async () => {
    let clock = Date.UTC(2030, 0, 1);
    const orders = newStore({ now: () => clock }).container('inbox', '/orderId', { defaultTtlSeconds: -1 });
    await orders.create({ id: 'keeps', orderId: 'o1' });
    await orders.create({ id: 'short', orderId: 'o1', ttl: 60 });
    await orders.create({ id: 'long', orderId: 'o1', ttl: 600 });
    await orders.create({ id: 'other', orderId: 'o2', ttl: 60 });
    clock += 61_000;
    const listed = await orders.query<{ id: string }>({});
    expect(listed.map(({ document }) => document.id).sort()).toEqual(['keeps', 'long']);
    await expect(orders.read('o1', 'short')).resolves.toBeUndefined();
    expect((await orders.create({ id: 'short', orderId: 'o1' })).status).toBe(201);
    clock += 600_000;
    const left = await orders.query<{ id: string; ttl?: number }>({ partitionKey: 'o1' });
    expect(left.map(({ document }) => [document.id, document.ttl])).toEqual(
      expect.arrayContaining([
        ['keeps', undefined],
        ['short', undefined],
      ]),
    );
    expect(left).toHaveLength(2);
  });

  test.each([
    ['past 2106', Date.UTC(2200, 0, 1)],
    ['before 1970', Date.UTC(1960, 0, 1)],
  ])('a clock %s: _ts reads back as it was written, and ttl still expires', async (_, start) => {
    let clock = start;
    const orders = newStore({ now: () => clock }).container('orders', '/orderId', { defaultTtlSeconds: 60 });
    await orders.create({ id: 'a', orderId: 'o1' });
    await expect(orders.read('o1', 'a')).resolves.toMatchObject({
      document: { _ts: Math.floor(start / 1000) },
    });
    clock += 61_000;
    await expect(orders.read('o1', 'a')).resolves.toBeUndefined();
  });
});
