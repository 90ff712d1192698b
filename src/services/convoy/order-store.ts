/**
 * The consumer's reads and writes of one order's partition, through the session's cache
 * (order-cache.ts). A change is written in one transactional batch: the incoming entry's transaction
 * record (created: the store's 409 on its id says the entry was seen before, on its slot that another
 * transaction holds the slot), the records the change alters (released from the buffer, amended
 * lines), replaced on their etag when it is known, and, when the change needs it, the gap document
 * and the header (created, or replaced on its etag). All or nothing.
 *
 * The header is a snapshot (docs/documents.md, "The header and the records"): an entry that only
 * takes the next slot, with no buffer, no status change and no effect to dispatch, writes its record
 * alone, carrying the order's totals. The record's unique slot arbitrates two writers of that slot;
 * the gap document keeps a writer who has not seen the buffer from taking the awaited slot alone.
 */
import { PermanentError } from '../../domain/errors';
import type { KnownRecords, RecordWrites, TransactionRecord } from '../../domain/order';
import {
  gapDocument,
  gapSlotOf,
  ORDER_GAP_ID,
  readRolledForward,
  readTransactionDocument,
  SNAPSHOT_INTERVAL,
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
  // Without a record created, nothing but the header's etag arbitrates the change.
  const withHeader =
    current === undefined || writes.created === null || needsHeader(current.document, document);
  // A record written without the header carries the totals a reader rolls forward to.
  const totals = withHeader ? undefined : { lineCount: document.lineCount, total: document.total };
  const created = writes.created === null ? [] : [transactionDocument(orderId, writes.created, totals)];
  const changed = writes.changed.map((record) =>
    transactionDocument(orderId, record, deps.cache.record(orderId, record.transactionId)?.document.after),
  );
  const records = [...created, ...changed];
  // The gap document moves first, so that a record may take the slot it frees in the same batch.
  const gap = withHeader ? gapOperations(orderId, current?.document, document) : [];
  const operations: BatchOperation[] = [
    ...gap,
    ...created.map((record): BatchOperation => ({ op: 'create', document: record })),
    ...changed.map((record): BatchOperation => {
      const etag = deps.cache.record(orderId, record.transactionId)?.etag;
      return etag === undefined
        ? { op: 'replace', document: record }
        : { op: 'replace', document: record, ifMatch: etag };
    }),
  ];
  if (current === undefined) operations.push({ op: 'create', document });
  else if (withHeader) operations.push({ op: 'replace', document, ifMatch: current.etag });
  const result = await deps.orders.batch(orderId, operations);
  const firstRecord = gap.length;
  if (result.ok) {
    let headerEtag = current?.etag;
    if (withHeader) {
      headerEtag = result.results[firstRecord + records.length].etag;
      if (headerEtag === undefined) {
        throw new PermanentError(
          'missing-etag',
          `the batch for order ${orderId} returned no etag for the order`,
        );
      }
    }
    // Without the header, the cached copy runs ahead of the stored one under the stored etag.
    deps.cache.set(orderId, { document, etag: headerEtag as string });
    records.forEach((record, index) => {
      const etag = result.results[firstRecord + index].etag;
      if (etag !== undefined) deps.cache.remember(orderId, { document: record, etag });
    });
    return { kind: 'written' };
  }
  const failed = result.results.findIndex((operation) => operation.status !== 424);
  const status = result.results[failed]?.status;
  if (failed === firstRecord && created.length > 0 && status === 409) return { kind: 'record-exists' };
  const header = firstRecord + records.length;
  if (status === 409 || status === 412 || (status === 404 && (failed === header || failed < firstRecord)))
    return { kind: 'lost' };
  throw new PermanentError(
    'unexpected-batch-result',
    `batch for order ${orderId} failed with statuses ${result.results.map((r) => r.status).join(', ')}`,
  );
}

/**
 * Whether a change must write the header: anything but the next slots taken with no buffer before or
 * after, no status, outbox or correlation change, and no snapshot due.
 */
function needsHeader(before: OrderDocument, after: OrderDocument): boolean {
  return (
    before.status !== after.status ||
    before.finalSequence !== after.finalSequence ||
    before.buffered.length > 0 ||
    after.buffered.length > 0 ||
    before.correlationId !== after.correlationId ||
    JSON.stringify(before.outbox) !== JSON.stringify(after.outbox) ||
    Math.floor(before.appliedSequence / SNAPSHOT_INTERVAL) !==
      Math.floor(after.appliedSequence / SNAPSHOT_INTERVAL)
  );
}

/** The gap document's create, move or delete, as the order's awaited slot changes. */
function gapOperations(
  orderId: string,
  before: OrderDocument | undefined,
  after: OrderDocument,
): BatchOperation[] {
  const from = gapSlotOf(before);
  const to = gapSlotOf(after);
  if (from === to) return [];
  if (to === null) return [{ op: 'delete', id: ORDER_GAP_ID }];
  if (from === null) return [{ op: 'create', document: gapDocument(orderId, to) }];
  return [{ op: 'replace', document: gapDocument(orderId, to) }];
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

/**
 * The order as stored now: its header rolled forward over the records past it. The cached records
 * are forgotten: another writer may have replaced one (an amended line) without touching the header.
 */
export async function reloadOrder(
  deps: OrderStore,
  orderId: string,
): Promise<Stored<OrderDocument> | undefined> {
  const stored = await readRolledForward(deps.orders, orderId);
  if (stored === undefined) {
    deps.cache.delete(orderId);
    return undefined;
  }
  deps.cache.forgetRecords(orderId);
  deps.cache.set(orderId, stored);
  return stored;
}
