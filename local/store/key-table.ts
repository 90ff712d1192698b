/**
 * A set of string keys, each in a numbered group, held off the JavaScript heap: a key's UTF-16 code
 * units sit in one growable byte arena (one byte each when every unit is below 256, two otherwise),
 * and a chained hash table of typed arrays finds a key's row. A row is a small integer that stays the
 * key's until it is removed, so that an owner keeps what it needs per key in typed-array columns of
 * its own, indexed by row (./columns.ts). Per key that is five 32-bit slots and its units, where a JavaScript string
 * in a Map costs a string header, a table entry and the value it maps to (measured on a 10,000-order
 * `npm start` run: about 85 bytes per id, all of it in the heap V8 grows by half again).
 *
 * Groups are numbers from 0 up (an owner's partition, say). Keys compare exactly, unit for unit (a lone surrogate included): the hash only picks the chain,
 * two different keys are never taken for one. Used by the embedded store's file-mode index
 * (./file-index.ts) and the embedded broker's duplicate-detection history.
 */

import { Int32Column, Uint32Column } from './columns';

/** The least room a table's hash starts with, in buckets. */
const FIRST_BUCKETS = 16;
/** Set on a row's length when its units take two bytes each. */
const WIDE = 0x80000000;
/** The longest key, in code units: two bytes each, it still fits one arena chunk. */
export const MAX_KEY_UNITS = 0xffff;
const ARENA_BITS = 17;
/** Bytes per arena chunk but the first, which grows to it from FIRST_ARENA. */
const ARENA_CHUNK = 1 << ARENA_BITS;
const ARENA_MASK = ARENA_CHUNK - 1;
const FIRST_ARENA = 1024;

export class KeyTable {
  /** Per row: its group (-1: removed), where its units start in the arena, their count (| WIDE), the
   * next row in its chain. */
  private readonly group = new Int32Column();
  private readonly start = new Int32Column();
  private readonly units = new Uint32Column();
  private readonly chain = new Int32Column();
  /** Per hash bucket, the first row of its chain, plus one (0: none). */
  private buckets = new Int32Array(FIRST_BUCKETS);
  /** The keys' units, in chunks; a key never spans two. A key starts at chunk << ARENA_BITS | offset. */
  private arena: Buffer[] = [Buffer.allocUnsafeSlow(FIRST_ARENA)];
  /** Bytes used in the last chunk; bytes of all chunks in use and of those that removed rows held. */
  private fill = 0;
  private arenaUsed = 0;
  private arenaDead = 0;
  /** Rows ever handed out; rows removed since, chained through `chain` from `freeRow` (-1: none). */
  private rows = 0;
  private freeRow = -1;
  private live = 0;

  /** Keys held. */
  get size(): number {
    return this.live;
  }

  /** One more than the highest row ever handed out: the rows an owner's columns must reach. */
  get rowLimit(): number {
    return this.rows;
  }

  /** The row of `key` in `group`, or -1. */
  find(group: number, key: string): number {
    for (let row = this.buckets[this.bucketOf(group, key)] - 1; row !== -1; row = this.chain.get(row)) {
      if (this.group.get(row) === group && this.holds(row, key)) return row;
    }
    return -1;
  }

  /** Adds `key` to `group` (a number from 0 up), where it must not be yet, and returns its row. */
  add(group: number, key: string): number {
    if (key.length > MAX_KEY_UNITS) {
      throw new RangeError(`key table: a key of ${key.length} characters (at most ${MAX_KEY_UNITS})`);
    }
    if (this.live + 1 > this.buckets.length) this.rehash(this.buckets.length * 2);
    let row = this.freeRow;
    if (row === -1) row = this.newRow();
    else this.freeRow = this.chain.get(row);
    const wide = isWide(key);
    this.group.set(row, group);
    this.start.set(row, this.store(key, wide));
    this.units.set(row, (key.length | (wide ? WIDE : 0)) >>> 0);
    const bucket = this.bucketOf(group, key);
    this.chain.set(row, this.buckets[bucket] - 1);
    this.buckets[bucket] = row + 1;
    this.live += 1;
    return row;
  }

  /** Removes the key of `row`; the row may be handed out again by `add`. */
  remove(row: number): void {
    const bucket = this.bucketOfRow(row);
    let previous = -1;
    let at = this.buckets[bucket] - 1;
    while (at !== row) {
      if (at === -1) throw new Error(`key table: row ${row} is in no chain`);
      previous = at;
      at = this.chain.get(at);
    }
    if (previous === -1) this.buckets[bucket] = this.chain.get(row) + 1;
    else this.chain.set(previous, this.chain.get(row));
    this.arenaDead += this.byteLength(row);
    this.group.set(row, -1);
    this.chain.set(row, this.freeRow);
    this.freeRow = row;
    this.live -= 1;
    if (this.arenaDead > 4096 && this.arenaDead * 2 > this.arenaUsed) this.compact();
  }

  /** The key of `row`, as a new string. */
  keyOf(row: number): string {
    const start = this.start.get(row);
    return this.keyIn(this.arena[start >>> ARENA_BITS], start & ARENA_MASK, this.units.get(row));
  }

  /** The group of `row`. */
  groupOf(row: number): number {
    return this.group.get(row);
  }

  private holds(row: number, key: string): boolean {
    const length = this.units.get(row);
    if ((length & ~WIDE) !== key.length) return false;
    const start = this.start.get(row);
    const chunk = this.arena[start >>> ARENA_BITS];
    let at = start & ARENA_MASK;
    if ((length & WIDE) === 0) {
      for (let unit = 0; unit < key.length; unit += 1, at += 1) {
        if (chunk[at] !== key.charCodeAt(unit)) return false;
      }
    } else {
      for (let unit = 0; unit < key.length; unit += 1, at += 2) {
        if (chunk[at] + (chunk[at + 1] << 8) !== key.charCodeAt(unit)) return false;
      }
    }
    return true;
  }

  private byteLength(row: number): number {
    const length = this.units.get(row);
    return (length & WIDE) !== 0 ? (length & ~WIDE) * 2 : length;
  }

  /** Puts the key's units after the last chunk's, or in a new chunk, and returns where they start. */
  private store(key: string, wide: boolean): number {
    const bytes = wide ? key.length * 2 : key.length;
    let last = this.arena.length - 1;
    let chunk = this.arena[last];
    if (this.fill + bytes > chunk.length) {
      if (last === 0 && chunk.length < ARENA_CHUNK && this.fill + bytes <= ARENA_CHUNK) {
        const grown = Buffer.allocUnsafeSlow(
          Math.min(ARENA_CHUNK, Math.max(chunk.length * 2, this.fill + bytes)),
        );
        chunk.copy(grown, 0, 0, this.fill);
        this.arena[0] = chunk = grown;
      } else {
        if (this.arena.length === 1 << (31 - ARENA_BITS))
          throw new RangeError('key table: its arena is full');
        chunk = Buffer.allocUnsafeSlow(ARENA_CHUNK);
        this.arena.push(chunk);
        last += 1;
        this.fill = 0;
      }
    }
    const from = this.fill;
    chunk.write(key, from, bytes, wide ? 'utf16le' : 'latin1');
    this.fill += bytes;
    this.arenaUsed += bytes;
    return (last << ARENA_BITS) | from;
  }

  private newRow(): number {
    this.rows += 1;
    this.group.reach(this.rows);
    this.start.reach(this.rows);
    this.units.reach(this.rows);
    this.chain.reach(this.rows);
    return this.rows - 1;
  }

  /** FNV-1a over the group and the key's code units; it picks a chain, nothing more. */
  private bucketOf(group: number, key: string): number {
    let hash = Math.imul(0x811c9dc5 ^ group, 0x01000193);
    for (let unit = 0; unit < key.length; unit += 1) {
      hash = Math.imul(hash ^ key.charCodeAt(unit), 0x01000193);
    }
    return this.bucketOfHash(hash);
  }

  /** The bucket of a row's key, as `bucketOf` finds it, from the arena (no string made). */
  private bucketOfRow(row: number): number {
    const start = this.start.get(row);
    const chunk = this.arena[start >>> ARENA_BITS];
    const length = this.units.get(row);
    const count = length & ~WIDE;
    let at = start & ARENA_MASK;
    let hash = Math.imul(0x811c9dc5 ^ this.group.get(row), 0x01000193);
    if ((length & WIDE) === 0) {
      for (let unit = 0; unit < count; unit += 1, at += 1) hash = Math.imul(hash ^ chunk[at], 0x01000193);
    } else {
      for (let unit = 0; unit < count; unit += 1, at += 2) {
        hash = Math.imul(hash ^ (chunk[at] + (chunk[at + 1] << 8)), 0x01000193);
      }
    }
    return this.bucketOfHash(hash);
  }

  private bucketOfHash(hash: number): number {
    const mixed = hash ^ (hash >>> 15);
    return (mixed >>> 0) & (this.buckets.length - 1);
  }

  private rehash(length: number): void {
    this.buckets = new Int32Array(length);
    for (let row = 0; row < this.rows; row += 1) {
      if (this.group.get(row) === -1) continue;
      const bucket = this.bucketOfRow(row);
      this.chain.set(row, this.buckets[bucket] - 1);
      this.buckets[bucket] = row + 1;
    }
  }

  /** Moves the live keys' units together, so that removed keys' bytes do not pile up. */
  private compact(): void {
    const old = this.arena;
    this.arena = [Buffer.allocUnsafeSlow(FIRST_ARENA)];
    this.fill = 0;
    this.arenaUsed = 0;
    this.arenaDead = 0;
    for (let row = 0; row < this.rows; row += 1) {
      if (this.group.get(row) === -1) continue;
      const start = this.start.get(row);
      const from = start & ARENA_MASK;
      const key = this.keyIn(old[start >>> ARENA_BITS], from, this.units.get(row));
      this.start.set(row, this.store(key, (this.units.get(row) & WIDE) !== 0));
    }
  }

  private keyIn(chunk: Buffer, from: number, length: number): string {
    return (length & WIDE) !== 0
      ? chunk.toString('utf16le', from, from + (length & ~WIDE) * 2)
      : chunk.toString('latin1', from, from + length);
  }
}

function isWide(key: string): boolean {
  for (let unit = 0; unit < key.length; unit += 1) if (key.charCodeAt(unit) > 0xff) return true;
  return false;
}
