/**
 * How the embedded store holds a document: as the JSON text the caller handed over plus `_etag` and
 * `_ts`, parsed afresh on every read, with staged partitions for all-or-nothing batches.
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

/**
 * A document as the caller handed it over: its JSON text, taken when the call is made, and the
 * fields the store itself reads, as that JSON has them. JSON, not structuredClone: it drops
 * `undefined` and turns dates into strings exactly as the Cosmos wire does.
 */
export interface Prepared {
  readonly text: string;
  /** Only `id`, `ttl` and the partition key, for the document rules. */
  readonly view: Document;
  /** The JSON of each of the container's unique key fields (null when absent), in their order. */
  readonly unique: readonly string[];
}

/**
 * A stored document as Cosmos holds it: the caller's fields as JSON text, plus `_etag` and `_ts`.
 * Every read parses a fresh copy and sets the two system fields on it, so no caller ever holds the
 * stored one, and a write costs one stringify rather than a clone on the way in and another on
 * the way out.
 */
export interface StoredRecord {
  readonly id: string;
  readonly ttl: unknown;
  readonly etag: string;
  readonly _ts: number;
  readonly text: string;
  readonly unique: readonly string[];
}

/** Quoted, as Cosmos sends them; the store-wide counter keeps every etag unique across containers. */
export function etagText(counter: number): string {
  return `"00000000-0000-0000-0000-${counter.toString(16).padStart(12, '0')}"`;
}

export type PreparedOperation =
  | { op: 'create'; document: Prepared }
  | { op: 'replace' | 'upsert'; document: Prepared; ifMatch?: string }
  | { op: 'delete'; id: string; ifMatch?: string }
  | { op: 'read'; id: string };

/** What the document rules read and write: a partition, or a batch's staging over one. */
export interface PartitionView {
  keys(): Iterable<string>;
  get(id: string): StoredRecord | undefined;
  /** The id of the document holding this value of the unique key at `index`, if one does. */
  holderOf(index: number, value: string): string | undefined;
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

export function prepare(document: Document, keyField: string, uniqueKeys: readonly string[] = []): Prepared {
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
    unique: uniqueKeys.map((field) =>
      JSON.stringify(source === null ? null : (ownValue(source, field) ?? null)),
    ),
    view: {
      id: source?.id as string,
      ttl: source?.ttl,
      [keyField]: source === null ? undefined : ownValue(source, keyField),
    },
  };
}

export function prepareOperation(
  operation: BatchOperation,
  keyField: string,
  uniqueKeys: readonly string[] = [],
): PreparedOperation {
  switch (operation.op) {
    case 'create':
      return { op: 'create', document: prepare(operation.document, keyField, uniqueKeys) };
    case 'replace':
    case 'upsert':
      return {
        op: operation.op,
        document: prepare(operation.document, keyField, uniqueKeys),
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

/** A successful batch operation's result, with the document as a read would return it. */
export function resultOf(status: number, record: StoredRecord): BatchOperationResult {
  return { status, etag: record.etag, document: parseRecord(record.text, record.etag, record._ts) };
}

export function checkDefaultTtl(value: number | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  if (value === -1 || (Number.isInteger(value) && value > 0)) return value;
  throw new PermanentError('bad-ttl', `defaultTtlSeconds ${value} must be null, -1 or seconds > 0`);
}
