/**
 * The bench's meter on the store port: every operation the consumer makes on its container, by
 * kind (the items of a transactional batch each counted as their own kind), the bytes of the JSON
 * of every item written (create, replace, upsert) and read back, and the request units Cosmos DB
 * would charge, estimated by ./request-units from those sizes and the indexed terms of the
 * container's indexing policy (src/adapters/indexing-policy.ts, the Bicep's).
 *
 * Deterministic for one workload and seed at zero latency: nothing here depends on time. It keeps
 * the time it spends itself (`overheadMs`), so that the bench can take it out of the CPU it reports.
 */
import { performance } from 'node:perf_hooks';
import { partitionKeyField } from '../src/adapters/document-rules';
import type {
  BatchOperation,
  BatchOperationResult,
  Document,
  DocumentContainer,
  Stored,
} from '../src/services/ports';
import {
  RU_REFUSED,
  SYSTEM_INDEXED_TERMS,
  createCharge,
  deleteCharge,
  queryCharge,
  readCharge,
  replaceCharge,
} from './request-units';

export const OPERATION_KINDS = ['create', 'replace', 'upsert', 'delete', 'read', 'query'] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

export interface MeterTotals {
  /** Calls on the container: a batch is one. */
  requests: number;
  /** Item operations by kind, those inside batches included. */
  operations: Record<OperationKind, number>;
  /** UTF-8 bytes of the JSON of every item written by a create, replace or upsert that succeeded. */
  bytesWritten: number;
  /** UTF-8 bytes of the JSON of every item a read, a batch read or a query returned. */
  bytesRead: number;
  /** Estimated request charges of the calls. */
  requestUnits: number;
  /** Estimated charge of the background TTL deletions of the items left with a `ttl`, once each. */
  ttlRequestUnits: number;
  /** Wall time spent in the meter itself (sizing items, estimating charges), ms. */
  overheadMs: number;
}

export interface StoreMeter {
  totals(): MeterTotals;
}

interface Known {
  bytes: number;
  /** The values of the indexed fields, in `indexed` order. */
  values: unknown[];
  ttl: boolean;
}

const byteLength = (document: Document): number => Buffer.byteLength(JSON.stringify(document), 'utf8');

/**
 * Wraps `inner` so that every call is metered. `queried`: the fields the container's indexing
 * policy includes besides its partition key, which is included too.
 */
export function meteredContainer(
  inner: DocumentContainer,
  queried: readonly string[],
): { container: DocumentContainer; meter: StoreMeter } {
  const keyField = partitionKeyField(inner.partitionKeyPath);
  const indexed = [keyField, ...queried.filter((field) => field !== keyField)];
  // Per item: `id` and `_ts`, and every explicitly included path, present or not (index policy page).
  const terms = SYSTEM_INDEXED_TERMS + indexed.length;
  const known = new Map<string, Known>();
  const operations = Object.fromEntries(OPERATION_KINDS.map((kind) => [kind, 0])) as Record<
    OperationKind,
    number
  >;
  let requests = 0;
  let bytesWritten = 0;
  let bytesRead = 0;
  let requestUnits = 0;
  let overheadMs = 0;

  const keyOf = (partitionKey: string, id: string): string => `${partitionKey}\u0000${id}`;
  const describe = (document: Document): Known => ({
    bytes: byteLength(document),
    values: indexed.map((field) => (Object.hasOwn(document, field) ? document[field] : undefined)),
    ttl: typeof document.ttl === 'number' && document.ttl > 0,
  });

  /** The charge of writing `document` over what is known of it; `created`: it did not exist. */
  const written = (document: Document, created: boolean): number => {
    const next = describe(document);
    const key = keyOf(String(document[keyField]), document.id);
    const before = known.get(key);
    known.set(key, next);
    bytesWritten += next.bytes;
    if (created || before === undefined) return createCharge(next.bytes, terms);
    // `_ts` changes with every write (one term out, one in), and so does each indexed field whose value changed.
    const changed = 1 + indexed.filter((_, i) => before.values[i] !== next.values[i]).length;
    return replaceCharge(before.bytes, next.bytes, changed, changed);
  };

  const deleted = (partitionKey: string, id: string): number => {
    const key = keyOf(partitionKey, id);
    const before = known.get(key);
    known.delete(key);
    return deleteCharge(before?.bytes ?? 0, terms);
  };

  const read = (document: Document | undefined): number => {
    if (document === undefined) return RU_REFUSED;
    const bytes = byteLength(document);
    bytesRead += bytes;
    return readCharge(bytes);
  };

  /** Runs the call, then meters its outcome outside the time it took. */
  const metered = async <T>(
    kind: OperationKind | 'batch',
    call: () => Promise<T>,
    charge: (result: T) => number,
  ) => {
    requests += 1;
    if (kind !== 'batch') operations[kind] += 1;
    const result = await call();
    const started = performance.now();
    requestUnits += charge(result);
    overheadMs += performance.now() - started;
    return result;
  };

  const batchItem = (
    partitionKey: string,
    operation: BatchOperation,
    result: BatchOperationResult,
  ): number => {
    operations[operation.op] += 1;
    switch (operation.op) {
      case 'create':
        return written(operation.document, true);
      case 'replace':
        return written(operation.document, false);
      case 'upsert':
        return written(operation.document, result.status === 201);
      case 'delete':
        return deleted(partitionKey, operation.id);
      case 'read':
        return read(result.document);
    }
  };

  const container: DocumentContainer = {
    name: inner.name,
    partitionKeyPath: inner.partitionKeyPath,
    create: (document) =>
      metered(
        'create',
        () => inner.create(document),
        (result) => (result.status === 201 ? written(document, true) : RU_REFUSED),
      ),
    read: <T extends Document>(partitionKey: string, id: string) =>
      metered(
        'read',
        () => inner.read<T>(partitionKey, id),
        (result: Stored<T> | undefined) => read(result?.document),
      ),
    replace: (document, options) =>
      metered(
        'replace',
        () => inner.replace(document, options),
        (result) => (result.status === 200 ? written(document, false) : RU_REFUSED),
      ),
    upsert: (document, options) =>
      metered(
        'upsert',
        () => inner.upsert(document, options),
        (result) => (result.status === 412 ? RU_REFUSED : written(document, result.status === 201)),
      ),
    delete: (partitionKey, id, options) =>
      metered(
        'delete',
        () => inner.delete(partitionKey, id, options),
        (result) => (result.status === 204 ? deleted(partitionKey, id) : RU_REFUSED),
      ),
    batch: (partitionKey, batch) =>
      metered(
        'batch',
        () => inner.batch(partitionKey, batch),
        (result) => {
          if (!result.ok) {
            // Rolled back: each operation counted, estimated as refused, nothing written.
            for (const operation of batch) operations[operation.op] += 1;
            return RU_REFUSED * batch.length;
          }
          return batch.reduce(
            (sum, operation, i) => sum + batchItem(partitionKey, operation, result.results[i]),
            0,
          );
        },
      ),
    query: <T extends Document>(spec: Parameters<DocumentContainer['query']>[0]) =>
      metered(
        'query',
        () => inner.query<T>(spec),
        (results: Array<Stored<T>>) => {
          const sizes = results.map((stored) => byteLength(stored.document));
          for (const bytes of sizes) bytesRead += bytes;
          return queryCharge(sizes);
        },
      ),
  };

  return {
    container,
    meter: {
      totals() {
        const started = performance.now();
        let ttlRequestUnits = 0;
        for (const item of known.values()) {
          if (item.ttl) ttlRequestUnits += deleteCharge(item.bytes, terms);
        }
        overheadMs += performance.now() - started;
        return {
          requests,
          operations: { ...operations },
          bytesWritten,
          bytesRead,
          requestUnits,
          ttlRequestUnits,
          overheadMs,
        };
      },
    },
  };
}
