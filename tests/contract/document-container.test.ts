/**
 * One contract for the document store port (docs/architecture.md decision 4), run against every implementation:
 * the embedded container and the `@azure/cosmos` adapter
 * talking the real Cosmos REST protocol to `@vercel/cosmosdb-server` on 127.0.0.1. What that server
 * cannot do is skipped there, with the reason in the test name; the embedded store still runs those tests.
 */
import https from 'node:https';
import { join } from 'node:path';
import createServer from '@vercel/cosmosdb-server';
import { createCosmosClient, createCosmosContainer } from '../../src/adapters/azure/cosmos-store';
import { createEmbeddedStore } from '../../local/store/document-store';
import { PermanentError } from '../../src/domain/errors';
import { DocumentRefusedError, MAX_DOCUMENT_BYTES } from '../../src/adapters/document-rules';
import { MAX_BATCH_OPERATIONS } from '../../src/services/ports';
import { loadBundled } from '../support/bundled';
import type { BatchOperation, Document, DocumentContainer } from '../../src/services/ports';

interface ContractTarget {
  /** Partition key path `/orderId`, TTL disabled. */
  container: DocumentContainer;
  /** Partition key path `/orderId`, unique key `/slot` (the orders container's, src/adapters/indexing-policy.ts). */
  unique: DocumentContainer;
  /** Containers with TTL enabled and a clock the test moves; absent where TTL cannot be controlled. */
  ttl?: {
    container(name: string, defaultTtlSeconds: number): DocumentContainer;
    advance(milliseconds: number): void;
  };
  close?(): Promise<void>;
}

/** Features a target lacks, each with `<who>: <why>`, which goes into the skipped tests' names. */
type Gaps = Partial<Record<'atomic-batch' | 'ttl', string>>;

interface OrderLine extends Document {
  orderId: string;
  status?: string;
  quantity?: number;
  tag?: string;
  paid?: boolean;
}

function describeContract(name: string, makeTarget: () => Promise<ContractTarget>, gaps: Gaps = {}): void {
  describe(`DocumentContainer contract: ${name}`, () => {
    let target: ContractTarget | undefined;
    let sequence = 0;

    beforeAll(async () => {
      target = await makeTarget();
    });

    afterAll(async () => {
      await target?.close?.();
    });

    const store = (): DocumentContainer => {
      if (target === undefined) throw new Error('the target did not start');
      return target.container;
    };

    const ttlTarget = (): NonNullable<ContractTarget['ttl']> => {
      if (target?.ttl === undefined) throw new Error(`${name} offers no TTL container and does not skip TTL`);
      return target.ttl;
    };

    /** Every test works in partitions of its own, so tests sharing one container cannot see each other. */
    const newOrderId = (): string => {
      sequence += 1;
      return `order-${String(sequence).padStart(3, '0')}`;
    };

    /** A test this target cannot run is skipped with the reason in its name; every other target runs it. */
    const testUnless = (gap: keyof Gaps, title: string, fn: () => Promise<void>): void => {
      const reason = gaps[gap];
      if (reason === undefined) test(title, fn);
      else test.skip(`${title} (skipped on ${reason})`, fn);
    };

    test('create returns 201 and an etag, then 409 for the same id in the same partition', async () => {
      const orderId = newOrderId();
      const first = await store().create({ id: 'line-1', orderId, status: 'open' });
      expect(first.status).toBe(201);
      expect(first.status === 201 && first.etag).toEqual(expect.any(String));

      const again = await store().create({ id: 'line-1', orderId, status: 'changed' });
      expect(again).toEqual({ status: 409 });
      const stored = await store().read<OrderLine>(orderId, 'line-1');
      expect(stored?.document.status).toBe('open');
      expect(stored?.etag).toBe(first.status === 201 ? first.etag : 'no etag');
    });

    test('the same id in another partition is another document: 201', async () => {
      const [a, b] = [newOrderId(), newOrderId()];
      expect((await store().create({ id: 'same', orderId: a, status: 'in a' })).status).toBe(201);
      expect((await store().create({ id: 'same', orderId: b, status: 'in b' })).status).toBe(201);
      expect((await store().read<OrderLine>(a, 'same'))?.document.status).toBe('in a');
      expect((await store().read<OrderLine>(b, 'same'))?.document.status).toBe('in b');
    });

    test('read of a missing document is undefined', async () => {
      const orderId = newOrderId();
      await store().create({ id: 'present', orderId });
      await expect(store().read(orderId, 'absent')).resolves.toBeUndefined();
      await expect(store().read(newOrderId(), 'present')).resolves.toBeUndefined();
    });

    test('read returns the fields written plus _etag (equal to etag) and _ts, and no other system field', async () => {
      const orderId = newOrderId();
      const line = { id: 'line', orderId, status: 'open', quantity: 3, paid: false, nested: { a: [1, 'x'] } };
      const created = await store().create(line);
      const stored = await store().read<OrderLine>(orderId, 'line');
      if (stored === undefined || created.status !== 201) throw new Error('not stored');
      expect(stored.etag).toBe(created.etag);
      expect(stored.document).toEqual({ ...line, _etag: stored.etag, _ts: expect.any(Number) });
      expect(
        Object.keys(stored.document)
          .filter((key) => key.startsWith('_'))
          .sort(),
      ).toEqual(['_etag', '_ts']);
    });

    test('documents are copied in and out: changing them afterwards changes nothing stored', async () => {
      const orderId = newOrderId();
      const line = { id: 'line', orderId, status: 'open', items: ['a'] };
      await store().create(line);
      line.status = 'mutated';
      line.items.push('b');
      const first = await store().read<OrderLine>(orderId, 'line');
      if (first === undefined) throw new Error('not stored');
      first.document.status = 'mutated too';
      const second = await store().read<OrderLine>(orderId, 'line');
      expect(second?.document).toMatchObject({ status: 'open', items: ['a'] });
    });

    test('a document without a string partition key is refused as a permanent error', async () => {
      const missing = store().create({ id: 'no-key' });
      await expect(missing).rejects.toBeInstanceOf(PermanentError);
      await expect(missing).rejects.toMatchObject({ code: 'bad-partition-key' });
      await expect(store().upsert({ id: 'numeric-key', orderId: 42 })).rejects.toMatchObject({
        code: 'bad-partition-key',
      });
    });

    test('replace returns 200 with a new etag, and the stored document changes', async () => {
      const orderId = newOrderId();
      const created = await store().create({ id: 'line', orderId, status: 'open' });
      const replaced = await store().replace({ id: 'line', orderId, status: 'paid' });
      if (replaced.status !== 200 || created.status !== 201) throw new Error(`got ${replaced.status}`);
      expect(replaced.etag).not.toBe(created.etag);
      const stored = await store().read<OrderLine>(orderId, 'line');
      expect(stored?.document.status).toBe('paid');
      expect(stored?.etag).toBe(replaced.etag);
    });

    test('replace with the current etag succeeds; with a stale one it is 412 and changes nothing', async () => {
      const orderId = newOrderId();
      const created = await store().create({ id: 'line', orderId, status: 'open' });
      if (created.status !== 201) throw new Error('not created');
      const current = await store().replace(
        { id: 'line', orderId, status: 'paid' },
        { ifMatch: created.etag },
      );
      expect(current.status).toBe(200);

      const stale = await store().replace({ id: 'line', orderId, status: 'lost' }, { ifMatch: created.etag });
      expect(stale).toEqual({ status: 412 });
      expect((await store().read<OrderLine>(orderId, 'line'))?.document.status).toBe('paid');
    });

    test('replace of a missing document is 404 and creates nothing', async () => {
      const orderId = newOrderId();
      await expect(store().replace({ id: 'ghost', orderId })).resolves.toEqual({ status: 404 });
      await expect(store().read(orderId, 'ghost')).resolves.toBeUndefined();
    });

    test('upsert creates (201) then replaces (200, new etag)', async () => {
      const orderId = newOrderId();
      const created = await store().upsert({ id: 'line', orderId, status: 'open' });
      const replaced = await store().upsert({ id: 'line', orderId, status: 'paid' });
      if (created.status !== 201 || replaced.status !== 200) {
        throw new Error(`got ${created.status}, ${replaced.status}`);
      }
      expect(replaced.etag).not.toBe(created.etag);
      const stored = await store().read<OrderLine>(orderId, 'line');
      expect(stored?.document.status).toBe('paid');
      expect(stored?.etag).toBe(replaced.etag);
    });

    test('upsert with a stale etag is 412 and changes nothing; with the current one it is 200', async () => {
      const orderId = newOrderId();
      const created = await store().upsert({ id: 'line', orderId, status: 'open' });
      if (created.status !== 201) throw new Error('not created');
      await store().replace({ id: 'line', orderId, status: 'paid' });

      const stale = await store().upsert({ id: 'line', orderId, status: 'lost' }, { ifMatch: created.etag });
      expect(stale).toEqual({ status: 412 });
      expect((await store().read<OrderLine>(orderId, 'line'))?.document.status).toBe('paid');

      const stored = await store().read(orderId, 'line');
      const current = await store().upsert(
        { id: 'line', orderId, status: 'shipped' },
        { ifMatch: stored?.etag },
      );
      expect(current.status).toBe(200);
    });

    test('upsert with an etag of a missing document creates it, as Cosmos ignores ifMatch on create', async () => {
      const orderId = newOrderId();
      const result = await store().upsert(
        { id: 'line', orderId },
        { ifMatch: '"00000000-0000-0000-0000-00000000beef"' },
      );
      expect(result.status).toBe(201);
      await expect(store().read(orderId, 'line')).resolves.toBeDefined();
    });

    test('delete returns 204 and the document is gone; deleting again is 404', async () => {
      const orderId = newOrderId();
      await store().create({ id: 'line', orderId });
      await expect(store().delete(orderId, 'line')).resolves.toEqual({ status: 204 });
      await expect(store().read(orderId, 'line')).resolves.toBeUndefined();
      await expect(store().delete(orderId, 'line')).resolves.toEqual({ status: 404 });
    });

    test('delete with a stale etag is 412 and keeps the document; with the current one it is 204', async () => {
      const orderId = newOrderId();
      const created = await store().create({ id: 'line', orderId, status: 'open' });
      if (created.status !== 201) throw new Error('not created');
      const replaced = await store().replace({ id: 'line', orderId, status: 'paid' });
      if (replaced.status !== 200) throw new Error('not replaced');

      await expect(store().delete(orderId, 'line', { ifMatch: created.etag })).resolves.toEqual({
        status: 412,
      });
      expect((await store().read<OrderLine>(orderId, 'line'))?.document.status).toBe('paid');
      await expect(store().delete(orderId, 'line', { ifMatch: replaced.etag })).resolves.toEqual({
        status: 204,
      });
    });

    test('a successful batch reports each operation with its status, etag and document', async () => {
      const orderId = newOrderId();
      const order = await store().create({ id: 'order', orderId, status: 'open' });
      await store().create({ id: 'old-marker', orderId });
      if (order.status !== 201) throw new Error('not created');

      const result = await store().batch(orderId, [
        { op: 'create', document: { id: 'inbox:m1', orderId } },
        { op: 'replace', document: { id: 'order', orderId, status: 'paid' }, ifMatch: order.etag },
        { op: 'upsert', document: { id: 'saga', orderId, step: 1 } },
        { op: 'read', id: 'order' },
        { op: 'delete', id: 'old-marker' },
      ]);

      expect(result.ok).toBe(true);
      expect(result.results.map((r) => r.status)).toEqual([201, 200, 201, 200, 204]);
      const stored = await store().read<OrderLine>(orderId, 'order');
      expect(stored?.document.status).toBe('paid');
      expect(result.results[1]).toEqual({
        status: 200,
        etag: stored?.etag,
        document: { id: 'order', orderId, status: 'paid', _etag: stored?.etag, _ts: expect.any(Number) },
      });
      expect(result.results[3]?.document).toMatchObject({ id: 'order', status: 'paid' });
      expect(result.results[3]?.etag).toBe(stored?.etag);
      expect((await store().read(orderId, 'inbox:m1'))?.etag).toBe(result.results[0]?.etag);
      expect((await store().read(orderId, 'saga'))?.etag).toBe(result.results[2]?.etag);
      await expect(store().read(orderId, 'old-marker')).resolves.toBeUndefined();
    });

    testUnless(
      'atomic-batch',
      'batch is atomic: one 409 fails it, the others are 424 and nothing is written',
      async () => {
        const orderId = newOrderId();
        await store().create({ id: 'inbox:m1', orderId });
        await store().create({ id: 'order', orderId, status: 'open' });

        const result = await store().batch(orderId, [
          { op: 'create', document: { id: 'inbox:m2', orderId } },
          { op: 'replace', document: { id: 'order', orderId, status: 'paid' } },
          { op: 'create', document: { id: 'inbox:m1', orderId } },
        ]);

        expect(result.ok).toBe(false);
        expect(result.results.map((r) => r.status)).toEqual([424, 424, 409]);
        await expect(store().read(orderId, 'inbox:m2')).resolves.toBeUndefined();
        expect((await store().read<OrderLine>(orderId, 'order'))?.document.status).toBe('open');
      },
    );

    test('a batch with a stale etag fails with 412, the others 424, and writes nothing', async () => {
      const orderId = newOrderId();
      const order = await store().create({ id: 'order', orderId, status: 'open' });
      if (order.status !== 201) throw new Error('not created');
      await store().replace({ id: 'order', orderId, status: 'paid' });

      const result = await store().batch(orderId, [
        { op: 'replace', document: { id: 'order', orderId, status: 'lost' }, ifMatch: order.etag },
        { op: 'create', document: { id: 'inbox:m1', orderId } },
      ]);

      expect(result.ok).toBe(false);
      expect(result.results.map((r) => r.status)).toEqual([412, 424]);
      expect((await store().read<OrderLine>(orderId, 'order'))?.document.status).toBe('paid');
      await expect(store().read(orderId, 'inbox:m1')).resolves.toBeUndefined();
    });

    test('a batch delete with a stale etag fails with 412 and keeps the document', async () => {
      const orderId = newOrderId();
      const marker = await store().create({ id: 'marker', orderId, status: 'v1' });
      if (marker.status !== 201) throw new Error('not created');
      await store().replace({ id: 'marker', orderId, status: 'v2' });

      const result = await store().batch(orderId, [{ op: 'delete', id: 'marker', ifMatch: marker.etag }]);
      expect(result).toEqual({ ok: false, results: [{ status: 412 }] });
      expect((await store().read<OrderLine>(orderId, 'marker'))?.document.status).toBe('v2');
    });

    test(`a batch of ${MAX_BATCH_OPERATIONS} operations is accepted`, async () => {
      const orderId = newOrderId();
      const operations: BatchOperation[] = Array.from({ length: MAX_BATCH_OPERATIONS }, (_, index) => ({
        op: 'create',
        document: { id: `line-${index}`, orderId },
      }));
      const result = await store().batch(orderId, operations);
      expect(result.ok).toBe(true);
      expect(result.results).toHaveLength(MAX_BATCH_OPERATIONS);
      expect(await store().query({ partitionKey: orderId })).toHaveLength(MAX_BATCH_OPERATIONS);
    });

    test(`a batch of more than ${MAX_BATCH_OPERATIONS} operations is refused and writes nothing`, async () => {
      const orderId = newOrderId();
      const operations: BatchOperation[] = Array.from({ length: MAX_BATCH_OPERATIONS + 1 }, (_, index) => ({
        op: 'create',
        document: { id: `line-${index}`, orderId },
      }));
      const refused = store().batch(orderId, operations);
      await expect(refused).rejects.toBeInstanceOf(PermanentError);
      await expect(refused).rejects.toMatchObject({ code: 'batch-too-large' });
      await expect(store().query({ partitionKey: orderId })).resolves.toEqual([]);
    });

    test('an id over 255 characters or with / \\ ? # is refused with 400 before anything is sent', async () => {
      const orderId = newOrderId();
      for (const id of ['x'.repeat(256), 'a/b', 'a\\b', 'a?b', 'a#b']) {
        const refused = store().create({ id, orderId });
        await expect(refused).rejects.toBeInstanceOf(DocumentRefusedError);
        await expect(refused).rejects.toMatchObject({ code: 'bad-id', statusCode: 400 });
        await expect(store().read(orderId, id)).rejects.toMatchObject({ statusCode: 400 });
      }
      await expect(store().create({ id: 'x'.repeat(255), orderId })).resolves.toMatchObject({ status: 201 });
    });

    test('an item over 2 MB is refused with 413, and a batch over 2 MB in all, writing nothing', async () => {
      const orderId = newOrderId();
      const big = (id: string, bytes: number): OrderLine => ({ id, orderId, tag: 'x'.repeat(bytes) });
      const refused = store().create(big('huge', MAX_DOCUMENT_BYTES));
      await expect(refused).rejects.toMatchObject({ code: 'document-too-large', statusCode: 413 });
      const batch = store().batch(orderId, [
        { op: 'create', document: big('half-1', MAX_DOCUMENT_BYTES / 2) },
        { op: 'create', document: big('half-2', MAX_DOCUMENT_BYTES / 2) },
      ]);
      await expect(batch).rejects.toMatchObject({ code: 'batch-too-large', statusCode: 413 });
      await expect(store().query({ partitionKey: orderId })).resolves.toEqual([]);
    });

    test('an item is measured in the bytes of its UTF-8 JSON, escapes included: 2 MB of them is refused with 413, whatever its characters', async () => {
      const orderId = newOrderId();
      // JSON writes U+0001 as \u0001: 6 bytes for one UTF-16 unit. About 350,000 of them are 2 MB.
      const escaped = (id: string, units: number): OrderLine => ({
        id,
        orderId,
        tag: '\u0001'.repeat(units),
      });
      const overhead = Buffer.byteLength(JSON.stringify(escaped('e', 0)), 'utf8');
      const fits = Math.floor((MAX_DOCUMENT_BYTES - overhead) / 6);
      await expect(store().create(escaped('e', fits))).resolves.toMatchObject({ status: 201 });
      await expect(store().create(escaped('f', fits + 1))).rejects.toMatchObject({
        code: 'document-too-large',
        statusCode: 413,
      });
      // Three UTF-8 bytes a unit, and four a surrogate pair: the same limit.
      const wide = Math.floor((MAX_DOCUMENT_BYTES - overhead) / 3) + 1;
      await expect(store().create({ id: 'g', orderId, tag: '€'.repeat(wide) })).rejects.toMatchObject({
        statusCode: 413,
      });
      expect((await store().read<OrderLine>(orderId, 'e'))?.document.tag).toHaveLength(fits);
      await expect(store().read(orderId, 'f')).resolves.toBeUndefined();
    });

    test('a batch holding a document of another partition is refused and writes nothing', async () => {
      const [orderId, other] = [newOrderId(), newOrderId()];
      const refused = store().batch(orderId, [
        { op: 'create', document: { id: 'mine', orderId } },
        { op: 'create', document: { id: 'theirs', orderId: other } },
      ]);
      await expect(refused).rejects.toMatchObject({ code: 'partition-mismatch' });
      await expect(store().read(orderId, 'mine')).resolves.toBeUndefined();
    });

    test('query within a partition returns its documents matching where, sorted by id', async () => {
      const [orderId, other] = [newOrderId(), newOrderId()];
      await store().create({ id: 'c', orderId, status: 'open', quantity: 1 });
      await store().create({ id: 'a', orderId, status: 'open', quantity: 2 });
      await store().create({ id: 'b', orderId, status: 'shipped', quantity: 2 });
      await store().create({ id: 'a', orderId: other, status: 'open', quantity: 2 });

      const all = await store().query<OrderLine>({ partitionKey: orderId });
      expect(all.map((s) => s.document.id)).toEqual(['a', 'b', 'c']);
      expect(all.every((s) => s.etag === s.document._etag)).toBe(true);

      const open = await store().query<OrderLine>({ partitionKey: orderId, where: { status: 'open' } });
      expect(open.map((s) => s.document.id)).toEqual(['a', 'c']);
      const openPairs = await store().query<OrderLine>({
        partitionKey: orderId,
        where: { status: 'open', quantity: 2 },
      });
      expect(openPairs.map((s) => [s.document.orderId, s.document.id])).toEqual([[orderId, 'a']]);
    });

    test('query across partitions filters by where and sorts by partition key, then id', async () => {
      const [first, second, third] = [newOrderId(), newOrderId(), newOrderId()];
      const tag = `tag-${first}`;
      await store().create({ id: 'z', orderId: third, tag, paid: true });
      await store().create({ id: 'y', orderId: first, tag, paid: true });
      await store().create({ id: 'x', orderId: first, tag, paid: true });
      await store().create({ id: 'w', orderId: second, tag, paid: false });
      await store().create({ id: 'v', orderId: second, tag: 'another tag', paid: true });

      const paid = await store().query<OrderLine>({ where: { tag, paid: true } });
      expect(paid.map((s) => [s.document.orderId, s.document.id])).toEqual([
        [first, 'x'],
        [first, 'y'],
        [third, 'z'],
      ]);
    });

    test('query refuses a field name that is not an identifier', async () => {
      await expect(store().query({ where: { 'status = status OR 1': 1 } })).rejects.toMatchObject({
        code: 'bad-query',
      });
    });

    testUnless(
      'ttl',
      'a document expires ttl seconds after its last write, then is absent everywhere',
      async () => {
        const { advance } = ttlTarget();
        const container = ttlTarget().container('ttl-enabled', -1);
        const orderId = newOrderId();
        await container.create({ id: 'marker', orderId, ttl: 10 });
        await container.create({ id: 'order', orderId });

        advance(8_000);
        await container.replace({ id: 'marker', orderId, ttl: 10, seen: 2 });
        advance(9_999);
        expect(await container.read(orderId, 'marker')).toBeDefined();

        advance(1);
        await expect(container.read(orderId, 'marker')).resolves.toBeUndefined();
        expect((await container.query({ partitionKey: orderId })).map((s) => s.document.id)).toEqual([
          'order',
        ]);
        await expect(container.replace({ id: 'marker', orderId })).resolves.toEqual({ status: 404 });
        await expect(container.delete(orderId, 'marker')).resolves.toEqual({ status: 404 });
        const batch = await container.batch(orderId, [{ op: 'read', id: 'marker' }]);
        expect(batch).toEqual({ ok: false, results: [{ status: 404 }] });
        await expect(container.create({ id: 'marker', orderId, ttl: 10 })).resolves.toMatchObject({
          status: 201,
        });

        advance(365 * 24 * 3600 * 1000);
        expect(await container.read(orderId, 'order')).toBeDefined();
      },
    );

    testUnless(
      'ttl',
      'the container default ttl applies unless the document sets its own (-1: never)',
      async () => {
        const { advance } = ttlTarget();
        const container = ttlTarget().container('ttl-default-60', 60);
        const orderId = newOrderId();
        await container.create({ id: 'default', orderId });
        await container.create({ id: 'longer', orderId, ttl: 120 });
        await container.create({ id: 'forever', orderId, ttl: -1 });

        advance(60_000);
        const left = await container.query({ partitionKey: orderId });
        expect(left.map((s) => s.document.id)).toEqual(['forever', 'longer']);
        advance(60_000);
        expect((await container.query({})).map((s) => s.document.id)).toEqual(['forever']);
      },
    );

    testUnless('ttl', 'without TTL enabled on the container a document ttl is ignored', async () => {
      const { advance } = ttlTarget();
      const orderId = newOrderId();
      await store().create({ id: 'marker', orderId, ttl: 1 });
      advance(3_600_000);
      expect(await store().read(orderId, 'marker')).toBeDefined();
    });

    describe('a unique key', () => {
      const slotted = (): DocumentContainer => {
        if (target === undefined) throw new Error('the target did not start');
        return target.unique;
      };

      it('refuses a second document of a partition with the same value (409), in a batch too, and allows it in another partition', async () => {
        const orderId = newOrderId();
        expect((await slotted().create({ id: 'a', orderId, slot: 2 })).status).toBe(201);
        expect((await slotted().create({ id: 'b', orderId, slot: 2 })).status).toBe(409);
        const batch = await slotted().batch(orderId, [
          { op: 'create', document: { id: 'c', orderId, slot: 3 } },
          { op: 'create', document: { id: 'd', orderId, slot: 2 } },
        ]);
        expect(batch.ok).toBe(false);
        expect(batch.results[1].status).toBe(409);
        expect((await slotted().create({ id: 'b', orderId: newOrderId(), slot: 2 })).status).toBe(201);
        expect((await slotted().create({ id: 'e', orderId, slot: 'order' })).status).toBe(201);
      });

      it('refuses a replace onto a value another document holds, and counts a missing value as null', async () => {
        const orderId = newOrderId();
        await slotted().create({ id: 'a', orderId, slot: 1 });
        await slotted().create({ id: 'b', orderId, slot: 2 });
        const onto = await slotted().batch(orderId, [
          { op: 'replace', document: { id: 'b', orderId, slot: 1 } },
        ]);
        expect(onto.results[0].status).toBe(409);
        expect((await slotted().replace({ id: 'b', orderId, slot: 5 })).status).toBe(200);
        expect((await slotted().create({ id: 'x', orderId })).status).toBe(201);
        expect((await slotted().create({ id: 'y', orderId })).status).toBe(409);
      });

      it('lets a batch free a value and take it again in its order (the gap document moved before the record)', async () => {
        const orderId = newOrderId();
        await slotted().create({ id: 'gap', orderId, slot: 2 });
        const batch = await slotted().batch(orderId, [
          { op: 'delete', id: 'gap' },
          { op: 'create', document: { id: 'txn:T-2', orderId, slot: 2 } },
        ]);
        expect(batch.ok).toBe(true);
        await slotted().create({ id: 'gap', orderId, slot: 4 });
        const moved = await slotted().batch(orderId, [
          { op: 'replace', document: { id: 'gap', orderId, slot: 6 } },
          { op: 'create', document: { id: 'txn:T-4', orderId, slot: 4 } },
        ]);
        expect(moved.ok).toBe(true);
      });

      it('is queried above a number, leaving out the text values', async () => {
        const orderId = newOrderId();
        await slotted().create({ id: 'h', orderId, slot: 'order', kind: 'order' });
        for (const slot of [1, 2, 3]) await slotted().create({ id: `t${slot}`, orderId, slot, kind: 'txn' });
        const above = await slotted().query({
          partitionKey: orderId,
          where: { kind: 'txn' },
          above: { slot: 1 },
        });
        expect(above.map(({ document }) => document.id).sort()).toEqual(['t2', 't3']);
        const all = await slotted().query({ partitionKey: orderId, above: { slot: 0 } });
        expect(all.map(({ document }) => document.id).sort()).toEqual(['t1', 't2', 't3']);
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------

async function embeddedTarget(): Promise<ContractTarget> {
  // A whole second, so `_ts` (seconds) and the clock agree and expiry falls exactly on the boundary.
  let clock = Date.UTC(2030, 0, 1);
  const embedded = createEmbeddedStore({ now: () => clock });
  return {
    close: async () => embedded.close(),
    container: embedded.container('orders', '/orderId'),
    unique: embedded.container('slotted', '/orderId', { uniqueKeys: ['slot'] }),
    ttl: {
      container: (name, defaultTtlSeconds) => embedded.container(name, '/orderId', { defaultTtlSeconds }),
      advance: (milliseconds) => {
        clock += milliseconds;
      },
    },
  };
}

/** The Cosmos emulator's published, well-known key; the test server checks none. */
const EMULATOR_KEY =
  'C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU9DAoDkn5DzAaGKu1Imh9N8OWMa+ioP2rn5qD3sK3BjaSkMqQ==';

/** The Cosmos adapter's two constructors, from the sources or from the deployed bundle's build of them. */
interface CosmosAdapter {
  createCosmosClient: typeof createCosmosClient;
  createCosmosContainer: typeof createCosmosContainer;
}

async function cosmosServerTarget(
  adapter: CosmosAdapter = { createCosmosClient, createCosmosContainer },
): Promise<ContractTarget> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address');
  const agent = new https.Agent({ rejectUnauthorized: false });
  const client = adapter.createCosmosClient({
    endpoint: `https://127.0.0.1:${address.port}`,
    key: EMULATOR_KEY,
    agent,
  });
  const close = async (): Promise<void> => {
    client.dispose();
    agent.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  try {
    const { database } = await client.databases.createIfNotExists({ id: 'contract' });
    const { container } = await database.containers.createIfNotExists({
      id: 'orders',
      partitionKey: { paths: ['/orderId'] },
    });
    const { container: slotted } = await database.containers.createIfNotExists({
      id: 'slotted',
      partitionKey: { paths: ['/orderId'] },
      uniqueKeyPolicy: { uniqueKeys: [{ paths: ['/slot'] }] },
    });
    return {
      container: adapter.createCosmosContainer(container, '/orderId'),
      unique: adapter.createCosmosContainer(slotted, '/orderId'),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

describeContract('embedded store', embeddedTarget);

const COSMOS_SERVER_GAPS: Gaps = {
  'atomic-batch': '@vercel/cosmosdb-server: its batch is not atomic',
  ttl: '@vercel/cosmosdb-server: it does not enforce TTL, and its clock cannot be moved',
};

describeContract('@azure/cosmos on @vercel/cosmosdb-server', () => cosmosServerTarget(), COSMOS_SERVER_GAPS);

// The adapter as Azure runs it: @azure/cosmos's ES module build, as the deployed bundle takes it.
describeContract(
  "the deployed bundle's @azure/cosmos on @vercel/cosmosdb-server",
  async () => {
    const bundled = await loadBundled<CosmosAdapter>(join('src', 'adapters', 'azure', 'cosmos-store.ts'), [
      join('src', 'domain', 'errors'),
      join('src', 'adapters', 'document-rules'),
    ]);
    const target = await cosmosServerTarget(bundled.module);
    return {
      ...target,
      close: async () => {
        await target.close?.();
        bundled.remove();
      },
    };
  },
  COSMOS_SERVER_GAPS,
);
