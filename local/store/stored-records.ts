/**
 * How the embedded store holds a document: as the JSON text the caller handed over plus `_etag` and
 * `_ts`, parsed afresh on every read, with staged partitions for all-or-nothing batches. The text is
 * kept in memory, or in the store's text file (./text-file.ts) when it was given one.
 */
import { PermanentError } from '../../src/domain/errors';
import type {
  BatchOperation,
  BatchOperationResult,
  Document,
  DocumentContainer,
} from '../../src/services/ports';
import { ownValue } from '../../src/domain/own-properties';
import { checkDocumentBytes } from '../../src/adapters/document-rules';
import type { TextFile } from './text-file';
import { fieldValues, type FieldValue } from './field-codes';

/**
 * A document as the caller handed it over: its JSON text, taken when the call is made, and the
 * fields the store itself reads, as that JSON has them. JSON, not structuredClone: it drops
 * `undefined` and turns dates into strings exactly as the Cosmos wire does.
 */
export interface Prepared {
  readonly text: string;
  /** Only `id`, `ttl` and the partition key, for the document rules. */
  readonly view: Document;
  /** With a text file, the values of the container's queried fields in `text` (./field-codes.ts). */
  readonly fields: readonly FieldValue[] | undefined;
}

/**
 * A stored document as Cosmos holds it: the caller's fields as JSON text, plus `_etag` and `_ts`.
 * Every read parses a fresh copy and sets the two system fields on it, so no caller ever holds the
 * stored one, and a write costs one stringify rather than a clone on the way in and another on
 * the way out. One shape for both places the text may be (made by `storedRecord` only), so that the
 * code reading records sees one hidden class.
 */
export interface StoredRecord {
  readonly id: string;
  readonly ttl: unknown;
  /**
   * `_etag` itself, with the texts in memory: a caller's ifMatch is then most often that very string.
   * With a text file, where every byte kept per document counts, the store-wide counter it is
   * formatted from (`etagText`) when asked for.
   */
  readonly etag: string | number;
  readonly _ts: number;
  /** The JSON text, or undefined when it is in the text file, at `offset`, `bytes` long in UTF-8. */
  readonly text: string | undefined;
  readonly offset: number;
  readonly bytes: number;
  /**
   * The queried fields' values in the text, for the text file's index to code (./field-codes.ts) when
   * the record is written there; undefined with the texts in memory, and in a record read back.
   */
  readonly fields: readonly FieldValue[] | undefined;
}

export function storedRecord(
  id: string,
  ttl: unknown,
  etag: string | number,
  ts: number,
  text: string | undefined,
  offset: number,
  bytes: number,
  fields: readonly FieldValue[] | undefined,
): StoredRecord {
  return { id, ttl, etag, _ts: ts, text, offset, bytes, fields };
}

const ETAG_PREFIX = '"00000000-0000-0000-0000-';
const ETAG_DIGITS = 12;
const HEX = '0123456789abcdef';
const ETAG_CODES = Array.from(`${ETAG_PREFIX}${'0'.repeat(ETAG_DIGITS)}"`, (char) => char.charCodeAt(0));

/** Quoted, as Cosmos sends them; the store-wide counter keeps every etag unique across containers. */
export function etagText(etag: number): string {
  if (etag >= 16 ** ETAG_DIGITS) return `${ETAG_PREFIX}${etag.toString(16)}"`;
  // One flat string (56 bytes of heap, measured), where concatenating keeps a tree of strings (96 to 120).
  let rest = etag;
  for (let at = ETAG_PREFIX.length + ETAG_DIGITS - 1; at >= ETAG_PREFIX.length; at -= 1) {
    ETAG_CODES[at] = HEX.charCodeAt(rest % 16);
    rest = Math.floor(rest / 16);
  }
  return String.fromCharCode(...ETAG_CODES);
}

/** The record's `_etag`. */
export function etagOf(record: StoredRecord): string {
  const etag = record.etag;
  return typeof etag === 'string' ? etag : etagText(etag);
}

/** Whether `text` is the record's `_etag`, without making that string from a counter. */
export function hasEtag(record: StoredRecord, text: string): boolean {
  const etag = record.etag;
  return typeof etag === 'string' ? etag === text : etagIs(etag, text);
}

/** Whether `text` is `etagText(etag)`, without making that string: every conditional write asks. */
function etagIs(etag: number, text: string): boolean {
  // Bit by bit while the counter fits 31 bits (two billion writes), by the string beyond.
  if (etag > 0x7fffffff) return etagText(etag) === text;
  if (text.length !== ETAG_PREFIX.length + ETAG_DIGITS + 1 || !text.startsWith(ETAG_PREFIX)) return false;
  let rest = etag;
  for (let at = ETAG_PREFIX.length + ETAG_DIGITS - 1; at >= ETAG_PREFIX.length; at -= 1) {
    if (text.charCodeAt(at) !== HEX.charCodeAt(rest & 15)) return false;
    rest >>>= 4;
  }
  return text.charCodeAt(text.length - 1) === 0x22;
}

/** The record's text, from the record or from the text file. */
export function textOf(record: StoredRecord, file: TextFile | undefined): string {
  if (record.text !== undefined) return record.text;
  if (file === undefined) throw new Error(`record ${record.id} has neither a text nor a text file`);
  return file.read(record.offset, record.bytes);
}

/** The record with its text in hand, for what must still read it after its slot has gone to another text. */
export function withText(record: StoredRecord, file: TextFile | undefined): StoredRecord {
  return record.text !== undefined
    ? record
    : storedRecord(
        record.id,
        record.ttl,
        record.etag,
        record._ts,
        textOf(record, file),
        -1,
        0,
        record.fields,
      );
}

export type PreparedOperation =
  | { op: 'create'; document: Prepared }
  | { op: 'replace' | 'upsert'; document: Prepared; ifMatch?: string }
  | { op: 'delete'; id: string; ifMatch?: string }
  | { op: 'read'; id: string };

/** What the document rules read and write: a partition, or a batch's staging over one. */
export interface PartitionView {
  get(id: string): StoredRecord | undefined;
  set(id: string, record: StoredRecord): void;
  delete(id: string): void;
}

export interface Outcome {
  status: number;
  record?: StoredRecord;
}

export interface Registered {
  container: DocumentContainer;
  partitionKeyPath: string;
  defaultTtlSeconds: number | null;
}

export const PRECONDITION_FAILED = 412;
export const FAILED_DEPENDENCY = 424;

/** A value JSON gives back unchanged, so that the document's own field can stand for its JSON. */
function survivesJson(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0))
  );
}

/** `fields`: the queried fields to take the values of, for a text file's index; undefined: none. */
export function prepare(document: Document, keyField: string, fields?: readonly string[]): Prepared {
  const text = JSON.stringify(document);
  checkDocumentBytes(String(document.id), text);
  const plain =
    typeof (document as { toJSON?: unknown }).toJSON !== 'function' &&
    survivesJson(document.id) &&
    survivesJson(document.ttl) &&
    survivesJson(ownValue(document, keyField));
  const source = plain ? document : (JSON.parse(text) as Document | null);
  return {
    text,
    view: {
      id: source?.id as string,
      ttl: source?.ttl,
      [keyField]: source === null ? undefined : ownValue(source, keyField),
    },
    fields: fields === undefined ? undefined : fieldValues(document, fields),
  };
}

export function prepareOperation(
  operation: BatchOperation,
  keyField: string,
  fields?: readonly string[],
): PreparedOperation {
  switch (operation.op) {
    case 'create':
      return { op: 'create', document: prepare(operation.document, keyField, fields) };
    case 'replace':
    case 'upsert':
      return {
        op: operation.op,
        document: prepare(operation.document, keyField, fields),
        ifMatch: operation.ifMatch,
      };
    case 'delete':
      return { op: 'delete', id: operation.id, ifMatch: operation.ifMatch };
    case 'read':
      return { op: 'read', id: operation.id };
  }
}

/** The rules see what they would see in the JSON the caller sent. */
export function viewOf(operation: PreparedOperation): BatchOperation {
  return operation.op === 'read' || operation.op === 'delete'
    ? operation
    : { op: operation.op, document: operation.document.view };
}

/**
 * The document as Cosmos returns it: `_etag` and `_ts` overriding any the caller sent, in their
 * place if it sent them and last otherwise, exactly as the spread `{...document, _etag, _ts}` would.
 */
export function parseRecord<T extends Document>(text: string, etag: string, ts: number): T {
  const document = JSON.parse(text) as Record<string, unknown>;
  document._etag = etag;
  document._ts = ts;
  return document as T;
}

/** One accessor pair for every result, so that all results share their hidden classes. */
const LAZY_DOCUMENT: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: LazyResult): Document {
    return this.parsed();
  },
  set(this: LazyResult, value: Document): void {
    this.replaceDocument(value);
  },
};

/**
 * A successful batch operation's result; its document is parsed when first asked for, as most
 * callers want the etag only. The record it is parsed from must hold its text (`withText`): a slot
 * in the text file may since hold another. `document` is an own enumerable accessor and the record
 * a private field, so the result compares and serializes as the plain object it stands for.
 * (Measured per entry of the consumer, two results: 330 bytes with the record under two symbols
 * defined on each result, 1.1 KB with a getter and setter made for each, as an object literal.)
 */
class LazyResult implements BatchOperationResult {
  declare document: Document;
  readonly #record: StoredRecord & { text: string };
  #parsed: Document | undefined;

  constructor(
    readonly status: number,
    readonly etag: string,
    record: StoredRecord & { text: string },
  ) {
    this.#record = record;
    Object.defineProperty(this, 'document', LAZY_DOCUMENT);
  }

  parsed(): Document {
    const record = this.#record;
    return (this.#parsed ??= parseRecord(record.text, etagOf(record), record._ts));
  }

  replaceDocument(value: Document): void {
    this.#parsed = value;
  }
}

export function resultOf(status: number, record: StoredRecord): BatchOperationResult {
  if (record.text === undefined) throw new Error(`a result of record ${record.id} needs its text in hand`);
  return new LazyResult(status, etagOf(record), record as StoredRecord & { text: string });
}

export function checkDefaultTtl(value: number | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  if (value === -1 || (Number.isInteger(value) && value > 0)) return value;
  throw new PermanentError('bad-ttl', `defaultTtlSeconds ${value} must be null, -1 or seconds > 0`);
}
