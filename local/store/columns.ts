/**
 * Columns of numbers by row, in typed-array chunks of a fixed size: a column grows by one more chunk,
 * never by copying into one twice its size. A doubled array keeps up to half its room empty and
 * leaves its old copy to the garbage collector, which frees an old-generation ArrayBuffer only at a
 * full collection: measured on a 20,000-order `npm start`, the doubling columns of the store's index
 * and the broker's duplicate-detection history had 52 MB of ArrayBuffers for some 46 MB in use.
 * Used by ./key-table.ts, ./file-index.ts, ./field-codes.ts and the broker's duplicate-detection
 * history. Four classes alike rather than one generic over the array type: each keeps its `get` and
 * `set` on one kind of typed array, so the element accesses on every document's path stay monomorphic.
 */

const CHUNK_BITS = 12;
/** Rows per chunk: 16 KB of a 32-bit column, 32 KB of a 64-bit one. */
export const CHUNK_ROWS = 1 << CHUNK_BITS;
const MASK = CHUNK_ROWS - 1;

export class Int32Column {
  private readonly chunks: Int32Array[] = [];

  get(row: number): number {
    return this.chunks[row >>> CHUNK_BITS][row & MASK];
  }

  set(row: number, value: number): void {
    this.chunks[row >>> CHUNK_BITS][row & MASK] = value;
  }

  /** Room for rows 0 to `rows` - 1. */
  reach(rows: number): void {
    while (this.chunks.length * CHUNK_ROWS < rows) this.chunks.push(new Int32Array(CHUNK_ROWS));
  }
}

export class Uint32Column {
  private readonly chunks: Uint32Array[] = [];

  get(row: number): number {
    return this.chunks[row >>> CHUNK_BITS][row & MASK];
  }

  set(row: number, value: number): void {
    this.chunks[row >>> CHUNK_BITS][row & MASK] = value;
  }

  reach(rows: number): void {
    while (this.chunks.length * CHUNK_ROWS < rows) this.chunks.push(new Uint32Array(CHUNK_ROWS));
  }
}

export class Float64Column {
  private readonly chunks: Float64Array[] = [];

  get(row: number): number {
    return this.chunks[row >>> CHUNK_BITS][row & MASK];
  }

  set(row: number, value: number): void {
    this.chunks[row >>> CHUNK_BITS][row & MASK] = value;
  }

  reach(rows: number): void {
    while (this.chunks.length * CHUNK_ROWS < rows) this.chunks.push(new Float64Array(CHUNK_ROWS));
  }
}

/** Bytes: a small code per row (./field-codes.ts), a quarter of a 32-bit column's room. */
export class Uint8Column {
  private readonly chunks: Uint8Array[] = [];

  get(row: number): number {
    return this.chunks[row >>> CHUNK_BITS][row & MASK];
  }

  set(row: number, value: number): void {
    this.chunks[row >>> CHUNK_BITS][row & MASK] = value;
  }

  reach(rows: number): void {
    while (this.chunks.length * CHUNK_ROWS < rows) this.chunks.push(new Uint8Array(CHUNK_ROWS));
  }
}
