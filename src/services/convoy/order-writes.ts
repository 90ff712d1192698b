/**
 * The writes of one change to an order, in one transactional batch of its partition: the header
 * (created, or replaced on its etag), the incoming entry's transaction record (created: the store's
 * 409 on its id says the entry was seen before) and the records the change alters (released from
 * the buffer, amended lines), replaced on their etag when it is known. All or nothing.
 */
import { PermanentError } from '../../domain/errors';
import type { KnownRecords, RecordWrites, TransactionRecord } from '../../domain/order';
import {
  transactionDocument,
  transactionRecordId,
  transactionRecordOf,
  type OrderDocument,
  type TransactionDocument,
} from '../order-documents';
import type { BatchOperation, DocumentContainer, Stored } from '../ports';
import type { OrderCache } from './order-cache';

export type BatchOutcome =
  | { kind: 'written' }
  | { kind: 'lost' }
  /** The incoming entry's record exists: it was seen, this is what the store holds. */
  | { kind: 'seen'; record: TransactionRecord };

export interface OrderStore {
  orders: DocumentContainer;
  cache: OrderCache;
}

export async function writeChange(
  deps: OrderStore,
  document: OrderDocument,
  current: Stored<OrderDocument> | undefined,
  writes: RecordWrites,
): Promise<BatchOutcome> {
  const orderId = document.orderId;
  // One pass, no intermediate arrays: this runs for every entry.
  const records: TransactionDocument[] = [];
  const operations: BatchOperation[] = [];
  if (writes.created !== null) {
    const record = transactionDocument(orderId, writes.created);
    records.push(record);
    operations.push({ op: 'create', document: record });
  }
  for (const changed of writes.changed) {
    const record = transactionDocument(orderId, changed);
    records.push(record);
    const etag = deps.cache.record(orderId, record.transactionId)?.etag;
    operations.push(
      etag === undefined
        ? { op: 'replace', document: record }
        : { op: 'replace', document: record, ifMatch: etag },
    );
  }
  operations.push(
    current === undefined ? { op: 'create', document } : { op: 'replace', document, ifMatch: current.etag },
  );
  const result = await deps.orders.batch(orderId, operations);
  const headerResult = result.results[records.length];
  if (result.ok) {
    if (headerResult.etag === undefined) {
      throw new PermanentError(
        'missing-etag',
        `the batch for order ${orderId} returned no etag for the order`,
      );
    }
    deps.cache.set(orderId, { document, etag: headerResult.etag });
    for (let index = 0; index < records.length; index += 1) {
      const etag = result.results[index].etag;
      if (etag !== undefined) deps.cache.remember(orderId, { document: records[index], etag });
    }
    return { kind: 'written' };
  }
  const failed = result.results.findIndex((operation) => operation.status !== 424);
  const status = result.results[failed]?.status;
  if (failed === 0 && writes.created !== null && status === 409) {
    const seen = await readRecord(deps, orderId, writes.created.transactionId);
    // Gone again (it never is: records have no ttl): decide again on what is stored.
    return seen === undefined
      ? { kind: 'lost' }
      : { kind: 'seen', record: transactionRecordOf(seen.document) };
  }
  // Another writer got there first: decide again on what it wrote.
  if (status === 409 || status === 412 || (status === 404 && failed === records.length))
    return { kind: 'lost' };
  throw new PermanentError(
    'unexpected-batch-result',
    `batch for order ${orderId} failed with statuses ${result.results.map((r) => r.status).join(', ')}`,
  );
}

/** One record by a point read in the order's partition, remembered when found. */
export async function readRecord(
  deps: OrderStore,
  orderId: string,
  transactionId: string,
): Promise<Stored<TransactionDocument> | undefined> {
  const stored = await deps.orders.read<TransactionDocument>(orderId, transactionRecordId(transactionId));
  if (stored !== undefined) deps.cache.remember(orderId, stored);
  return stored;
}

/** The records a decision asks for: from the cache where it has them, else by point reads. */
export async function knownRecords(
  deps: OrderStore,
  orderId: string,
  transactionIds: readonly string[],
): Promise<KnownRecords> {
  const known = new Map<string, TransactionRecord>();
  // Most decisions need none (an entry that amends nothing): no promises for them.
  if (transactionIds.length === 0) return known;
  await Promise.all(
    transactionIds.map(async (transactionId) => {
      const stored =
        deps.cache.record(orderId, transactionId) ?? (await readRecord(deps, orderId, transactionId));
      if (stored !== undefined) known.set(transactionId, transactionRecordOf(stored.document));
    }),
  );
  return known;
}

/** The header as stored now; a header with another etag than the cached one voids the cached records. */
export async function reloadOrder(
  deps: OrderStore,
  orderId: string,
): Promise<Stored<OrderDocument> | undefined> {
  const stored = await deps.orders.read<OrderDocument>(orderId, orderId);
  if (stored === undefined) {
    deps.cache.delete(orderId);
    return undefined;
  }
  if (deps.cache.get(orderId)?.etag !== stored.etag) deps.cache.forgetRecords(orderId);
  deps.cache.set(orderId, stored);
  return stored;
}
