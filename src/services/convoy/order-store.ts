/**
 * The consumer's reads and writes of one order's partition, through the session's cache
 * (order-cache.ts). A change is written in one transactional batch: the header (created, or
 * replaced on its etag), the incoming entry's transaction record (created: the store's 409 on its
 * id says the entry was seen before) and the records the change alters (released from the buffer,
 * amended lines), replaced on their etag when it is known. All or nothing.
 */
import { PermanentError } from '../../domain/errors';
import type { KnownRecords, RecordWrites, TransactionRecord } from '../../domain/order';
import {
  readOrderHeader,
  readTransactionDocument,
  transactionDocument,
  transactionRecordOf,
  type OrderDocument,
  type TransactionDocument,
} from '../order-documents';
import type { BatchOperation, DocumentContainer, Stored } from '../ports';
import type { OrderCache } from './order-cache';

export type BatchOutcome =
  | { kind: 'written' }
  /** Another writer got there first: decide again on what it wrote. */
  | { kind: 'lost' }
  /** The incoming entry's record exists (409): the entry was seen before. */
  | { kind: 'record-exists' };

export interface OrderStore {
  orders: DocumentContainer;
  cache: OrderCache;
}

/** The header and the records of one change, in one transactional batch. */
export async function writeOrderBatch(
  deps: OrderStore,
  document: OrderDocument,
  current: Stored<OrderDocument> | undefined,
  writes: RecordWrites,
): Promise<BatchOutcome> {
  const orderId = document.orderId;
  const created = writes.created === null ? [] : [transactionDocument(orderId, writes.created)];
  const changed = writes.changed.map((record) => transactionDocument(orderId, record));
  const records = [...created, ...changed];
  const operations: BatchOperation[] = [
    ...created.map((record): BatchOperation => ({ op: 'create', document: record })),
    ...changed.map((record): BatchOperation => {
      const etag = deps.cache.record(orderId, record.transactionId)?.etag;
      return etag === undefined
        ? { op: 'replace', document: record }
        : { op: 'replace', document: record, ifMatch: etag };
    }),
    current === undefined ? { op: 'create', document } : { op: 'replace', document, ifMatch: current.etag },
  ];
  const result = await deps.orders.batch(orderId, operations);
  if (result.ok) {
    const headerEtag = result.results[records.length].etag;
    if (headerEtag === undefined) {
      throw new PermanentError(
        'missing-etag',
        `the batch for order ${orderId} returned no etag for the order`,
      );
    }
    deps.cache.set(orderId, { document, etag: headerEtag });
    records.forEach((record, index) => {
      const etag = result.results[index].etag;
      if (etag !== undefined) deps.cache.remember(orderId, { document: record, etag });
    });
    return { kind: 'written' };
  }
  const failed = result.results.findIndex((operation) => operation.status !== 424);
  const status = result.results[failed]?.status;
  if (failed === 0 && created.length > 0 && status === 409) return { kind: 'record-exists' };
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
  const stored = await readTransactionDocument(deps.orders, orderId, transactionId);
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
  await Promise.all(
    transactionIds.map(async (transactionId) => {
      const stored =
        deps.cache.record(orderId, transactionId) ?? (await readRecord(deps, orderId, transactionId));
      if (stored !== undefined) known.set(transactionId, transactionRecordOf(stored.document));
    }),
  );
  return known;
}

/** The header: the first attempt takes the session's cached copy, a later one reads it again. */
export async function readOrder(
  deps: OrderStore,
  orderId: string,
  attempt: number,
): Promise<Stored<OrderDocument> | undefined> {
  return attempt === 1 ? deps.cache.get(orderId) : reloadOrder(deps, orderId);
}

/** The header as stored now; a header with another etag than the cached one voids the cached records. */
export async function reloadOrder(
  deps: OrderStore,
  orderId: string,
): Promise<Stored<OrderDocument> | undefined> {
  const stored = await readOrderHeader(deps.orders, orderId);
  if (stored === undefined) {
    deps.cache.delete(orderId);
    return undefined;
  }
  if (deps.cache.get(orderId)?.etag !== stored.etag) deps.cache.forgetRecords(orderId);
  deps.cache.set(orderId, stored);
  return stored;
}
