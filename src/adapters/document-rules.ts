/**
 * Rules both document stores apply the same way, so the embedded container and the Cosmos adapter
 * accept, reject and return exactly the same things (the contract suite holds them to it).
 */
import { compareText } from '../domain/compare';
import { PermanentError } from '../domain/errors';
import { MAX_BATCH_OPERATIONS } from '../services/ports';
import type { BatchOperation, Document, Stored } from '../services/ports';
import { ownValue, setOwn } from '../domain/own-properties';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Cosmos adds these on every write; `_etag` and `_ts` are kept because callers may want them, the
 * rest are storage addresses that the embedded store cannot (and callers need not) reproduce.
 */
const SERVICE_FIELDS: ReadonlySet<string> = new Set(['_rid', '_self', '_attachments', '_lsn']);

/** `/orderId` -> `orderId`. Nested paths are refused: the port reads the key from a top-level field. */
export function partitionKeyField(partitionKeyPath: string): string {
  const field = partitionKeyPath.startsWith('/') ? partitionKeyPath.slice(1) : '';
  if (!IDENTIFIER.test(field)) {
    throw new PermanentError(
      'bad-partition-key-path',
      `partition key path ${JSON.stringify(partitionKeyPath)} is not a single-level path such as /orderId`,
    );
  }
  return field;
}

export function partitionKeyOf(document: Document, field: string): string {
  const value: unknown = ownValue(document, field);
  if (typeof value !== 'string' || value === '') {
    throw new PermanentError(
      'bad-partition-key',
      `document ${JSON.stringify(document.id)} has no string partition key in field ${field}`,
    );
  }
  return value;
}

export function checkPartitionKey(partitionKey: unknown): string {
  if (typeof partitionKey !== 'string' || partitionKey === '') {
    throw new PermanentError(
      'bad-partition-key',
      `partition key ${JSON.stringify(partitionKey)} is not a string`,
    );
  }
  return partitionKey;
}

/**
 * A refusal Cosmos DB answers with a status code: 400 (bad request) for an id it does not take, 413
 * (request entity too large) for an item or a batch over its size limit (REST status codes:
 * learn.microsoft.com/rest/api/cosmos-db/http-status-codes-for-cosmosdb). Both stores throw it before
 * anything is written, so both refuse the same things the same way.
 */
export class DocumentRefusedError extends PermanentError {
  constructor(
    code: string,
    readonly statusCode: 400 | 413,
    message: string,
  ) {
    super(code, message);
  }
}

/** Per-item limit: learn.microsoft.com/azure/cosmos-db/concepts-limits ("Maximum size of an item", 2 MB of its UTF-8 JSON). */
export const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;
/** A transactional batch's payload: learn.microsoft.com/azure/cosmos-db/nosql/transactional-batch (at most 2 MB). */
export const MAX_BATCH_BYTES = 2 * 1024 * 1024;
/**
 * An item id: at most 255 characters, none of `/ \ ? #` (Resource.Id,
 * learn.microsoft.com/dotnet/api/microsoft.azure.documents.resource.id). Such an id also breaks the
 * REST path of a point read, where the Cosmos adapter answered 500 and the embedded store 404.
 */
export const MAX_DOCUMENT_ID_LENGTH = 255;
const FORBIDDEN_ID_CHARACTERS = /[/\\?#]/;

export function checkId(id: unknown): string {
  if (typeof id !== 'string' || id === '') {
    throw new DocumentRefusedError(
      'bad-id',
      400,
      `document id ${JSON.stringify(id)} is not a non-empty string`,
    );
  }
  if (id.length > MAX_DOCUMENT_ID_LENGTH) {
    throw new DocumentRefusedError(
      'bad-id',
      400,
      `document id of ${id.length} characters is over Cosmos DB's ${MAX_DOCUMENT_ID_LENGTH}`,
    );
  }
  if (FORBIDDEN_ID_CHARACTERS.test(id)) {
    throw new DocumentRefusedError(
      'bad-id',
      400,
      `document id ${JSON.stringify(id)} contains / \\ ? or #, which Cosmos DB refuses`,
    );
  }
  return id;
}

/** Whether Cosmos DB takes `id` as an item id. */
export function isValidDocumentId(id: string): boolean {
  return id !== '' && id.length <= MAX_DOCUMENT_ID_LENGTH && !FORBIDDEN_ID_CHARACTERS.test(id);
}

/**
 * An item's JSON text over 2 MB is refused with 413, measured as Cosmos measures it: the UTF-8 bytes
 * of the text as written, where JSON has already turned a control character, a lone surrogate, `"`
 * or `\` into an escape of 2 to 6 bytes.
 */
export function checkDocumentBytes(id: string, text: string): void {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_DOCUMENT_BYTES) {
    throw new DocumentRefusedError(
      'document-too-large',
      413,
      `document ${id.slice(0, 100)} is ${bytes} bytes, over Cosmos DB's ${MAX_DOCUMENT_BYTES}-byte item limit`,
    );
  }
}

/** A batch whose documents together are over 2 MB is refused with 413. */
export function checkBatchBytes(texts: readonly string[]): void {
  const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);
  if (bytes > MAX_BATCH_BYTES) {
    throw new DocumentRefusedError(
      'batch-too-large',
      413,
      `a transactional batch of ${bytes} bytes is over Cosmos DB's ${MAX_BATCH_BYTES}-byte limit`,
    );
  }
}

/**
 * Cosmos accepts an item `ttl` of -1 (never expires) or a positive number of seconds; anything else
 * is refused here, before any write, so both stores fail the same way.
 */
export function checkDocument(document: Document, field: string): string {
  checkId(document.id);
  const ttl: unknown = document.ttl;
  if (ttl !== undefined && !(ttl === -1 || (typeof ttl === 'number' && Number.isInteger(ttl) && ttl > 0))) {
    throw new PermanentError(
      'bad-ttl',
      `document ${document.id} has ttl ${JSON.stringify(ttl)}; use -1 or seconds > 0`,
    );
  }
  return partitionKeyOf(document, field);
}

/** Size and partition are checked before anything is sent: Cosmos would reject the whole batch anyway. */
export function checkBatch(partitionKey: string, operations: readonly BatchOperation[], field: string): void {
  checkPartitionKey(partitionKey);
  if (operations.length === 0) {
    throw new PermanentError('batch-empty', 'a transactional batch needs at least one operation');
  }
  if (operations.length > MAX_BATCH_OPERATIONS) {
    throw new PermanentError(
      'batch-too-large',
      `a transactional batch holds at most ${MAX_BATCH_OPERATIONS} operations, got ${operations.length}`,
    );
  }
  for (const operation of operations) {
    if (operation.op === 'read' || operation.op === 'delete') {
      checkId(operation.id);
      continue;
    }
    const documentKey = checkDocument(operation.document, field);
    if (documentKey !== partitionKey) {
      throw new PermanentError(
        'partition-mismatch',
        `batch for partition ${partitionKey} holds document ${operation.document.id} of partition ${documentKey}`,
      );
    }
  }
}

export function checkFieldName(field: string): string {
  if (!IDENTIFIER.test(field)) {
    throw new PermanentError('bad-query', `query field ${JSON.stringify(field)} is not an identifier`);
  }
  return field;
}

export function withoutServiceFields(resource: Readonly<Record<string, unknown>>): Document {
  const document: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(resource)) {
    if (!SERVICE_FIELDS.has(key)) setOwn(document, key, value);
  }
  return document as Document;
}

/** Query results come back by partition key, then id: deterministic whatever order the store used. */
export function sortStored<T extends Document>(stored: Array<Stored<T>>, field: string): Array<Stored<T>> {
  const keyOf = (entry: Stored<T>): string => String(ownValue(entry.document, field));
  return stored.sort((a, b) => compareText(keyOf(a), keyOf(b)) || compareText(a.document.id, b.document.id));
}
