/**
 * Where a container of the embedded store keeps its documents when their texts are in the text file
 * (./text-file.ts): one index for all of the container's partitions, in typed arrays off the
 * JavaScript heap. Partition keys and ids are in two key tables (./key-table.ts); per document a row
 * of columns (./columns.ts) holds its ttl, etag counter, `_ts`, where its text is, and its
 * neighbours in its partition's list (so that a partition's ids are listed without a scan of the
 * container): 32 bytes a document, and 20 plus its id's units in the key table. One packed
 * JavaScript array per partition, its id strings and a Map of the partitions came to some 190 bytes
 * per entry of a 10,000-order `npm start` run, in the heap that V8 sizes at half again what it holds.
 * A column per queried field of the container codes its value (./field-codes.ts), a byte more a
 * document each, so that a query on the field reads only the texts that may match.
 *
 * Where the embedded copy keeps its bytes, not a Cosmos behaviour: a partition here answers exactly
 * as the in-memory one does (tests/contract runs the shared contract on both).
 */
import { Float64Column, Int32Column, Uint32Column } from './columns';
import { FieldCodes, type Condition } from './field-codes';
import { KeyTable } from './key-table';
import { storedRecord, type StoredRecord } from './stored-records';
import type { TextFile } from './text-file';

const NONE = -1;
/** In `ttl`: the document has none. Cosmos takes -1 or seconds > 0, so 0 is no ttl of its. */
const NO_TTL = 0;
/** In `ttl`, `etag` or `ts`: the value is one the column cannot hold, kept in `other` as it is. */
const OTHER_TTL = -2;
const OTHER = 0xffffffff;

/** Whether `value` is an integer a Uint32Column holds as itself (OTHER stands for the rest). */
const fitsUint32 = (value: number): boolean => Number.isInteger(value) && value >= 0 && value < OTHER;

export class FileIndex {
  private readonly partitionKeys = new KeyTable();
  /** Per partition row, its first document's row (NONE: empty). */
  private readonly head = new Int32Column();
  /** Per document row: its partition is its group in `ids`. */
  private readonly ids = new KeyTable();
  private readonly next = new Int32Column();
  private readonly previous = new Int32Column();
  private readonly ttl = new Int32Column();
  private readonly etag = new Uint32Column();
  private readonly ts = new Uint32Column();
  private readonly offset = new Float64Column();
  private readonly bytes = new Int32Column();
  /** The values the columns cannot hold (a ttl past 2^31 seconds, an etag counter past 2^32, a `_ts`
   * out of Uint32's range), by column and row. */
  private readonly other = {
    ttl: new Map<number, unknown>(),
    etag: new Map<number, number>(),
    ts: new Map<number, number>(),
  };

  private readonly codes: FieldCodes;

  /** `fields`: the container's queried fields, each of which gets a column of codes. */
  constructor(
    readonly file: TextFile,
    fields: readonly string[],
  ) {
    this.codes = new FieldCodes(fields);
  }

  /** The partition row of `key`, or NONE. */
  partition(key: string): number {
    return this.partitionKeys.find(0, key);
  }

  /** The partition row of `key`, made if it has none. */
  partitionMade(key: string): number {
    const found = this.partitionKeys.find(0, key);
    if (found !== NONE) return found;
    const partition = this.partitionKeys.add(0, key);
    this.head.reach(this.partitionKeys.rowLimit);
    this.head.set(partition, NONE);
    return partition;
  }

  /** Every partition row (a partition, once made, stays). */
  partitions(): number[] {
    const all: number[] = [];
    for (let row = 0; row < this.partitionKeys.rowLimit; row += 1) all.push(row);
    return all;
  }

  get(partition: number, id: string): StoredRecord | undefined {
    const row = this.ids.find(partition, id);
    if (row === NONE) return undefined;
    const ttl = this.ttl.get(row);
    const etag = this.etag.get(row);
    const ts = this.ts.get(row);
    return storedRecord(
      id,
      ttl === NO_TTL ? undefined : ttl === OTHER_TTL ? this.other.ttl.get(row) : ttl,
      etag === OTHER ? (this.other.etag.get(row) as number) : etag,
      ts === OTHER ? (this.other.ts.get(row) as number) : ts,
      undefined,
      this.offset.get(row),
      this.bytes.get(row),
      undefined,
    );
  }

  /** The ids of the partition's documents, less those whose codes say they cannot match `where`. */
  idsOf(partition: number, where: readonly Condition[] = []): string[] {
    const ids: string[] = [];
    const may = this.codes.mayMatch(where);
    for (let row = this.head.get(partition); row !== NONE; row = this.next.get(row)) {
      if (may === undefined || may(row)) ids.push(this.ids.keyOf(row));
    }
    return ids;
  }

  /** Sets the document `id` of `partition` to a record whose text is in the file already; the
   * slot of the text it replaces is given back. */
  put(partition: number, id: string, record: StoredRecord): void {
    if (typeof record.etag !== 'number') throw new Error(`record ${id} has no etag counter`);
    let row = this.ids.find(partition, id);
    if (row === NONE) {
      row = this.ids.add(partition, id);
      this.reach(this.ids.rowLimit);
      const first = this.head.get(partition);
      this.next.set(row, first);
      this.previous.set(row, NONE);
      if (first !== NONE) this.previous.set(first, row);
      this.head.set(partition, row);
    } else if (this.offset.get(row) !== record.offset) {
      this.file.release(this.offset.get(row), this.bytes.get(row));
    }
    this.forgetOther(row);
    const ttl = record.ttl;
    if (ttl === undefined) this.ttl.set(row, NO_TTL);
    else if (
      typeof ttl === 'number' &&
      Number.isInteger(ttl) &&
      ttl >= -1 &&
      ttl !== 0 &&
      ttl <= 0x7fffffff
    ) {
      this.ttl.set(row, ttl);
    } else {
      this.ttl.set(row, OTHER_TTL);
      this.other.ttl.set(row, ttl);
    }
    this.setUint32(this.etag, this.other.etag, row, record.etag);
    this.setUint32(this.ts, this.other.ts, row, record._ts);
    this.offset.set(row, record.offset);
    this.bytes.set(row, record.bytes);
    this.codes.set(row, record.fields);
  }

  /** Deletes the document `id` of `partition`, if it is there, and gives back its text's slot. */
  delete(partition: number, id: string): void {
    const row = this.ids.find(partition, id);
    if (row === NONE) return;
    const before = this.previous.get(row);
    const after = this.next.get(row);
    if (before === NONE) this.head.set(partition, after);
    else this.next.set(before, after);
    if (after !== NONE) this.previous.set(after, before);
    this.forgetOther(row);
    this.ids.remove(row);
    this.file.release(this.offset.get(row), this.bytes.get(row));
  }

  private setUint32(column: Uint32Column, other: Map<number, number>, row: number, value: number): void {
    if (fitsUint32(value)) column.set(row, value);
    else {
      column.set(row, OTHER);
      other.set(row, value);
    }
  }

  private forgetOther(row: number): void {
    if (this.other.ttl.size > 0) this.other.ttl.delete(row);
    if (this.other.etag.size > 0) this.other.etag.delete(row);
    if (this.other.ts.size > 0) this.other.ts.delete(row);
  }

  private reach(rows: number): void {
    this.next.reach(rows);
    this.previous.reach(rows);
    this.ttl.reach(rows);
    this.etag.reach(rows);
    this.ts.reach(rows);
    this.offset.reach(rows);
    this.bytes.reach(rows);
    this.codes.reach(rows);
  }
}
