/**
 * How the embedded store holds one partition's documents: by id, with a batch's changes staged over
 * them. Two ways, one interface:
 * - with the texts in memory, a Map of the records as they are;
 * - with a text file (./text-file.ts), every document as six slots of one packed array (id, ttl,
 *   etag counter, `_ts`, and where its text is), its record made afresh when asked for. A Map, its
 *   table and a record object came to some 2.5 KB per order of a 20,000-order `npm start` run
 *   (an order's partition holds a dozen documents and its downstream partition four); the rows, about
 *   1.6 KB. Ids are found by a scan while a partition is small, by a Map once it is not.
 * What a record looks like, and how a text gets to and from the file, is ./stored-records.ts's.
 */
import { storedRecord, type PartitionView, type StoredRecord } from './stored-records';
import type { TextFile } from './text-file';

/** A partition's documents, as the store's container reads and changes them. */
export interface Partition extends PartitionView {
  ids(): string[];
  /** A batch's changes (undefined: deleted), all or none. */
  commit(changes: ReadonlyMap<string, StoredRecord | undefined>): void;
}

export function newPartition(file: TextFile | undefined): Partition {
  return file === undefined ? new MemoryPartition() : new FilePartition(file);
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

/** Slots per document in FilePartition's rows: id, ttl, etag, _ts, offset, bytes. */
const STRIDE = 6;
/** Documents a FilePartition finds by scanning; beyond, it keeps a Map of where each id's row is. */
const SCAN_LIMIT = 32;

/**
 * The texts in the file: a record set here has its text written to the file and is kept as where
 * that text is; the slot of a record replaced or deleted is given back. A deleted row is filled
 * with the last one, so rows carry no holes (queries sort what they find, so order does not show).
 */
class FilePartition implements Partition {
  private readonly rows: unknown[] = [];
  /** id → its row's first slot, once the partition holds more than SCAN_LIMIT documents. */
  private index: Map<string, number> | undefined;

  constructor(private readonly file: TextFile) {}

  get(id: string): StoredRecord | undefined {
    const at = this.find(id);
    if (at === -1) return undefined;
    const rows = this.rows;
    return storedRecord(
      id,
      rows[at + 1],
      rows[at + 2] as number,
      rows[at + 3] as number,
      undefined,
      rows[at + 4] as number,
      rows[at + 5] as number,
    );
  }

  ids(): string[] {
    const ids: string[] = [];
    for (let at = 0; at < this.rows.length; at += STRIDE) ids.push(this.rows[at] as string);
    return ids;
  }

  set(id: string, record: StoredRecord): void {
    this.put(id, this.written(record));
  }

  delete(id: string): void {
    const at = this.find(id);
    if (at === -1) return;
    const rows = this.rows;
    const offset = rows[at + 4] as number;
    const bytes = rows[at + 5] as number;
    const last = rows.length - STRIDE;
    if (at !== last) {
      for (let slot = 0; slot < STRIDE; slot += 1) rows[at + slot] = rows[last + slot];
      this.index?.set(rows[at] as string, at);
    }
    rows.length = last;
    this.index?.delete(id);
    this.file.release(offset, bytes);
  }

  /** Every new text is written, into slots of its own, before any row changes or any slot is given
   * back, so a failed write changes nothing. */
  commit(changes: ReadonlyMap<string, StoredRecord | undefined>): void {
    const written: Array<readonly [string, StoredRecord | undefined]> = [];
    try {
      for (const [id, record] of changes) written.push([id, record && this.written(record)]);
    } catch (error) {
      for (const [, record] of written)
        if (record !== undefined) this.file.release(record.offset, record.bytes);
      throw error;
    }
    for (const [id, record] of written) {
      if (record === undefined) this.delete(id);
      else this.put(id, record);
    }
  }

  private find(id: string): number {
    if (this.index !== undefined) return this.index.get(id) ?? -1;
    const rows = this.rows;
    for (let at = 0; at < rows.length; at += STRIDE) if (rows[at] === id) return at;
    return -1;
  }

  /** The record, its text already in the file, as this partition's row: the old row's slot given back. */
  private put(id: string, record: StoredRecord): void {
    const rows = this.rows;
    let at = this.find(id);
    if (at === -1) {
      at = rows.length;
      rows.push(id, undefined, 0, 0, 0, 0);
      if (this.index !== undefined) this.index.set(id, at);
      else if (rows.length > SCAN_LIMIT * STRIDE) this.index = this.indexed();
    } else if (rows[at + 4] !== record.offset) {
      this.file.release(rows[at + 4] as number, rows[at + 5] as number);
    }
    rows[at + 1] = record.ttl;
    rows[at + 2] = record.etag;
    rows[at + 3] = record._ts;
    rows[at + 4] = record.offset;
    rows[at + 5] = record.bytes;
  }

  private indexed(): Map<string, number> {
    const index = new Map<string, number>();
    for (let at = 0; at < this.rows.length; at += STRIDE) index.set(this.rows[at] as string, at);
    return index;
  }

  /** The record with its text moved into the file (a record read from here has it there already). */
  private written(record: StoredRecord): StoredRecord {
    if (record.text === undefined) return record;
    const bytes = Buffer.byteLength(record.text, 'utf8');
    const offset = this.file.write(record.text, bytes);
    return storedRecord(record.id, record.ttl, record.etag, record._ts, undefined, offset, bytes);
  }
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
