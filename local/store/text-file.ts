/**
 * Where the embedded store keeps its documents' JSON text when it is given `textFile`: in one file,
 * so that a long `npm start` run holds in its heap only what the store must look at per document
 * (id, ttl, etag counter, `_ts`, and where its text is), not the text itself.
 *
 * This is about where the embedded copy keeps its bytes, not a Cosmos behaviour: nothing of it shows
 * through the store's API, which answers byte for byte as it does with the texts in memory.
 *
 * The file is cut into slots of power-of-two size classes, from 256 bytes up to the class that holds
 * MAX_DOCUMENT_BYTES (Cosmos DB's item limit, checked before any text reaches this file). A text goes
 * into a free slot of the smallest class it fits, else into a new slot at the end of the file; a slot
 * given back (its document replaced, deleted or expired) goes onto its class's free list for the next
 * text of that class. Slots are never merged or split, so the file spans, per class, the most slots
 * that class had in use at once (a replacing text is written before the old one's slot is given back,
 * so that a failed write loses nothing), each under twice its text or 256 bytes: about twice the
 * live text while the documents' sizes stay in their classes; more after many documents of one class
 * are deleted and another class wants the space.
 *
 * Reads and writes are synchronous (`fs.readSync`/`fs.writeSync` at the slot's position, through one
 * reused buffer): the store's calls are asynchronous already, and a synchronous file call keeps the
 * order of its operations exactly the order of the calls.
 */
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { PermanentError, errorMessage } from '../../src/domain/errors';
import { MAX_DOCUMENT_BYTES } from '../../src/adapters/document-rules';

/** The smallest slot: 2^8 bytes. */
const SMALLEST_SLOT_BITS = 8;

/** The size class of a text of `bytes` bytes: 0 for up to 256 bytes, 1 for up to 512, and so on. */
function classOf(bytes: number): number {
  return bytes <= 1 << SMALLEST_SLOT_BITS ? 0 : 32 - Math.clz32(bytes - 1) - SMALLEST_SLOT_BITS;
}

const CLASSES = classOf(MAX_DOCUMENT_BYTES) + 1;

function fileError(path: string, doing: string, cause: unknown): PermanentError {
  return new PermanentError(
    'store-file',
    `the embedded store's text file ${path}: ${doing}: ${errorMessage(cause)}`,
    {
      cause,
    },
  );
}

export class TextFile {
  private fd: number;
  /** Where the next new slot starts: the bytes the file spans. */
  private end = 0;
  /** Per size class, the offsets of its slots given back. */
  private readonly free: number[][] = Array.from({ length: CLASSES }, () => []);
  private buffer = Buffer.allocUnsafe(64 * 1024);

  /** Creates the file, which must not exist yet: the store never writes over a file it did not make. */
  constructor(readonly path: string) {
    try {
      this.fd = openSync(path, 'wx+');
    } catch (error) {
      throw fileError(path, 'cannot create it', error);
    }
  }

  /** The bytes the file spans: every slot ever made, in use or free. */
  get size(): number {
    return this.end;
  }

  /** Writes `text`, `bytes` long in UTF-8, into a slot of its class and returns the slot's offset. */
  write(text: string, bytes: number): number {
    const sizeClass = classOf(bytes);
    if (sizeClass >= CLASSES) throw fileError(this.path, 'writing', `a text of ${bytes} bytes has no slot`);
    const buffer = this.room(bytes);
    buffer.write(text, 0, bytes, 'utf8');
    const offset = this.free[sizeClass].pop() ?? this.grow(sizeClass);
    try {
      for (let done = 0; done < bytes;) {
        done += writeSync(this.openFd(), buffer, done, bytes - done, offset + done);
      }
    } catch (error) {
      this.free[sizeClass].push(offset);
      throw fileError(this.path, 'writing', error);
    }
    return offset;
  }

  /** The text of `bytes` bytes written at `offset`. */
  read(offset: number, bytes: number): string {
    const buffer = this.room(bytes);
    try {
      for (let done = 0; done < bytes;) {
        const read = readSync(this.openFd(), buffer, done, bytes - done, offset + done);
        if (read === 0) throw new Error(`it ends before byte ${offset + bytes}`);
        done += read;
      }
    } catch (error) {
      throw fileError(this.path, 'reading', error);
    }
    return buffer.toString('utf8', 0, bytes);
  }

  /** Gives back the slot at `offset` that holds a text of `bytes` bytes. */
  release(offset: number, bytes: number): void {
    this.free[classOf(bytes)].push(offset);
  }

  /** Closes and deletes the file; again, it does nothing. */
  close(): void {
    if (this.fd === -1) return;
    const fd = this.fd;
    this.fd = -1;
    let failure: unknown;
    try {
      closeSync(fd);
    } catch (error) {
      failure = error;
    }
    try {
      unlinkSync(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') failure ??= error;
    }
    if (failure !== undefined) throw fileError(this.path, 'closing', failure);
  }

  private openFd(): number {
    if (this.fd === -1) throw new Error('it is closed');
    return this.fd;
  }

  private grow(sizeClass: number): number {
    const offset = this.end;
    this.end += 1 << (sizeClass + SMALLEST_SLOT_BITS);
    return offset;
  }

  private room(bytes: number): Buffer {
    if (this.buffer.length < bytes) this.buffer = Buffer.allocUnsafe(2 ** Math.ceil(Math.log2(bytes)));
    return this.buffer;
  }
}
