/**
 * A set of string keys, each in a numbered group, held off the JavaScript heap: a key's UTF-16 code
 * units sit in one growable byte arena (one byte each when every unit is below 256, two otherwise),
 * and a chained hash table of typed arrays finds a key's row. A row is a small integer that stays the
 * key's until it is removed, so that an owner keeps what it needs per key in typed-array columns of
 * its own, indexed by row. Per key that is five 32-bit slots and its units, where a JavaScript string
 * in a Map costs a string header, a table entry and the value it maps to (measured on a 10,000-order
 * `npm start` run: about 85 bytes per id, all of it in the heap V8 grows by half again).
 *
 * Groups are numbers from 0 up (an owner's partition, say). Keys compare exactly, unit for unit (a lone surrogate included): the hash only picks the chain,
 * two different keys are never taken for one. Used by the embedded store's file-mode index
 * (./file-index.ts) and the embedded broker's duplicate-detection history.
 */

/** The least room a table starts with, in rows. */
const FIRST_ROWS = 16;
/** Set on a row's length when its units take two bytes each. */
const WIDE = 0x80000000;

export class KeyTable {
  /** Per row: its group, where its units start in `arena`, their count (| WIDE), the next row in its chain. */
  private group: Int32Array;
  private start: Int32Array;
  private units: Uint32Array;
  private chain: Int32Array;
  /** Per hash bucket, the first row of its chain, plus one (0: none). */
  private buckets: Int32Array;
  private arena: Buffer;
  /** Bytes of `arena` in use, and how many of those belong to removed rows. */
  private arenaEnd = 0;
  private arenaDead = 0;
  /** Rows ever handed out; rows removed since, chained through `chain` from `freeRow` (-1: none). */
  private rows = 0;
  private freeRow = -1;
  private live = 0;

  constructor() {
    this.group = new Int32Array(FIRST_ROWS);
    this.start = new Int32Array(FIRST_ROWS);
    this.units = new Uint32Array(FIRST_ROWS);
    this.chain = new Int32Array(FIRST_ROWS);
    this.buckets = new Int32Array(FIRST_ROWS);
    this.arena = Buffer.alloc(FIRST_ROWS * 16);
  }

  /** Keys held. */
  get size(): number {
    return this.live;
  }

  /** One more than the highest row ever handed out: the length an owner's columns must reach. */
  get rowLimit(): number {
    return this.rows;
  }

  /** The row of `key` in `group`, or -1. */
  find(group: number, key: string): number {
    for (let row = this.buckets[this.bucketOf(group, key)] - 1; row !== -1; row = this.chain[row]) {
      if (this.group[row] === group && this.holds(row, key)) return row;
    }
    return -1;
  }

  /** Adds `key` to `group`, where it must not be yet, and returns its row. */
  add(group: number, key: string): number {
    if (this.live + 1 > this.buckets.length) this.rehash(this.buckets.length * 2);
    let row = this.freeRow;
    if (row === -1) row = this.newRow();
    else this.freeRow = this.chain[row];
    this.group[row] = group;
    this.start[row] = this.store(key);
    this.units[row] = key.length | (this.wide(key) ? WIDE : 0);
    const bucket = this.bucketOf(group, key);
    this.chain[row] = this.buckets[bucket] - 1;
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
      at = this.chain[at];
    }
    if (previous === -1) this.buckets[bucket] = this.chain[row] + 1;
    else this.chain[previous] = this.chain[row];
    this.arenaDead += this.byteLength(row);
    this.group[row] = -1;
    this.chain[row] = this.freeRow;
    this.freeRow = row;
    this.live -= 1;
    if (this.arenaDead > 4096 && this.arenaDead * 2 > this.arenaEnd) this.compact();
  }

  /** The key of `row`, as a new string. */
  keyOf(row: number): string {
    const from = this.start[row];
    const count = this.units[row] & ~WIDE;
    return (this.units[row] & WIDE) !== 0
      ? this.arena.toString('utf16le', from, from + count * 2)
      : this.arena.toString('latin1', from, from + count);
  }

  /** The group of `row`. */
  groupOf(row: number): number {
    return this.group[row];
  }

  private holds(row: number, key: string): boolean {
    const length = this.units[row];
    if ((length & ~WIDE) !== key.length) return false;
    const arena = this.arena;
    let at = this.start[row];
    if ((length & WIDE) === 0) {
      for (let unit = 0; unit < key.length; unit += 1, at += 1) {
        if (arena[at] !== key.charCodeAt(unit)) return false;
      }
    } else {
      for (let unit = 0; unit < key.length; unit += 1, at += 2) {
        if (arena[at] + (arena[at + 1] << 8) !== key.charCodeAt(unit)) return false;
      }
    }
    return true;
  }

  private wide(key: string): boolean {
    for (let unit = 0; unit < key.length; unit += 1) if (key.charCodeAt(unit) > 0xff) return true;
    return false;
  }

  private byteLength(row: number): number {
    const length = this.units[row];
    return (length & WIDE) !== 0 ? (length & ~WIDE) * 2 : length;
  }

  /** Puts the key's units at the arena's end and returns where they start. */
  private store(key: string): number {
    const wide = this.wide(key);
    const bytes = wide ? key.length * 2 : key.length;
    if (this.arenaEnd + bytes > this.arena.length) {
      const grown = Buffer.alloc(Math.max(this.arena.length * 2, this.arenaEnd + bytes));
      this.arena.copy(grown, 0, 0, this.arenaEnd);
      this.arena = grown;
    }
    const from = this.arenaEnd;
    this.arena.write(key, from, bytes, wide ? 'utf16le' : 'latin1');
    this.arenaEnd += bytes;
    return from;
  }

  private newRow(): number {
    if (this.rows === this.group.length) {
      const length = this.group.length * 2;
      this.group = grownInt32(this.group, length);
      this.start = grownInt32(this.start, length);
      this.chain = grownInt32(this.chain, length);
      const units = new Uint32Array(length);
      units.set(this.units);
      this.units = units;
    }
    this.rows += 1;
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
    const arena = this.arena;
    const length = this.units[row];
    const count = length & ~WIDE;
    let at = this.start[row];
    let hash = Math.imul(0x811c9dc5 ^ this.group[row], 0x01000193);
    if ((length & WIDE) === 0) {
      for (let unit = 0; unit < count; unit += 1, at += 1) hash = Math.imul(hash ^ arena[at], 0x01000193);
    } else {
      for (let unit = 0; unit < count; unit += 1, at += 2) {
        hash = Math.imul(hash ^ (arena[at] + (arena[at + 1] << 8)), 0x01000193);
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
      if (this.group[row] === -1) continue;
      const bucket = this.bucketOfRow(row);
      this.chain[row] = this.buckets[bucket] - 1;
      this.buckets[bucket] = row + 1;
    }
  }

  /** Moves the live keys' units together, so that removed keys' bytes do not accumulate. */
  private compact(): void {
    const arena = Buffer.alloc(Math.max(FIRST_ROWS * 16, (this.arenaEnd - this.arenaDead) * 2));
    let end = 0;
    for (let row = 0; row < this.rows; row += 1) {
      if (this.group[row] === -1) continue;
      const bytes = this.byteLength(row);
      this.arena.copy(arena, end, this.start[row], this.start[row] + bytes);
      this.start[row] = end;
      end += bytes;
    }
    this.arena = arena;
    this.arenaEnd = end;
    this.arenaDead = 0;
  }
}

export function grownInt32(array: Int32Array, length: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(length);
  grown.set(array);
  return grown;
}

export function grownFloat64(array: Float64Array, length: number): Float64Array<ArrayBuffer> {
  const grown = new Float64Array(length);
  grown.set(array);
  return grown;
}
