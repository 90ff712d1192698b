/**
 * An in-memory document store with Cosmos semantics (docs/architecture.md decision 4): 409 on a duplicate id in a
 * partition, 412 on a stale etag, 404 on a missing document, all-or-nothing transactional batches of
 * at most MAX_BATCH_OPERATIONS operations, and TTL. The embedded runtime and the tests use it where
 * production uses `@azure/cosmos`; the contract suite holds both to the same behaviour.
 *
 * The documents' texts are kept in memory, or in a file (`textFile`, ./text-file.ts) for a run too
 * large to hold them in the heap: where the embedded copy keeps its bytes, not a Cosmos behaviour;
 * the store answers the same either way, and the contract suite runs on both.
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
  storedRecord,
  etagText,
  etagOf,
  hasEtag,
  textOf,
  withText,
} from './stored-records';
import { TextFile } from './text-file';
import { newPartitionSet, stagedOver, type Partition } from './partitions';
import { ownValue } from '../../src/domain/own-properties';
import { checkQueriedFields } from '../../src/adapters/indexing-policy';

/** How a simulated round trip waits out its latency. */
export type RoundTripWait = (ms: number) => Promise<void>;

export interface EmbeddedStoreOptions {
  /** Simulated latency of every round trip, in milliseconds; 0 (the default) still resolves asynchronously. */
  latencyMs?: number;
  /** How a round trip waits out `latencyMs`; defaults to a timer. The bench passes a finer clock. */
  wait?: RoundTripWait;
  /** The clock TTL is measured with; tests pass one they can move. Defaults to `Date.now`. */
  now?: () => number;
  /**
   * A file, which must not exist yet, to keep every document's JSON text in instead of the heap: the
   * store then holds per document only its id, ttl, etag counter, `_ts` and where its text is. The
   * store creates it, and `close()` deletes it. Undefined: the texts stay in memory.
   */
  textFile?: string;
}

export interface EmbeddedContainerOptions {
  /** As Cosmos `defaultTtl`: undefined or null disables TTL, -1 enables it with no default, n > 0 is seconds. */
  defaultTtlSeconds?: number | null;
  /**
   * The fields its indexing policy indexes besides the partition key (src/adapters/indexing-policy.ts):
   * a query filtering on another is refused, as the Cosmos adapter refuses it. Undefined: any field.
   */
  queriedFields?: readonly string[];
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
  /**
   * Ends the store: closes and deletes its text file, if it has one. Every container call after it
   * rejects (`store-closed`), and `container()` throws; calling it again does nothing.
   */
  close(): void;
}

export function createEmbeddedStore(options: EmbeddedStoreOptions = {}): EmbeddedStore {
  const latencyMs = options.latencyMs ?? 0;
  const wait = options.wait ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  const registered = new Map<string, Registered>();
  const perContainer = new Map<string, number>();
  let total = 0;
  let etagCounter = 0;
  const file = options.textFile === undefined ? undefined : new TextFile(options.textFile);
  let closed = false;

  const checkOpen = (): void => {
    if (closed) throw new PermanentError('store-closed', 'the embedded document store is closed');
  };

  const roundTrip = (containerName: string): Promise<void> => {
    total += 1;
    perContainer.set(containerName, (perContainer.get(containerName) ?? 0) + 1);
    return latencyMs > 0 ? wait(latencyMs) : Promise.resolve();
  };

  // A record that holds its text: the partition moves it into the file, if there is one.
  const stamp = (document: Prepared): StoredRecord => {
    etagCounter += 1;
    return storedRecord(
      document.view.id,
      document.view.ttl,
      file === undefined ? etagText(etagCounter) : etagCounter,
      Math.floor(now() / 1000),
      document.text,
      -1,
      0,
      document.fields,
    );
  };

  function createContainer(
    name: string,
    partitionKeyPath: string,
    defaultTtlSeconds: number | null,
    queriedFields: readonly string[] | undefined,
  ): DocumentContainer {
    const keyField = partitionKeyField(partitionKeyPath);
    // With a text file, its index codes the queried fields' values (./field-codes.ts), so that a query
    // on them reads only the texts that may match: as Cosmos answers from its index of those paths.
    const indexed = file === undefined ? undefined : queriedFields;
    const partitions = newPartitionSet(file, indexed);

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

    const partitionOf = (partitionKey: string): Partition => partitions.of(partitionKey);

    const matches = (record: StoredRecord, ifMatch: string | undefined): boolean =>
      ifMatch === undefined || hasEtag(record, ifMatch);

    const write = (partition: PartitionView, document: Prepared, status: number): Outcome => {
      const record = stamp(document);
      partition.set(record.id, record);
      return { status, record };
    };

    // The single-document rules, applied alike to a live partition or to a batch's staged copy.
    const apply = (partition: PartitionView, operation: PreparedOperation): Outcome => {
      switch (operation.op) {
        case 'create':
          return live(partition, operation.document.view.id)
            ? { status: 409 }
            : write(partition, operation.document, 201);
        case 'replace': {
          const existing = live(partition, operation.document.view.id);
          if (existing === undefined) return { status: 404 };
          if (!matches(existing, operation.ifMatch)) return { status: PRECONDITION_FAILED };
          return write(partition, operation.document, 200);
        }
        case 'upsert': {
          // As in Cosmos, ifMatch only guards an upsert that turns out to be a replace; a missing
          // document is created whatever etag was given.
          const existing = live(partition, operation.document.view.id);
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

    const storedOf = <T extends Document>(record: StoredRecord): Stored<T> => {
      const etag = etagOf(record);
      return { document: parseRecord<T>(textOf(record, file), etag, record._ts), etag };
    };

    const preconditionOrMissing = (status: number): { status: 404 } | { status: 412 } =>
      status === PRECONDITION_FAILED ? { status: PRECONDITION_FAILED } : { status: 404 };

    const etagOfOutcome = (outcome: Outcome): string => {
      if (outcome.record === undefined) throw new Error(`a ${outcome.status} outcome carries no document`);
      return etagOf(outcome.record);
    };

    return {
      name,
      partitionKeyPath,

      async create(document: Document): Promise<CreateResult> {
        const prepared = prepare(document, keyField, indexed);
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
        const prepared = prepare(document, keyField, indexed);
        await roundTrip(name);
        checkOpen();
        const outcome = applyToDocument({ op: 'replace', document: prepared, ifMatch: writeOptions.ifMatch });
        return outcome.status === 200
          ? { status: 200, etag: etagOfOutcome(outcome) }
          : preconditionOrMissing(outcome.status);
      },

      async upsert(document: Document, writeOptions: WriteOptions = {}): Promise<UpsertResult> {
        const prepared = prepare(document, keyField, indexed);
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
        const prepared = operations.map((operation) => prepareOperation(operation, keyField, indexed));
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
        // Each result holds its text: a read's record is in a slot a later write may give to another text.
        const results = outcomes.map((outcome): BatchOperationResult =>
          outcome.record === undefined
            ? { status: outcome.status }
            : resultOf(outcome.status, withText(outcome.record, file)),
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
        const only = spec.partitionKey === undefined ? undefined : checkPartitionKey(spec.partitionKey);
        const one = only === undefined ? undefined : partitions.get(only);
        const scanned = only === undefined ? partitions.all() : one === undefined ? [] : [one];
        const found: Array<Stored<T>> = [];
        for (const partition of scanned) {
          // Only ids that may match (file mode): a document ruled out is not met, so not dropped here if
          // expired; it is absent all the same, and dropped by the next call that meets it.
          for (const id of partition.ids(conditions)) {
            const record = live(partition, id);
            if (record === undefined) continue;
            const stored = storedOf<T>(record);
            if (conditions.every(([field, value]) => ownValue(stored.document, field) === value)) {
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
      file?.close();
    },
  };
}
