/**
 * The embedded store with `textFile`: what keeping the texts in a file must not change (the shared
 * contract runs on it too, in document-container.test.ts) and what it must bound: the file reuses
 * the slots of replaced, deleted and expired documents, a failed batch writes nothing, a batch's
 * results keep their own document, and `close()` ends it all.
 */
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedStore, type EmbeddedStore } from '../../local/store/document-store';
import type { DocumentContainer } from '../../src/services/ports';
import { LOOK_ALIKE_KEYS } from '../support/look-alike-keys';

let directory = '';
let open: EmbeddedStore[] = [];

beforeEach(() => {
  directory = fs.mkdtempSync(join(tmpdir(), 'store-file-test-'));
  open = [];
});

afterEach(() => {
  for (const store of open) store.close();
  fs.rmSync(directory, { recursive: true, force: true });
});

const textFile = (): string => join(directory, 'texts');

function fileStore(options: { now?: () => number } = {}): EmbeddedStore {
  const store = createEmbeddedStore({ ...options, textFile: textFile() });
  open.push(store);
  return store;
}

const fileSize = (): number => fs.statSync(textFile()).size;

/** A document whose JSON text is about `bytes` long. */
const sized = (id: string, bytes: number, extra: Record<string, unknown> = {}) => ({
  id,
  orderId: 'o1',
  ...extra,
  pad: 'p'.repeat(Math.max(0, bytes - 40)),
});

const readPad = async (orders: DocumentContainer, id: string): Promise<number | undefined> => {
  const stored = await orders.read<{ id: string; orderId: string; pad: string }>('o1', id);
  return stored?.document.pad.length;
};

describe('embedded store, texts in a file', () => {
  test('1,000 replaces of a growing and shrinking document keep the file to two slots per size class', async () => {
    const orders = fileStore().container('orders', '/orderId');
    await orders.create(sized('doc', 100));
    for (let round = 0; round < 1000; round += 1) {
      // 100 to 4,000 bytes and back: every class from 256 to 4,096 bytes, over and over.
      const bytes = 100 + Math.abs(((round * 97) % 7800) - 3900);
      expect((await orders.replace(sized('doc', bytes))).status).toBe(200);
      expect(await readPad(orders, 'doc')).toBe(Math.max(0, bytes - 40));
    }
    // A replaced document's text goes into a new slot before its old one is given back: two per class.
    expect(fileSize()).toBeLessThanOrEqual(2 * (256 + 512 + 1024 + 2048 + 4096));
  });

  test('1,000 create and delete cycles reuse one slot', async () => {
    const orders = fileStore().container('orders', '/orderId');
    for (let cycle = 0; cycle < 1000; cycle += 1) {
      expect((await orders.create(sized(`doc-${cycle}`, 200))).status).toBe(201);
      expect(await readPad(orders, `doc-${cycle}`)).toBe(160);
      expect((await orders.delete('o1', `doc-${cycle}`)).status).toBe(204);
    }
    expect(fileSize()).toBeLessThanOrEqual(256);
  });

  test('a failed batch writes nothing and gives no slot back', async () => {
    const orders = fileStore().container('orders', '/orderId');
    await orders.create(sized('a', 200, { version: 1 }));
    const before = fileSize();
    const failed = await orders.batch('o1', [
      { op: 'replace', document: sized('a', 3000, { version: 2 }) },
      { op: 'create', document: sized('b', 200) },
      { op: 'create', document: sized('a', 200) },
    ]);
    expect(failed.ok).toBe(false);
    expect(fileSize()).toBe(before);
    // Had the batch given a's slot back, this create would take it and a would read as c.
    await orders.create(sized('c', 200));
    await expect(orders.read('o1', 'a')).resolves.toMatchObject({ document: { id: 'a', version: 1 } });
    await expect(orders.read('o1', 'b')).resolves.toBeUndefined();
    await expect(orders.read('o1', 'c')).resolves.toMatchObject({ document: { id: 'c' } });
  });

  test('a batch writing one document twice writes its last text once; a create then delete writes none', async () => {
    const orders = fileStore().container('orders', '/orderId');
    await orders.create(sized('a', 200, { version: 1 }));
    const before = fileSize();
    const batch = await orders.batch('o1', [
      { op: 'replace', document: sized('a', 200, { version: 2 }) },
      { op: 'create', document: sized('gone', 200) },
      { op: 'replace', document: sized('a', 200, { version: 3 }) },
      { op: 'delete', id: 'gone' },
    ]);
    expect(batch.ok).toBe(true);
    expect(fileSize()).toBe(before + 256);
    expect(batch.results.map((result) => result.document?.version)).toEqual([2, undefined, 3, undefined]);
    await expect(orders.read('o1', 'a')).resolves.toMatchObject({ document: { version: 3 } });
    await expect(orders.read('o1', 'gone')).resolves.toBeUndefined();
    // a's first slot was given back, once: one more document fits without the file growing, not two.
    await orders.create(sized('b', 200));
    expect(fileSize()).toBe(before + 256);
    await orders.create(sized('c', 200, { version: 1 }));
    expect(fileSize()).toBe(before + 512);
  });

  test("an expired document's slot is reused", async () => {
    let clock = Date.UTC(2030, 0, 1);
    const store = fileStore({ now: () => clock });
    const orders = store.container('orders', '/orderId', { defaultTtlSeconds: 60 });
    await orders.create(sized('old', 200));
    const before = fileSize();
    clock += 61_000;
    await expect(orders.read('o1', 'old')).resolves.toBeUndefined();
    await orders.create(sized('new', 200));
    expect(fileSize()).toBe(before);
    expect(await readPad(orders, 'new')).toBe(160);
  });

  test("a batch's results keep the document they were given after its slot goes to other documents", async () => {
    const orders = fileStore().container('orders', '/orderId');
    await orders.create(sized('a', 200, { version: 1 }));
    const read = await orders.batch('o1', [{ op: 'read', id: 'a' }]);
    const written = await orders.batch('o1', [{ op: 'replace', document: sized('a', 200, { version: 2 }) }]);
    // Every slot of the class is given back and taken again, by other documents.
    await orders.replace(sized('a', 200, { version: 3 }));
    await orders.delete('o1', 'a');
    for (const id of ['x', 'y', 'z']) await orders.create(sized(id, 200, { version: 9 }));
    expect(read.results[0].document).toMatchObject({ id: 'a', version: 1 });
    expect(written.results[0].document).toMatchObject({ id: 'a', version: 2 });
  });

  test('close() deletes the file; every later call rejects or throws; a second close does nothing', async () => {
    const store = fileStore();
    const orders = store.container('orders', '/orderId');
    await orders.create(sized('a', 200));
    expect(fs.existsSync(textFile())).toBe(true);
    store.close();
    expect(fs.existsSync(textFile())).toBe(false);
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
    const store = createEmbeddedStore({ textFile: textFile(), latencyMs: 5 });
    open.push(store);
    const orders = store.container('orders', '/orderId');
    const pending = orders.create(sized('a', 200));
    store.close();
    await expect(pending).rejects.toMatchObject({ code: 'store-closed' });
  });

  test('a text file that exists already is refused, naming it', () => {
    fs.writeFileSync(textFile(), 'someone else’s');
    expect(() => createEmbeddedStore({ textFile: textFile() })).toThrow(
      expect.objectContaining({ code: 'store-file', message: expect.stringContaining(textFile()) }),
    );
    expect(fs.readFileSync(textFile(), 'utf8')).toBe('someone else’s');
  });

  test('texts in memory: no file is opened or written, and close() is harmless', async () => {
    const opened = jest.spyOn(fs, 'openSync');
    const written = jest.spyOn(fs, 'writeSync');
    try {
      const store = createEmbeddedStore();
      const orders = store.container('orders', '/orderId');
      await orders.create(sized('a', 200));
      await orders.replace(sized('a', 300));
      await orders.batch('o1', [{ op: 'create', document: sized('b', 200) }]);
      await expect(orders.read('o1', 'a')).resolves.toBeDefined();
      expect(opened).not.toHaveBeenCalled();
      expect(written).not.toHaveBeenCalled();
      store.close();
      store.close();
      await expect(orders.read('o1', 'a')).rejects.toMatchObject({ code: 'store-closed' });
      // The spies see what a store with a text file does.
      await fileStore().container('orders', '/orderId').create(sized('a', 200));
      expect(opened).toHaveBeenCalledTimes(1);
      expect(written).toHaveBeenCalledTimes(1);
    } finally {
      opened.mockRestore();
      written.mockRestore();
    }
  });

  test('a multi-byte text is stored and read back by its UTF-8 length', async () => {
    const orders = fileStore().container('orders', '/orderId');
    const note = 'Grüße, 注文 ✓ 🚚'.repeat(40);
    await orders.create({ id: 'a', orderId: 'o1', note });
    await orders.create({ id: 'b', orderId: 'o1', note: note.slice(0, 7) });
    await expect(orders.read('o1', 'a')).resolves.toMatchObject({ document: { note } });
    await expect(orders.read('o1', 'b')).resolves.toMatchObject({ document: { note: note.slice(0, 7) } });
  });

  test.each([10, 33, 100])(
    'a partition of %i documents: deletes at its head, middle and tail leave every survivor readable and listed',
    async (count) => {
      const orders = fileStore().container('orders', '/orderId');
      const alive = new Map<string, number>();
      for (let n = 0; n < count; n += 1) {
        await orders.create(sized(`d${n}`, 50 + n));
        alive.set(`d${n}`, 50 + n);
      }
      // Every third deleted (the first and the last rows among them), every other one replaced.
      for (let n = 0; n < count; n += 3) {
        expect((await orders.delete('o1', `d${n}`)).status).toBe(204);
        alive.delete(`d${n}`);
      }
      for (const [id, bytes] of [...alive].filter((_, index) => index % 2 === 0)) {
        expect((await orders.replace(sized(id, bytes + 300))).status).toBe(200);
        alive.set(id, bytes + 300);
      }
      await orders.create(sized('late', 60));
      alive.set('late', 60);
      await expect(orders.read('o1', 'd0')).resolves.toBeUndefined();
      await expect(orders.create(sized(`d${count - 1}`, 10))).resolves.toMatchObject({
        status: (count - 1) % 3 === 0 ? 201 : 409,
      });
      if ((count - 1) % 3 === 0) alive.set(`d${count - 1}`, 10);

      for (const [id, bytes] of alive) expect(await readPad(orders, id)).toBe(Math.max(0, bytes - 40));
      const listed = await orders.query<{ id: string }>({ partitionKey: 'o1' });
      expect(listed.map(({ document }) => document.id).sort()).toEqual([...alive.keys()].sort());
    },
  );

  test('1,000 partitions of one container: each reads, lists and queries only its own documents, after growth and deletes', async () => {
    const orders = fileStore().container('orders', '/orderId');
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
    const orders = fileStore().container('orders', '/orderId');
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
    const orders = fileStore({ now: () => clock }).container('inbox', '/orderId', { defaultTtlSeconds: -1 });
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
    const orders = fileStore({ now: () => clock }).container('orders', '/orderId', { defaultTtlSeconds: 60 });
    await orders.create({ id: 'a', orderId: 'o1' });
    await expect(orders.read('o1', 'a')).resolves.toMatchObject({
      document: { _ts: Math.floor(start / 1000) },
    });
    clock += 61_000;
    await expect(orders.read('o1', 'a')).resolves.toBeUndefined();
  });
});
