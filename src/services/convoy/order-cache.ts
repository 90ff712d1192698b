/**
 * The orders a consumer process has written or read lately, so that a session's next entry needs
 * no read (docs/architecture.md decision 3). Safe because every write carries the cached etag: a stale
 * entry fails with 412 and is reloaded. With each order it keeps the transaction records it wrote
 * last (a few, not all: a duplicate comes soon after its first delivery, and a miss costs one read or
 * the store's 409, never a wrong answer). They are valid while the order's header is the one cached
 * with them: a reload that finds another etag forgets them.
 */
import type { Stored } from '../ports';
import type { OrderDocument, TransactionDocument } from '../order-documents';

/** The records kept per order: enough for the redeliveries that follow a crash or a lost lock. */
export const CACHED_RECORDS_PER_ORDER = 16;

export interface OrderCache {
  get(orderId: string): Stored<OrderDocument> | undefined;
  set(orderId: string, stored: Stored<OrderDocument>): void;
  delete(orderId: string): void;
  record(orderId: string, transactionId: string): Stored<TransactionDocument> | undefined;
  remember(orderId: string, record: Stored<TransactionDocument>): void;
  forgetRecords(orderId: string): void;
}

interface Cached {
  stored: Stored<OrderDocument>;
  records: Map<string, Stored<TransactionDocument>>;
}

export function createOrderCache(capacity = 10_000): OrderCache {
  const entries = new Map<string, Cached>();
  return {
    get(orderId) {
      const cached = entries.get(orderId);
      if (cached !== undefined) {
        // Map keeps insertion order: re-inserting makes this the most recently used.
        entries.delete(orderId);
        entries.set(orderId, cached);
      }
      return cached?.stored;
    },
    set(orderId, stored) {
      const records = entries.get(orderId)?.records ?? new Map<string, Stored<TransactionDocument>>();
      entries.delete(orderId);
      entries.set(orderId, { stored, records });
      if (entries.size > capacity) entries.delete(entries.keys().next().value as string);
    },
    delete(orderId) {
      entries.delete(orderId);
    },
    record(orderId, transactionId) {
      return entries.get(orderId)?.records.get(transactionId);
    },
    remember(orderId, record) {
      const records = entries.get(orderId)?.records;
      if (records === undefined) return;
      records.delete(record.document.transactionId);
      records.set(record.document.transactionId, record);
      if (records.size > CACHED_RECORDS_PER_ORDER) records.delete(records.keys().next().value as string);
    },
    forgetRecords(orderId) {
      entries.get(orderId)?.records.clear();
    },
  };
}
