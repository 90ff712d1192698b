/**
 * How the embedded store holds one partition's documents: by id, with a batch's changes staged over
 * them. Two ways, one interface:
 * - with the texts in memory, a Map of the records as they are;
 * - with a text file (./text-file.ts), as a handle on the container's index of every partition's
 *   documents (./file-index.ts, typed arrays off the heap), its record made afresh when asked for.
 *   A Map, its table and a record object per document came to some 2.5 KB per order of a
 *   20,000-order `npm start` run (an order's partition holds a dozen documents and its downstream
 *   partition four); one packed array of six slots per document, about 1.6 KB; the index, some 0.7.
 * What a record looks like, and how a text gets to and from the file, is ./stored-records.ts's.
 */
import { storedRecord, type PartitionView, type StoredRecord } from './stored-records';
import type { TextFile } from './text-file';
import { FileIndex } from './file-index';
import type { Condition } from './field-codes';

/** A partition's documents, as the store's container reads and changes them. */
export interface Partition extends PartitionView {
  /** Its ids; with `where`, those of documents that may match it: the ids the index does not rule out. */
  ids(where?: readonly Condition[]): string[];
  /** A batch's changes (undefined: deleted), all or none. */
  commit(changes: ReadonlyMap<string, StoredRecord | undefined>): void;
}

/** The texts in memory: the records as they are, by id. */
class MemoryPartition implements Partition {
  private readonly records = new Map<string, StoredRecord>();

  get(id: string): StoredRecord | undefined {
    return this.records.get(id);
  }

  ids(): string[] {
    return [...this.records.keys()];
  }

  set(id: string, record: StoredRecord): void {
    this.records.set(id, record);
  }

  delete(id: string): void {
    this.records.delete(id);
  }

  commit(changes: ReadonlyMap<string, StoredRecord | undefined>): void {
    for (const [id, record] of changes) {
      if (record === undefined) this.records.delete(id);
      else this.records.set(id, record);
    }
  }
}

/**
 * The texts in the file: a record set here has its text written to the file and is kept, in the
 * container's index (./file-index.ts), as where that text is; the slot of a record replaced or
 * deleted is given back. A handle on one partition of that index, made when asked for.
 */
class FilePartition implements Partition {
  constructor(
    private readonly index: FileIndex,
    private readonly partition: number,
  ) {}

  get(id: string): StoredRecord | undefined {
    return this.index.get(this.partition, id);
  }

  ids(where?: readonly Condition[]): string[] {
    return this.index.idsOf(this.partition, where);
  }

  set(id: string, record: StoredRecord): void {
    this.index.put(this.partition, id, this.written(record));
  }

  delete(id: string): void {
    this.index.delete(this.partition, id);
  }

  /** Every new text is written, into slots of its own, before any row changes or any slot is given
   * back, so a failed write changes nothing. */
  commit(changes: ReadonlyMap<string, StoredRecord | undefined>): void {
    const file = this.index.file;
    const written: Array<readonly [string, StoredRecord | undefined]> = [];
    try {
      for (const [id, record] of changes) written.push([id, record && this.written(record)]);
    } catch (error) {
      for (const [, record] of written) if (record !== undefined) file.release(record.offset, record.bytes);
      throw error;
    }
    for (const [id, record] of written) {
      if (record === undefined) this.index.delete(this.partition, id);
      else this.index.put(this.partition, id, record);
    }
  }

  /** The record with its text moved into the file (a record read from here has it there already). */
  private written(record: StoredRecord): StoredRecord {
    if (record.text === undefined) return record;
    const bytes = Buffer.byteLength(record.text, 'utf8');
    const offset = this.index.file.write(record.text, bytes);
    return storedRecord(
      record.id,
      record.ttl,
      record.etag,
      record._ts,
      undefined,
      offset,
      bytes,
      record.fields,
    );
  }
}

/** A container's partitions by partition key. */
export interface PartitionSet {
  /** The partition of `key`, or undefined when nothing was ever written to it. */
  get(key: string): Partition | undefined;
  /** The partition of `key`, made empty if there was none. */
  of(key: string): Partition;
  all(): Partition[];
}

/** `fields`: the container's queried fields, which the text file's index keeps codes of (./field-codes.ts). */
export function newPartitionSet(file: TextFile | undefined, fields: readonly string[] = []): PartitionSet {
  if (file === undefined) {
    const partitions = new Map<string, MemoryPartition>();
    return {
      get: (key) => partitions.get(key),
      of(key) {
        let partition = partitions.get(key);
        if (partition === undefined) {
          partition = new MemoryPartition();
          partitions.set(key, partition);
        }
        return partition;
      },
      all: () => [...partitions.values()],
    };
  }
  const index = new FileIndex(file, fields);
  return {
    get(key) {
      const partition = index.partition(key);
      return partition === -1 ? undefined : new FilePartition(index, partition);
    },
    of: (key) => new FilePartition(index, index.partitionMade(key)),
    all: () => index.partitions().map((partition) => new FilePartition(index, partition)),
  };
}

/**
 * A batch's changes, held over the partition and applied only when every operation succeeded, so a
 * failure leaves the partition untouched. Only the changes are held: copying the partition instead
 * would make each write cost as much as the partition holds (an order and all its transaction records).
 */
export function stagedOver(partition: Partition): PartitionView & { commit(): void } {
  // Records staged here keep their text in memory: nothing reaches the text file before commit().
  const changes = new Map<string, StoredRecord | undefined>();
  return {
    get: (id) => (changes.has(id) ? changes.get(id) : partition.get(id)),
    set: (id, record) => {
      changes.set(id, record);
    },
    delete: (id) => {
      changes.set(id, undefined);
    },
    commit() {
      partition.commit(changes);
    },
  };
}
