/**
 * What one entry costs does not grow with the length of its order. Counted, not
 * timed: the bytes the consumer writes to the store per entry, and the property reads `resequence`
 * makes of the stored state, at 10 and at 1,000 entries per order. Before the order was split into
 * a header and one transaction record per transaction, every entry rewrote all of the order's lines
 * and digests (about 100 KB per entry at 1,000) and the decision copied its `transactions` map.
 */
import { createEmbeddedStore } from '../../local/store/document-store';
import { entryDigest } from '../../src/domain/digest';
import type { Entry } from '../../src/domain/entry';
import { newOrderState, type OrderState } from '../../src/domain/order';
import { resequence } from '../../src/domain/sequential-convoy';
import { createOrderCache } from '../../src/services/convoy/order-cache';
import { applyEntry } from '../../src/services/idempotent-consumer';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../../src/services/order-documents';
import type { BatchOperation, DocumentContainer, Document } from '../../src/services/ports';
import { added, amended, created, deliveredEntry } from '../support/e2e';

const ignore = (): void => {};

/** An order of `length` entries: created, lines, an amendment every tenth entry, the last final. */
function orderOf(orderId: string, length: number): Entry[] {
  const id = (sequence: number) => `T-${String(sequence).padStart(4, '0')}`;
  const entries: Entry[] = [created(orderId, id(1))];
  for (let sequence = 2; sequence <= length; sequence++) {
    const final = sequence === length;
    entries.push(
      sequence % 10 === 0
        ? amended(orderId, id(sequence), sequence, id(sequence - 1), 2, final)
        : added(orderId, id(sequence), sequence, 1, 100, final),
    );
  }
  return entries;
}

interface Meter {
  bytes: number;
  calls: number;
}

const sizeOf = (document: Document): number => Buffer.byteLength(JSON.stringify(document));

/** The container, counting the bytes of every document written and every call made. */
function metered(inner: DocumentContainer, meter: Meter): DocumentContainer {
  const written = (document: Document) => (meter.bytes += sizeOf(document));
  const call = () => (meter.calls += 1);
  return {
    name: inner.name,
    partitionKeyPath: inner.partitionKeyPath,
    create: (document) => (call(), written(document), inner.create(document)),
    read: (partitionKey, id) => (call(), inner.read(partitionKey, id)),
    replace: (document, options) => (call(), written(document), inner.replace(document, options)),
    upsert: (document, options) => (call(), written(document), inner.upsert(document, options)),
    delete: (partitionKey, id, options) => (call(), inner.delete(partitionKey, id, options)),
    batch: (partitionKey, operations: readonly BatchOperation[]) => {
      call();
      for (const operation of operations) if ('document' in operation) written(operation.document);
      return inner.batch(partitionKey, operations);
    },
    query: (spec) => (call(), inner.query(spec)),
  };
}

/** Bytes written and store calls per entry for one order of `length` entries, each delivered once. */
async function costPerEntry(length: number): Promise<{ bytes: number; calls: number }> {
  const meter: Meter = { bytes: 0, calls: 0 };
  const orders = metered(createEmbeddedStore().container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH), meter);
  let started = 0;
  const deps = {
    orders,
    sender: { send: async () => undefined },
    fulfillment: { start: async () => void (started += 1) },
    telemetry: { trace: ignore, event: ignore, metric: ignore },
    cache: createOrderCache(),
  };
  for (const entry of orderOf('O-LONG', length)) await applyEntry(deps, deliveredEntry(entry));
  expect(started).toBe(1);
  return { bytes: meter.bytes / length, calls: meter.calls / length };
}

describe('the cost of an entry, flat in the length of its order', () => {
  it('writes about as many bytes per entry at 1,000 entries per order as at 10 (at most 1.5x)', async () => {
    const short = await costPerEntry(10);
    const long = await costPerEntry(1000);
    expect(long.bytes / short.bytes).toBeLessThanOrEqual(1.5);
    expect(long.calls / short.calls).toBeLessThanOrEqual(1.5);
  });

  it('decides an entry reading no more of the stored state at 1,000 entries than at 10', () => {
    const readsToDecide = (length: number): number => {
      const entries = orderOf('O-LONG', length + 1);
      let state: OrderState = newOrderState('O-LONG');
      for (const entry of entries.slice(0, length)) {
        const decision = resequence(state, entry, entryDigest(entry), `m-${entry.sequence}`);
        if (decision.kind === 'change') state = decision.state;
      }
      const counter = { reads: 0 };
      const next = entries[length];
      resequence(counting(state, counter), next, entryDigest(next), 'm-next');
      return counter.reads;
    };
    const short = readsToDecide(9);
    expect(short).toBeGreaterThan(0);
    expect(readsToDecide(999)).toBe(short);
  });
});

/** A view of `value` that counts every property read and key listing, however deep. */
function counting<T extends object>(value: T, counter: { reads: number }): T {
  return new Proxy(value, {
    get(target, key, receiver) {
      counter.reads += 1;
      const found: unknown = Reflect.get(target, key, receiver);
      return typeof found === 'object' && found !== null ? counting(found, counter) : found;
    },
    ownKeys(target) {
      const keys = Reflect.ownKeys(target);
      counter.reads += keys.length;
      return keys;
    },
  });
}
