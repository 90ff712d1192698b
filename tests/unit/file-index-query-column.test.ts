/**
 * The file-mode store answers a query on a queried field from its codes of that field
 * (local/store/field-codes.ts): it reads the texts of only the documents that may match,
 * and answers exactly as the store with its texts in memory does, byte for byte (documents, their
 * order, `_etag`, `_ts`), across every way a document's text is written, replaced, deleted or expired.
 */
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedStore, type EmbeddedStore } from '../../local/store/document-store';
import { TextFile } from '../../local/store/text-file';
import { MAX_VALUES } from '../../local/store/field-codes';
import type { BatchOperation, Document, DocumentContainer, QuerySpec } from '../../src/services/ports';
import { LOOK_ALIKE_KEYS } from '../support/look-alike-keys';

let directory = '';
let open: EmbeddedStore[] = [];
let clock = 0;

beforeEach(() => {
  directory = fs.mkdtempSync(join(tmpdir(), 'query-column-test-'));
  open = [];
  clock = Date.UTC(2030, 0, 1);
});

afterEach(() => {
  jest.restoreAllMocks();
  for (const store of open) store.close();
  fs.rmSync(directory, { recursive: true, force: true });
});

/** Look-alike names that are identifiers, so a query may filter on them. */
const LOOK_ALIKE_FIELDS = LOOK_ALIKE_KEYS.filter((key) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(key));
const QUERIED = ['kind', 'status', ...LOOK_ALIKE_FIELDS];

function store(textFile: boolean): EmbeddedStore {
  const made = createEmbeddedStore({
    now: () => clock,
    textFile: textFile ? join(directory, `texts-${open.length}`) : undefined,
  });
  open.push(made);
  return made;
}

const container = (made: EmbeddedStore, defaultTtlSeconds?: number): DocumentContainer =>
  made.container('orders', '/orderId', { queriedFields: QUERIED, defaultTtlSeconds });

/** Counts the texts read from every text file, from now on. */
const countReads = (): jest.SpyInstance => jest.spyOn(TextFile.prototype, 'read');

/** The same container with its texts in memory and in a file, every call made on both. */
function twins(defaultTtlSeconds?: number) {
  const memory = container(store(false), defaultTtlSeconds);
  const file = container(store(true), defaultTtlSeconds);
  const both = async <R>(call: (target: DocumentContainer) => Promise<R>): Promise<R> => {
    const inMemory = await call(memory);
    const inFile = await call(file);
    expect(JSON.stringify(inFile)).toBe(JSON.stringify(inMemory));
    return inFile;
  };
  return { memory, file, both };
}

const KINDS: unknown[] = [
  'order',
  'transaction',
  'saga',
  'inbox',
  '',
  7,
  0,
  null,
  true,
  { kind: 'order' },
  undefined,
];

/** Every query on `kind` and on the look-alike fields, across partitions and in each one given. */
async function everyQuery(both: ReturnType<typeof twins>['both'], partitions: string[]): Promise<void> {
  const specs: QuerySpec[] = [{}];
  for (const kind of KINDS) {
    if (typeof kind === 'string' || typeof kind === 'number' || typeof kind === 'boolean') {
      specs.push({ where: { kind } });
    }
  }
  specs.push({ where: { kind: 'never written' } });
  specs.push({ where: { kind: undefined as unknown as string } });
  specs.push({ where: { kind: 'order', status: 'open' } });
  for (const field of LOOK_ALIKE_FIELDS) specs.push({ where: { [field]: `${field}-1` } });
  for (const spec of [...specs]) for (const partitionKey of partitions) specs.push({ ...spec, partitionKey });
  for (const spec of specs) await both((target) => target.query(spec));
}

const doc = (orderId: string, id: string, fields: Record<string, unknown>): Document =>
  ({ id, orderId, ...fields }) as Document;

describe('file mode: a query on a queried field reads only the texts that may match', () => {
  test('the report query reads the order documents only, and answers as memory mode', async () => {
    const { file, both } = twins();
    for (let order = 0; order < 5; order += 1) {
      const orderId = `o${order}`;
      await both((target) => target.create(doc(orderId, 'order', { kind: 'order', status: 'open' })));
      for (let entry = 0; entry < 10; entry += 1) {
        await both((target) => target.create(doc(orderId, `t${entry}`, { kind: 'transaction', n: entry })));
      }
    }
    const reads = countReads();
    const orders = await file.query({ where: { kind: 'order' } });
    expect(orders.map((stored) => stored.document.orderId)).toEqual(['o0', 'o1', 'o2', 'o3', 'o4']);
    expect(reads).toHaveBeenCalledTimes(5);
    reads.mockClear();
    expect(await file.query({ partitionKey: 'o3', where: { kind: 'transaction' } })).toHaveLength(10);
    expect(reads).toHaveBeenCalledTimes(10);
    reads.mockClear();
    expect(await file.query({ where: { kind: 'saga' } })).toEqual([]);
    expect(reads).not.toHaveBeenCalled();
    // A condition on a field that is not queried (the partition key) reads every text, as before.
    expect(await file.query({ where: { orderId: 'o1' } })).toHaveLength(11);
    expect(reads).toHaveBeenCalledTimes(55);
    await everyQuery(both, ['o0', 'o4', 'none']);
  });

  test('a value the codes cannot tell is read and decided by the parse', async () => {
    const { file, both } = twins();
    for (const [index, kind] of KINDS.entries()) {
      await both((target) => target.create(doc('o1', `k${index}`, { kind })));
    }
    await both((target) => target.create(new Proxy(doc('o1', 'proxy', { kind: 'order' }), {})));
    await both((target) => target.create(doc('o1', 'dated', { kind: new Date(0) })));
    const reads = countReads();
    // 'order': the string, and the values not known (7, 0, null, true, an object, a Proxy, a Date).
    expect((await file.query({ where: { kind: 'order' } })).map((s) => s.document.id)).toEqual([
      'k0',
      'proxy',
    ]);
    expect(reads).toHaveBeenCalledTimes(1 + 7);
    reads.mockClear();
    expect((await file.query({ where: { kind: new Date(0).toJSON() } })).map((s) => s.document.id)).toEqual([
      'dated',
    ]);
    expect(reads).toHaveBeenCalledTimes(7);
    reads.mockClear();
    expect((await file.query({ where: { kind: 7 } })).map((s) => s.document.id)).toEqual(['k5']);
    expect(reads).toHaveBeenCalledTimes(7);
    await everyQuery(both, ['o1']);
  });

  test('replace, upsert and delete keep the codes with the text, a changed kind included', async () => {
    const { file, both } = twins();
    await both((target) => target.create(doc('o1', 'a', { kind: 'order', status: 'open' })));
    await both((target) => target.create(doc('o1', 'b', { kind: 'transaction' })));
    await both((target) => target.replace(doc('o1', 'a', { kind: 'saga' })));
    await both((target) => target.upsert(doc('o1', 'b', { kind: 'order' })));
    await both((target) => target.upsert(doc('o2', 'c', { kind: 'order', status: 'open' })));
    await everyQuery(both, ['o1', 'o2']);
    await both((target) => target.replace(doc('o1', 'b', { kind: 5 })));
    await both((target) => target.upsert(doc('o2', 'c', { other: 'no kind' })));
    await everyQuery(both, ['o1', 'o2']);
    await both((target) => target.delete('o1', 'b'));
    const reads = countReads();
    expect(await file.query({ where: { kind: 'order' } })).toEqual([]);
    expect(reads).not.toHaveBeenCalled();
    await everyQuery(both, ['o1', 'o2']);
  });

  test("a slot given to another document keeps nothing of the last one's codes", async () => {
    const { file, both } = twins();
    for (let cycle = 0; cycle < 20; cycle += 1) {
      const kind = cycle % 2 === 0 ? 'order' : 'transaction';
      await both((target) => target.create(doc('o1', `d${cycle}`, { kind })));
      await both((target) => target.delete('o1', `d${cycle}`));
      await both((target) =>
        target.create(doc('o2', `e${cycle}`, { kind: cycle % 2 === 0 ? 'inbox' : 'saga' })),
      );
    }
    const reads = countReads();
    expect(await file.query({ where: { kind: 'order' } })).toEqual([]);
    expect(await file.query({ where: { kind: 'transaction' } })).toEqual([]);
    expect(reads).not.toHaveBeenCalled();
    expect(await file.query({ where: { kind: 'inbox' } })).toHaveLength(10);
    expect(reads).toHaveBeenCalledTimes(10);
    await everyQuery(both, ['o1', 'o2']);
  });

  test('a batch writes its codes on commit only; a failed batch changes none', async () => {
    const { file, both } = twins();
    await both((target) => target.create(doc('o1', 'a', { kind: 'order' })));
    await both((target) => target.create(doc('o1', 'gone', { kind: 'order' })));
    const operations: BatchOperation[] = [
      { op: 'replace', document: doc('o1', 'a', { kind: 'transaction' }) },
      { op: 'create', document: doc('o1', 'b', { kind: 'order' }) },
      { op: 'upsert', document: doc('o1', 'c', { kind: 'saga' }) },
      { op: 'upsert', document: doc('o1', 'b', { kind: 'inbox' }) },
      { op: 'delete', id: 'gone' },
      { op: 'read', id: 'a' },
    ];
    await both((target) => target.batch('o1', operations));
    await everyQuery(both, ['o1']);
    const failing: BatchOperation[] = [
      { op: 'replace', document: doc('o1', 'a', { kind: 'order' }) },
      { op: 'create', document: doc('o1', 'b', { kind: 'order' }) },
    ];
    expect((await both((target) => target.batch('o1', failing))).ok).toBe(false);
    const reads = countReads();
    expect(await file.query({ where: { kind: 'order' } })).toEqual([]);
    expect(reads).not.toHaveBeenCalled();
    await everyQuery(both, ['o1']);
  });

  test('expired documents are absent from the answers, as in memory mode', async () => {
    const { both } = twins(60);
    await both((target) => target.create(doc('o1', 'old', { kind: 'order' })));
    await both((target) => target.create(doc('o1', 'old-tx', { kind: 'transaction' })));
    await both((target) => target.create(doc('o1', 'forever', { kind: 'order', ttl: -1 })));
    clock += 30_000;
    await both((target) => target.create(doc('o2', 'young', { kind: 'order' })));
    clock += 31_000;
    await everyQuery(both, ['o1', 'o2']);
    // The expired ids again, with other kinds: their slots and rows go to the new documents.
    await both((target) => target.create(doc('o1', 'old', { kind: 'transaction' })));
    await both((target) => target.create(doc('o1', 'old-tx', { kind: 'order' })));
    await everyQuery(both, ['o1', 'o2']);
    clock += 120_000;
    await everyQuery(both, ['o1', 'o2']);
  });

  test('look-alike keys as queried fields hold their own values only', async () => {
    const { file, both } = twins();
    for (const [index, field] of LOOK_ALIKE_FIELDS.entries()) {
      await both((target) =>
        target.create(doc('o1', `own-${index}`, { [field]: `${field}-1`, kind: field })),
      );
      await both((target) => target.create(doc('o1', `other-${index}`, { [field]: `${field}-2` })));
    }
    await both((target) => target.create(doc('o1', 'none', { kind: 'order' })));
    const reads = countReads();
    for (const field of LOOK_ALIKE_FIELDS) {
      reads.mockClear();
      const found = await file.query({ where: { [field]: `${field}-1` } });
      expect(found.map((stored) => stored.document.kind)).toEqual([field]);
      expect(reads).toHaveBeenCalledTimes(1);
    }
    await everyQuery(both, ['o1']);
  });

  test('kinds past the table are read, and still answer as memory mode', async () => {
    const { file, both } = twins();
    const kinds = MAX_VALUES + 44;
    for (let index = 0; index < kinds; index += 1) {
      await both((target) => target.create(doc(`o${index % 7}`, `d${index}`, { kind: `kind-${index}` })));
    }
    const reads = countReads();
    const last = kinds - 1;
    expect((await file.query({ where: { kind: `kind-${last}` } })).map((s) => s.document.id)).toEqual([
      `d${last}`,
    ]);
    // The first MAX_VALUES kinds have codes; the last 44 are read for any kind asked for.
    expect(reads).toHaveBeenCalledTimes(44);
    reads.mockClear();
    expect((await file.query({ where: { kind: 'kind-3' } })).map((s) => s.document.id)).toEqual(['d3']);
    expect(reads).toHaveBeenCalledTimes(45);
    await everyQuery(both, ['o0', 'o6']);
  });
});
