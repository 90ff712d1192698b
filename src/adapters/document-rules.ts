/**
 * Rules both document stores apply the same way, so the embedded container and the Cosmos adapter
 * accept, reject and return exactly the same things (the contract suite holds them to it).
 */
import { compareText } from '../domain/compare';
import { PermanentError } from '../domain/errors';
import { MAX_BATCH_OPERATIONS } from '../services/ports';
import type { BatchOperation, Document, Stored } from '../services/ports';
import { ownValue, setOwn } from '../domain/records';

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

export function checkId(id: unknown): string {
  if (typeof id !== 'string' || id === '') {
    throw new PermanentError('bad-id', `document id ${JSON.stringify(id)} is not a non-empty string`);
  }
  return id;
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
