/**
 * An in-memory document store with Cosmos semantics (docs/architecture.md decision 4): 409 on a duplicate id in a
 * partition, 412 on a stale etag, 404 on a missing document, all-or-nothing transactional batches of
 * at most MAX_BATCH_OPERATIONS operations, and TTL. The embedded runtime and the tests use it where
 * production uses `@azure/cosmos`; the contract suite holds both to the same behaviour.
 */
import { PermanentError } from '../../src/domain/errors';
import type {
  BatchOperation,
  BatchOperationResult,
  BatchResult,
  CreateResult,
  DeleteResult,
  Document,
  DocumentContainer,
  QuerySpec,
  ReplaceResult,
  Stored,
  UpsertResult,
  WriteOptions,
} from '../../src/services/ports';
import {
  checkBatch,
  checkBatchBytes,
  checkDocument,
  checkFieldName,
  checkId,
  checkPartitionKey,
  partitionKeyField,
  sortStored,
} from '../../src/adapters/document-rules';
import {
  type Prepared,
  type StoredRecord,
  type PreparedOperation,
  type PartitionView,
  type Outcome,
  type Registered,
  PRECONDITION_FAILED,
  FAILED_DEPENDENCY,
  prepare,
  prepareOperation,
  viewOf,
  parseRecord,
  resultOf,
  checkDefaultTtl,
  etagText,
} from './stored-records';
import { Partition, stagedOver } from './partitions';
import { ownValue } from '../../src/domain/own-properties';
import { checkQueriedFields } from '../../src/adapters/indexing-policy';

export interface EmbeddedStoreOptions {
  /** Simulated latency of every round trip, in milliseconds; 0 (the default) still resolves asynchronously. */
  latencyMs?: number;
  /** The clock TTL is measured with; tests pass one they can move. Defaults to `Date.now`. */
  now?: () => number;
}

export interface EmbeddedContainerOptions {
  /** As Cosmos `defaultTtl`: undefined or null disables TTL, -1 enables it with no default, n > 0 is seconds. */
  defaultTtlSeconds?: number | null;
  /**
   * The fields its indexing policy indexes besides the partition key (src/adapters/indexing-policy.ts):
   * a query filtering on another is refused, as the Cosmos adapter refuses it. Undefined: any field.
   */
  queriedFields?: readonly string[];
  /**
   * Its unique keys (src/adapters/indexing-policy.ts, UNIQUE_KEYS): top-level fields no two documents
   * of one partition may share, a missing one counting as null, as Cosmos enforces them. A write
   * that would break one is refused with 409.
   */
  uniqueKeys?: readonly string[];
}

export interface RoundTripCounts {
  readonly total: number;
  readonly byContainer: Readonly<Record<string, number>>;
}

export interface EmbeddedStore {
  /** The container with this name, created on first use; the same name always returns the same container. */
  container(name: string, partitionKeyPath: string, options?: EmbeddedContainerOptions): DocumentContainer;
  /** A snapshot of the round trips made so far: every container call counts one. */
  readonly roundTrips: RoundTripCounts;
  resetCounters(): void;
  /** Ends the store: every container call after it rejects (`store-closed`), and `container()` throws. */
  close(): void;
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function createEmbeddedStore(options: EmbeddedStoreOptions = {}): EmbeddedStore {
  const latencyMs = options.latencyMs ?? 0;
  const now = options.now ?? Date.now;
  const registered = new Map<string, Registered>();
  const perContainer = new Map<string, number>();
  let total = 0;
  let etagCounter = 0;
  let closed = false;

  const checkOpen = (): void => {
    if (closed) throw new PermanentError('store-closed', 'the embedded document store is closed');
  };

  const roundTrip = (containerName: string): Promise<void> => {
    total += 1;
    perContainer.set(containerName, (perContainer.get(containerName) ?? 0) + 1);
    return latencyMs > 0 ? delay(latencyMs) : Promise.resolve();
  };

  const stamp = (document: Prepared): StoredRecord => {
    etagCounter += 1;
    return {
      id: document.view.id,
      ttl: document.view.ttl,
      etag: etagText(etagCounter),
      _ts: Math.floor(now() / 1000),
      text: document.text,
      unique: document.unique,
    };
  };

  function createContainer(
    name: string,
    partitionKeyPath: string,
    defaultTtlSeconds: number | null,
    queriedFields: readonly string[] | undefined,
    uniqueKeys: readonly string[],
  ): DocumentContainer {
    const keyField = partitionKeyField(partitionKeyPath);
    // By partition key, then by id: Maps, so that any string is a key of its own.
    const partitions = new Map<string, Partition>();

    const expired = (record: StoredRecord): boolean => {
      if (defaultTtlSeconds === null) return false;
      const ttl = typeof record.ttl === 'number' ? record.ttl : defaultTtlSeconds;
      return ttl > 0 && now() >= (record._ts + ttl) * 1000;
    };

    // Expired documents are dropped when met, so every operation sees them as absent.
    const live = (partition: PartitionView, id: string): StoredRecord | undefined => {
      const record = partition.get(id);
      if (record === undefined || !expired(record)) return record;
      partition.delete(id);
      return undefined;
    };

    const partitionOf = (partitionKey: string): Partition => {
      let partition = partitions.get(partitionKey);
      if (partition === undefined) {
        partition = new Partition();
        partitions.set(partitionKey, partition);
      }
      return partition;
    };

    const matches = (record: StoredRecord, ifMatch: string | undefined): boolean =>
      ifMatch === undefined || record.etag === ifMatch;

    // Whether another live document of the partition holds one of the document's unique key values.
    const breaksUniqueKey = (partition: PartitionView, document: Prepared): boolean =>
      document.unique.some((value, index) => {
        const holder = partition.holderOf(index, value);
        return holder !== undefined && holder !== document.view.id && live(partition, holder) !== undefined;
      });

    const write = (partition: PartitionView, document: Prepared, status: number): Outcome => {
      const record = stamp(document);
      partition.set(record.id, record);
      return { status, record };
    };

    // The single-document rules, applied alike to a live partition or to a batch's staged copy.
    const apply = (partition: PartitionView, operation: PreparedOperation): Outcome => {
      switch (operation.op) {
        case 'create':
          return live(partition, operation.document.view.id) || breaksUniqueKey(partition, operation.document)
            ? { status: 409 }
            : write(partition, operation.document, 201);
        case 'replace': {
          const existing = live(partition, operation.document.view.id);
          if (existing === undefined) return { status: 404 };
          if (!matches(existing, operation.ifMatch)) return { status: PRECONDITION_FAILED };
          if (breaksUniqueKey(partition, operation.document)) return { status: 409 };
          return write(partition, operation.document, 200);
        }
        case 'upsert': {
          // As in Cosmos, ifMatch only guards an upsert that turns out to be a replace; a missing
          // document is created whatever etag was given.
          const existing = live(partition, operation.document.view.id);
          if (breaksUniqueKey(partition, operation.document)) return { status: 409 };
          if (existing === undefined) return write(partition, operation.document, 201);
          if (!matches(existing, operation.ifMatch)) return { status: PRECONDITION_FAILED };
          return write(partition, operation.document, 200);
        }
        case 'delete': {
          const existing = live(partition, operation.id);
          if (existing === undefined) return { status: 404 };
          if (!matches(existing, operation.ifMatch)) return { status: PRECONDITION_FAILED };
          partition.delete(operation.id);
          return { status: 204 };
        }
        case 'read': {
          const existing = live(partition, operation.id);
          return existing === undefined ? { status: 404 } : { status: 200, record: existing };
        }
      }
    };

    const applyToDocument = (operation: PreparedOperation & { document: Prepared }): Outcome =>
      apply(partitionOf(checkDocument(operation.document.view, keyField)), operation);

    const storedOf = <T extends Document>(record: StoredRecord): Stored<T> => ({
      document: parseRecord<T>(record.text, record.etag, record._ts),
      etag: record.etag,
    });

    const preconditionOrMissing = (status: number): { status: 404 } | { status: 412 } =>
      status === PRECONDITION_FAILED ? { status: PRECONDITION_FAILED } : { status: 404 };

    const etagOfOutcome = (outcome: Outcome): string => {
      if (outcome.record === undefined) throw new Error(`a ${outcome.status} outcome carries no document`);
      return outcome.record.etag;
    };

    return {
      name,
      partitionKeyPath,

      async create(document: Document): Promise<CreateResult> {
        const prepared = prepare(document, keyField, uniqueKeys);
        await roundTrip(name);
        checkOpen();
        const outcome = applyToDocument({ op: 'create', document: prepared });
        return outcome.status === 201 ? { status: 201, etag: etagOfOutcome(outcome) } : { status: 409 };
      },

      async read<T extends Document>(partitionKey: string, id: string): Promise<Stored<T> | undefined> {
        await roundTrip(name);
        checkOpen();
        checkPartitionKey(partitionKey);
        checkId(id);
        const partition = partitions.get(partitionKey);
        const record = partition && live(partition, id);
        return record ? storedOf<T>(record) : undefined;
      },

      async replace(document: Document, writeOptions: WriteOptions = {}): Promise<ReplaceResult> {
        const prepared = prepare(document, keyField, uniqueKeys);
        await roundTrip(name);
        checkOpen();
        const outcome = applyToDocument({ op: 'replace', document: prepared, ifMatch: writeOptions.ifMatch });
        return outcome.status === 200
          ? { status: 200, etag: etagOfOutcome(outcome) }
          : preconditionOrMissing(outcome.status);
      },

      async upsert(document: Document, writeOptions: WriteOptions = {}): Promise<UpsertResult> {
        const prepared = prepare(document, keyField, uniqueKeys);
        await roundTrip(name);
        checkOpen();
        const outcome = applyToDocument({ op: 'upsert', document: prepared, ifMatch: writeOptions.ifMatch });
        return outcome.status === 200 || outcome.status === 201
          ? { status: outcome.status, etag: etagOfOutcome(outcome) }
          : { status: PRECONDITION_FAILED };
      },

      async delete(partitionKey: string, id: string, writeOptions: WriteOptions = {}): Promise<DeleteResult> {
        await roundTrip(name);
        checkOpen();
        checkPartitionKey(partitionKey);
        checkId(id);
        const outcome = apply(partitionOf(partitionKey), { op: 'delete', id, ifMatch: writeOptions.ifMatch });
        return outcome.status === 204 ? { status: 204 } : preconditionOrMissing(outcome.status);
      },

      async batch(partitionKey: string, operations: readonly BatchOperation[]): Promise<BatchResult> {
        const prepared = operations.map((operation) => prepareOperation(operation, keyField, uniqueKeys));
        await roundTrip(name);
        checkOpen();
        const views: BatchOperation[] = [];
        const texts: string[] = [];
        for (const operation of prepared) {
          views.push(viewOf(operation));
          if ('document' in operation) texts.push(operation.document.text);
        }
        checkBatch(partitionKey, views, keyField);
        checkBatchBytes(texts);
        const staged = stagedOver(partitionOf(partitionKey));
        const outcomes: Outcome[] = [];
        for (const operation of prepared) {
          const outcome = apply(staged, operation);
          if (outcome.status >= 400) {
            return {
              ok: false,
              results: prepared.map((_, index) => ({
                status: index === outcomes.length ? outcome.status : FAILED_DEPENDENCY,
              })),
            };
          }
          outcomes.push(outcome);
        }
        const results = outcomes.map((outcome): BatchOperationResult =>
          outcome.record === undefined
            ? { status: outcome.status }
            : resultOf(outcome.status, outcome.record),
        );
        staged.commit();
        return { ok: true, results };
      },

      async query<T extends Document>(spec: QuerySpec): Promise<Array<Stored<T>>> {
        checkQueriedFields(name, keyField, queriedFields, spec);
        await roundTrip(name);
        checkOpen();
        const conditions = Object.entries(spec.where ?? {}).map(
          ([field, value]) => [checkFieldName(field), value] as const,
        );
        const bounds = Object.entries(spec.above ?? {}).map(
          ([field, value]) => [checkFieldName(field), value] as const,
        );
        const only = spec.partitionKey === undefined ? undefined : checkPartitionKey(spec.partitionKey);
        const one = only === undefined ? undefined : partitions.get(only);
        const scanned = only === undefined ? [...partitions.values()] : one === undefined ? [] : [one];
        const found: Array<Stored<T>> = [];
        for (const partition of scanned) {
          for (const id of partition.keys()) {
            const record = live(partition, id);
            if (record === undefined) continue;
            const stored = storedOf<T>(record);
            const above = ([field, bound]: readonly [string, number]): boolean => {
              const value = ownValue(stored.document, field);
              return typeof value === 'number' && value > bound;
            };
            if (
              conditions.every(([field, value]) => ownValue(stored.document, field) === value) &&
              bounds.every(above)
            ) {
              found.push(stored);
            }
          }
        }
        return sortStored(found, keyField);
      },
    };
  }

  return {
    container(name: string, partitionKeyPath: string, containerOptions?: EmbeddedContainerOptions) {
      checkOpen();
      const defaultTtlSeconds = checkDefaultTtl(containerOptions?.defaultTtlSeconds);
      const existing = registered.get(name);
      if (existing !== undefined) {
        const ttlDiffers = containerOptions !== undefined && existing.defaultTtlSeconds !== defaultTtlSeconds;
        if (existing.partitionKeyPath !== partitionKeyPath || ttlDiffers) {
          throw new PermanentError(
            'container-mismatch',
            `container ${name} already exists with other settings`,
          );
        }
        return existing.container;
      }
      const container = createContainer(
        name,
        partitionKeyPath,
        defaultTtlSeconds,
        containerOptions?.queriedFields,
        containerOptions?.uniqueKeys ?? [],
      );
      registered.set(name, { container, partitionKeyPath, defaultTtlSeconds });
      return container;
    },

    get roundTrips(): RoundTripCounts {
      return { total, byContainer: Object.fromEntries(perContainer) };
    },

    resetCounters(): void {
      total = 0;
      perContainer.clear();
    },

    close(): void {
      closed = true;
    },
  };
}
