import { hash } from 'node:crypto';
import type { Entry } from './entry';
import { ownValue } from './own-properties';

/**
 * JSON with object keys sorted at every depth and no whitespace: equal content, equal text. For a
 * JSON value it is the text of RFC 8785 (JSON Canonicalization Scheme), as the `canonicalize`
 * package writes it (tests/unit/digest.test.ts). Written with a stack of its own, not recursion: a
 * parked entry is hashed whole, however deep it nests.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const out: string[] = [];
  /** What is left to write, last first: a value, or text as it stands. */
  const work: Array<{ text: string } | { value: unknown }> = [{ value }];
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    const current = item.value;
    if (Array.isArray(current)) {
      work.push({ text: ']' });
      for (let i = current.length - 1; i >= 0; i--) {
        work.push({ value: current[i] });
        if (i > 0) work.push({ text: ',' });
      }
      work.push({ text: '[' });
    } else if (current !== null && typeof current === 'object') {
      const record = current as Record<string, unknown>;
      const keys = Object.keys(record)
        .filter((key) => ownValue(record, key) !== undefined)
        .sort();
      work.push({ text: '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        work.push({ value: ownValue(record, keys[i]) });
        work.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:` });
      }
      work.push({ text: '{' });
    } else {
      // As Array.prototype.join writes an undefined element: nothing.
      out.push(JSON.stringify(current) ?? '');
    }
  }
  return out.join('');
}

/** SHA-256 of the entry's canonical JSON, hex. Tells a duplicate (same digest) from a reused id
 * (another). Stored in every transaction record for ever: the canonical text must never change. */
export function entryDigest(entry: Entry): string {
  return sha256Hex(canonicalJson(entry));
}

/** `crypto.hash` is in Node 20.12 and later, the floor of package.json `engines`. */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/**
 * The `messageId` an entry travels under on `order-transactions` (docs/messages.md (the ledger message)). The digest is in
 * it so that the broker's duplicate detection never silently drops a reused id with new content.
 */
export function entryMessageId(transactionId: string, digest: string): string {
  return `${transactionId}:${digest.slice(0, 16)}`;
}
