import { createHash } from 'node:crypto';
import type { Entry } from './entry';

/** JSON with object keys sorted at every depth and no whitespace: equal content, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the canonical entry, hex. Tells a duplicate (same digest) from a reused id (another). */
export function entryDigest(entry: Entry): string {
  return createHash('sha256').update(canonicalJson(entry)).digest('hex');
}

/**
 * The `messageId` an entry travels under on `order-transactions` (CONTRACTS 1.1). The digest is in
 * it so that the broker's duplicate detection never silently drops a reused id with new content.
 */
export function entryMessageId(transactionId: string, digest: string): string {
  return `${transactionId}:${digest.slice(0, 16)}`;
}
