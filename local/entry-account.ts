/**
 * `stats.account` of the run report (docs/cli.md): every entry of the input accounted for once.
 * Built at the end from what the input was and what the store and the broker hold, not from
 * counters bumped along the way, so that redeliveries, retries and faults cannot make it drift:
 * an entry is `applied`, `parked` (any reason, `rejected` included) or `buffered` by its order's
 * idempotency record; `parked` by a parked message made of it; `deadLettered` when its message, or
 * its ledger message, is in a dead-letter queue; `duplicate` when it is an exact repeat of an earlier
 * entry of the input (or its ledger message was dropped by duplicate detection). The five add up to
 * `entries` unless something was lost; the e2e tests hold that they do.
 *
 * A held message (parked or dead-lettered) is known by its messageId and, when its body is an entry,
 * by the entry's own message id too: an operator's replay sends it under a fresh id
 * (src/services/operations/held-messages.ts), and parked or dead-lettered again it keeps that id.
 * An entry whose write committed but whose effects (its park, the saga start) are still in its
 * order's outbox while its message is dead-lettered is `deadLettered`: it waits for the replay that
 * does them. Applied with nothing left to do and dead-lettered as well, it has two outcomes.
 */
import { canonicalJson, entryDigest, entryMessageId } from '../src/domain/digest';
import { parseEntryMessage, type Entry } from '../src/domain/entry';
import { ownValue } from '../src/domain/own-properties';
import { parkIdFor } from '../src/services/convoy/parking';
import type { TransactionRecord } from '../src/domain/order';
import type { OrderDocument } from '../src/services/order-documents';

/** The per-entry account of docs/cli.md (`stats.account`): every entry of the input ends in exactly one outcome. */
export interface EntryAccount {
  entries: number;
  applied: number;
  duplicate: number;
  parked: number;
  buffered: number;
  deadLettered: number;
}

export type EntryOutcome = Exclude<keyof EntryAccount, 'entries'>;

/** A ledger message as the input had it. */
export interface AccountInput {
  messageId: string;
  body: unknown;
}

export interface AccountSources {
  /** The input's ledger messages in the order they were sent, read once. */
  inputs: Iterable<AccountInput>;
  /** The order's idempotency record of the transaction (a point read), if there is one. */
  recordOf: (orderId: string, transactionId: string) => Promise<TransactionRecord | undefined>;
  /** Orders whose outbox still holds effects (a park, the saga start) not yet done. */
  effectsPending: ReadonlySet<string>;
  /** The parked messages' ids (heldIds). */
  parkedIds: ReadonlySet<string>;
  /** The ids of the messages in the dead-letter queue of `order-transactions` (heldIds). */
  deadLetteredEntryIds: ReadonlySet<string>;
  /** messageIds in the dead-letter queue of `ledger`. */
  deadLetteredLedgerIds: ReadonlySet<string>;
}

export interface AccountResult {
  account: EntryAccount;
  /** The input's ledger messages, and their distinct messageIds. */
  ledgerMessages: number;
  ledgerMessageIds: Set<string>;
  /** Entries that ended applied and also dead-lettered: none, or something took effect twice. */
  twoOutcomes: number;
}

/** A parked or dead-lettered message as the account reads it. */
export interface HeldMessage {
  messageId: string;
  body: unknown;
}

/** Each held message's id, and for one whose body is an entry, the id that entry travels under. */
export function heldIds(messages: readonly HeldMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    ids.add(message.messageId);
    const entry = parseEntryMessage(message.body);
    if (entry.ok) ids.add(entryMessageId(entry.value.transactionId, entryDigest(entry.value)));
  }
  return ids;
}

/** The orders whose outbox still holds effects not yet done. */
export function ordersWithEffectsPending(orders: Iterable<OrderDocument>): Set<string> {
  const pending = new Set<string>();
  for (const order of orders) {
    const outbox = order.outbox;
    if (outbox !== null && (outbox.parks.length > 0 || outbox.startFulfillment !== null))
      pending.add(order.orderId);
  }
  return pending;
}

/**
 * The entries array of a ledger body, read as the ledger processor reads it (JSON text too), and,
 * past a byte-order mark it would park the message for, the entries the account then counts parked.
 */
export function entriesOf(body: unknown): unknown[] | undefined {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body.startsWith('\ufeff') ? body.slice(1) : body);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = ownValue(value as Record<string, unknown>, 'entries');
  return Array.isArray(entries) ? entries : undefined;
}

async function outcomeOfValid(
  entry: Entry,
  digest: string,
  raw: unknown,
  sources: AccountSources,
): Promise<EntryOutcome | undefined> {
  const record = await sources.recordOf(entry.orderId, entry.transactionId);
  const messageId = entryMessageId(entry.transactionId, digest);
  if (record !== undefined && record.digest === digest) {
    if (sources.deadLetteredEntryIds.has(messageId) && sources.effectsPending.has(entry.orderId))
      return 'deadLettered';
    return record.outcome === 'rejected' ? 'parked' : record.outcome;
  }
  if (sources.parkedIds.has(messageId) || sources.parkedIds.has(parkIdFor('too-large', raw))) return 'parked';
  if (sources.deadLetteredEntryIds.has(messageId)) return 'deadLettered';
  return undefined;
}

export async function buildAccount(sources: AccountSources): Promise<AccountResult> {
  const account: EntryAccount = {
    entries: 0,
    applied: 0,
    duplicate: 0,
    parked: 0,
    buffered: 0,
    deadLettered: 0,
  };
  const seenDigests = new Set<string>();
  const seenInvalid = new Set<string>();
  const seenLedgerIds = new Set<string>();
  let ledgerMessages = 0;
  let twoOutcomes = 0;
  for (const input of sources.inputs) {
    ledgerMessages += 1;
    const entries = entriesOf(input.body);
    const droppedByDetection = seenLedgerIds.has(input.messageId);
    seenLedgerIds.add(input.messageId);
    if (entries === undefined) continue;
    for (const raw of entries) {
      account.entries += 1;
      const validation = parseEntryMessage(raw);
      const digest = validation.ok ? entryDigest(validation.value) : undefined;
      const [seen, key] = digest === undefined ? [seenInvalid, canonicalJson(raw)] : [seenDigests, digest];
      if (seen.has(key) || droppedByDetection) {
        account.duplicate += 1;
        continue;
      }
      seen.add(key);
      let outcome: EntryOutcome | undefined;
      if (validation.ok && digest !== undefined) {
        outcome = await outcomeOfValid(validation.value, digest, raw, sources);
        if (
          outcome === 'applied' &&
          sources.deadLetteredEntryIds.has(entryMessageId(validation.value.transactionId, digest))
        ) {
          twoOutcomes += 1;
        }
      } else if (sources.parkedIds.has(parkIdFor('invalid', raw))) {
        outcome = 'parked';
      }
      // Not forwarded: its ledger message was dead-lettered, or parked whole.
      if (outcome === undefined && sources.deadLetteredLedgerIds.has(input.messageId))
        outcome = 'deadLettered';
      if (outcome === undefined && sources.parkedIds.has(input.messageId)) outcome = 'parked';
      if (outcome !== undefined) account[outcome] += 1;
    }
  }
  return { account, twoOutcomes, ledgerMessages, ledgerMessageIds: seenLedgerIds };
}
