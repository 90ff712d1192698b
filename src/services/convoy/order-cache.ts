/**
 * The orders a consumer process has written or read lately, so that a session's next entry needs
 * no read (docs/architecture.md decision 3). Safe because every write carries the cached etag: a stale entry fails
 * with 412 and is reloaded, and a stale entry can only lack transactions, never invent a duplicate.
 */
import type { Stored } from '../ports';
import type { OrderDocument } from '../order-documents';

export interface OrderCache {
  get(orderId: string): Stored<OrderDocument> | undefined;
  set(orderId: string, stored: Stored<OrderDocument>): void;
  delete(orderId: string): void;
}

export function createOrderCache(capacity = 10_000): OrderCache {
  const entries = new Map<string, Stored<OrderDocument>>();
  return {
    get(orderId) {
      const stored = entries.get(orderId);
      if (stored !== undefined) {
        // Map keeps insertion order: re-inserting makes this the most recently used.
        entries.delete(orderId);
        entries.set(orderId, stored);
      }
      return stored;
    },
    set(orderId, stored) {
      entries.delete(orderId);
      entries.set(orderId, stored);
      if (entries.size > capacity) entries.delete(entries.keys().next().value as string);
    },
    delete(orderId) {
      entries.delete(orderId);
    },
  };
}
