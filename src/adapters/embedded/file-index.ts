/**
 * Where a container of the embedded store keeps its documents when their texts are in the text file
 * (./text-file.ts): one index for all of the container's partitions, in typed arrays off the
 * JavaScript heap. Partition keys and ids are in two key tables (./key-table.ts); per document a row
 * of columns holds its ttl, etag counter, `_ts`, where its text is, and its neighbours in its
 * partition's list (so that a partition's ids are listed without a scan of the container). About 60
 * bytes a document plus its id's units, where one packed JavaScript array per partition, its id
 * strings and a Map of the partitions came to some 190 bytes per entry of a 10,000-order `npm start`
 * run, in the heap that V8 sizes at half again what it holds.
 *
 * Where the embedded copy keeps its bytes, not a Cosmos behaviour: a partition here answers exactly
 * as the in-memory one does (tests/contract runs the shared contract on both).
 */
import { KeyTable, grownFloat64, grownInt32 } from './key-table';
import { storedRecord, type StoredRecord } from './stored-records';
import type { TextFile } from './text-file';

/** `ttl` of a document that has none. */
const NO_TTL = Number.NaN;
const NONE = -1;
const FIRST_ROWS = 16;

export class FileIndex {
  private readonly partitionKeys = new KeyTable();
  /** Per partition row, its first document's row (NONE: empty). */
  private head = new Int32Array(FIRST_ROWS);
  /** Per document row: its partition is its group in `ids`. */
  private readonly ids = new KeyTable();
  private next = new Int32Array(FIRST_ROWS);
  private previous = new Int32Array(FIRST_ROWS);
  private ttl = new Float64Array(FIRST_ROWS);
  private etag = new Float64Array(FIRST_ROWS);
  private ts = new Float64Array(FIRST_ROWS);
  private offset = new Float64Array(FIRST_ROWS);
  private bytes = new Int32Array(FIRST_ROWS);
  /** A ttl that is neither a number nor absent (the document rules let none through), as it was. */
  private readonly otherTtl = new Map<number, unknown>();

  constructor(readonly file: TextFile) {}

  /** The partition row of `key`, or NONE. */
  partition(key: string): number {
    return this.partitionKeys.find(0, key);
  }

  /** The partition row of `key`, made if it has none. */
  partitionMade(key: string): number {
    const found = this.partitionKeys.find(0, key);
    if (found !== NONE) return found;
    const partition = this.partitionKeys.add(0, key);
    if (partition >= this.head.length) this.head = grownInt32(this.head, this.head.length * 2);
    this.head[partition] = NONE;
    return partition;
  }

  /** Every partition row. */
  partitions(): number[] {
    const all: number[] = [];
    for (let row = 0; row < this.partitionKeys.rowLimit; row += 1) all.push(row);
    return all;
  }

  /** The document row of `id` in `partition`, or NONE. */
  find(partition: number, id: string): number {
    return this.ids.find(partition, id);
  }

  get(partition: number, id: string): StoredRecord | undefined {
    const row = this.ids.find(partition, id);
    if (row === NONE) return undefined;
    const ttl = this.ttl[row];
    return storedRecord(
      id,
      Number.isNaN(ttl) ? this.otherTtl.get(row) : ttl,
      this.etag[row],
      this.ts[row],
      undefined,
      this.offset[row],
      this.bytes[row],
    );
  }

  idsOf(partition: number): string[] {
    const ids: string[] = [];
    for (let row = this.head[partition]; row !== NONE; row = this.next[row]) ids.push(this.ids.keyOf(row));
    return ids;
  }

  /** Sets the document `id` of `partition` to a record whose text is in the file already; the
   * slot of the text it replaces is given back. */
  put(partition: number, id: string, record: StoredRecord): void {
    let row = this.ids.find(partition, id);
    if (row === NONE) {
      row = this.ids.add(partition, id);
      if (row >= this.next.length) this.grow();
      const first = this.head[partition];
      this.next[row] = first;
      this.previous[row] = NONE;
      if (first !== NONE) this.previous[first] = row;
      this.head[partition] = row;
    } else if (this.offset[row] !== record.offset) {
      this.file.release(this.offset[row], this.bytes[row]);
    }
    const ttl = record.ttl;
    if (typeof ttl === 'number' && !Number.isNaN(ttl)) {
      this.ttl[row] = ttl;
      this.otherTtl.delete(row);
    } else {
      this.ttl[row] = NO_TTL;
      if (ttl === undefined) this.otherTtl.delete(row);
      else this.otherTtl.set(row, ttl);
    }
    if (typeof record.etag !== 'number') throw new Error(`record ${id} has no etag counter`);
    this.etag[row] = record.etag;
    this.ts[row] = record._ts;
    this.offset[row] = record.offset;
    this.bytes[row] = record.bytes;
  }

  /** Deletes the document `id` of `partition`, if it is there, and gives back its text's slot. */
  delete(partition: number, id: string): void {
    const row = this.ids.find(partition, id);
    if (row === NONE) return;
    const before = this.previous[row];
    const after = this.next[row];
    if (before === NONE) this.head[partition] = after;
    else this.next[before] = after;
    if (after !== NONE) this.previous[after] = before;
    this.otherTtl.delete(row);
    this.ids.remove(row);
    this.file.release(this.offset[row], this.bytes[row]);
  }

  private grow(): void {
    const length = this.next.length * 2;
    this.next = grownInt32(this.next, length);
    this.previous = grownInt32(this.previous, length);
    this.bytes = grownInt32(this.bytes, length);
    this.ttl = grownFloat64(this.ttl, length);
    this.etag = grownFloat64(this.etag, length);
    this.ts = grownFloat64(this.ts, length);
    this.offset = grownFloat64(this.offset, length);
  }
}
