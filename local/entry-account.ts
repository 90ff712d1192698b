/**
 * `stats.account` of the run report (docs/cli.md): every entry of the input accounted for once.
 * Built at the end from what the input was and what the store and the broker hold, not from
 * counters bumped along the way, so that redeliveries, retries and faults cannot make it drift:
 * an entry is `applied`, `parked` (any reason, `rejected` included) or `buffered` by its order's
 * idempotency record; `parked` by a parked message made of it; `deadLettered` when its message, or
 * its ledger message, is in a dead-letter queue and nothing else decided it; `duplicate` when it is
 * an exact repeat of an earlier entry of the input; `droppedByDuplicateDetection` when the `ledger`
 * queue dropped its ledger message under the messageId of an earlier one and it repeats no entry of
 * the input (npm start refuses such input: local/cli/input-file.ts). The six add up to `entries`
 * unless something was lost; the e2e tests hold that they do.
 *
 * An entry's message can be dead-lettered after its outcome was reached: its write (or park) is
 * done but the completion is lost, and so is every redelivery's, until the deliveries run out. Such
 * an entry keeps the one outcome it reached; its dead letter is noted (`deadLetteredAfterOutcome`):
 * a replay of it would find the entry done. Unless its write's effects are not all done: the write
 * puts them in its order's outbox (src/services/order-documents.ts, `Outbox`), the next delivery on
 * the order does them, and until then the entry is `deadLettered`, waiting for that replay. An outbox
 * effect is done when the parked queue holds the park, or when the order's saga exists: a stored
 * outbox may still list a start that was done, as the consumer does not write again only to forget
 * one.
 *
 * A held message (parked or dead-lettered) is known by its messageId and, when its body is an entry,
 * by the entry's own message id too: an operator's replay sends it under a fresh id
 * (src/services/operations/held-messages.ts), and parked or dead-lettered again it keeps that id.
 */
import { canonicalJson, entryDigest, entryMessageId } from '../src/domain/digest';
import { parseEntryMessage, type Entry } from '../src/domain/entry';
import { ownValue } from '../src/domain/own-properties';
import { parkIdFor } from '../src/services/convoy/parking';
import type { TransactionRecord } from '../src/domain/order';
import type { Outbox } from '../src/services/order-documents';

/** The per-entry account of docs/cli.md (`stats.account`): every entry of the input ends in exactly one outcome. */
export interface EntryAccount {
  entries: number;
  applied: number;
  duplicate: number;
  parked: number;
  buffered: number;
  deadLettered: number;
  droppedByDuplicateDetection: number;
}

export type EntryOutcome = Exclude<keyof EntryAccount, 'entries'>;

/** A ledger message as the input had it. */
export interface AccountInput {
  messageId: string;
  body: unknown;
}

/** A parked or dead-lettered message as the account reads it. */
export interface HeldMessage {
  messageId: string;
  body: unknown;
}

/** What an order's outbox still owes at the end of a run: the effects it lists that were not done. */
export interface OwedEffects {
  /** Parks the parked queue does not hold, each as the message it would park. */
  parks: HeldMessage[];
  /** The saga start, the order having no saga. */
  sagaStart: boolean;
}

export interface AccountSources {
  /** The input's ledger messages in the order they were sent, read once. */
  inputs: Iterable<AccountInput>;
  /** Positions in `inputs` (from 0) of the ledger messages the `ledger` queue dropped as duplicates. */
  droppedLedgerMessages: ReadonlySet<number>;
  /** The order's idempotency record of the transaction (a point read), if there is one. */
  recordOf: (orderId: string, transactionId: string) => Promise<TransactionRecord | undefined>;
  /** By orderId, what each order's outbox still owes (`owedEffects`); orders that owe nothing are absent. */
  owedEffects: ReadonlyMap<string, OwedEffects>;
  /** The parked messages' ids (heldIds). */
  parkedIds: ReadonlySet<string>;
  /** The ids of the messages in the dead-letter queue of `order-transactions` (heldIds). */
  deadLetteredEntryIds: ReadonlySet<string>;
  /** messageIds in the dead-letter queue of `ledger`. */
  deadLetteredLedgerIds: ReadonlySet<string>;
}

/** One entry of the input as the account decides it. */
export interface AccountedEntry {
  /** The ledger message it came in, and its index in that message's `entries`. */
  ledgerMessageId: string;
  index: number;
  raw: unknown;
  /** Undefined when nothing accounts for it: it was lost. */
  outcome: EntryOutcome | undefined;
  /** Counted by an outcome it had reached, its message is in the dead-letter queue as well. */
  deadLetteredAfterOutcome: boolean;
}

export interface AccountResult {
  account: EntryAccount;
  /** The input's ledger messages, and their distinct messageIds. */
  ledgerMessages: number;
  ledgerMessageIds: Set<string>;
  /** Entries counted by an outcome they had reached whose message was dead-lettered as well. */
  deadLetteredAfterOutcome: number;
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

/**
 * What an order's stored outbox still owes: its parks the parked queue does not hold (by either id
 * `heldIds` gives), and its saga start when the order has no saga. Undefined when it owes nothing.
 */
export function owedEffects(
  outbox: Outbox | null,
  parkedIds: ReadonlySet<string>,
  sagaStarted: boolean,
): OwedEffects | undefined {
  if (outbox === null) return undefined;
  const parks = outbox.parks
    .map((park): HeldMessage => ({ messageId: park.messageId, body: park.body }))
    .filter((park) => ![...heldIds([park])].some((id) => parkedIds.has(id)));
  const sagaStart = outbox.startFulfillment !== null && !sagaStarted;
  return parks.length > 0 || sagaStart ? { parks, sagaStart } : undefined;
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

/**
 * Whether the replay of this entry's dead letter is what its order's owed effects wait for: its own
 * park, the saga start, or a park of an entry whose own message is not dead-lettered (the next
 * delivery on the order does those). A park owed to another dead-lettered entry waits for that one.
 */
function owesEffects(owed: OwedEffects | undefined, entryId: string, sources: AccountSources): boolean {
  if (owed === undefined) return false;
  if (owed.sagaStart) return true;
  return owed.parks.some((park) => {
    const ids = heldIds([park]);
    return ids.has(entryId) || ![...ids].some((id) => sources.deadLetteredEntryIds.has(id));
  });
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
    if (
      sources.deadLetteredEntryIds.has(messageId) &&
      owesEffects(sources.owedEffects.get(entry.orderId), messageId, sources)
    )
      return 'deadLettered';
    return record.outcome === 'rejected' ? 'parked' : record.outcome;
  }
  if (sources.parkedIds.has(messageId) || sources.parkedIds.has(parkIdFor('too-large', raw))) return 'parked';
  if (sources.deadLetteredEntryIds.has(messageId)) return 'deadLettered';
  return undefined;
}

/** Every entry of the input, in input order, with the outcome the account gives it. */
export async function* accountEntries(sources: AccountSources): AsyncGenerator<AccountedEntry> {
  const seenDigests = new Set<string>();
  const seenInvalid = new Set<string>();
  let position = 0;
  for (const input of sources.inputs) {
    const dropped = sources.droppedLedgerMessages.has(position);
    position += 1;
    const entries = entriesOf(input.body);
    if (entries === undefined) continue;
    for (const [index, raw] of entries.entries()) {
      const accounted: AccountedEntry = {
        ledgerMessageId: input.messageId,
        index,
        raw,
        outcome: undefined,
        deadLetteredAfterOutcome: false,
      };
      const validation = parseEntryMessage(raw);
      const digest = validation.ok ? entryDigest(validation.value) : undefined;
      const [seen, key] = digest === undefined ? [seenInvalid, canonicalJson(raw)] : [seenDigests, digest];
      if (seen.has(key)) {
        accounted.outcome = 'duplicate';
      } else if (dropped) {
        // Never delivered, and no copy of it was: lost to the reused messageId. Not remembered as
        // seen, so that a later copy that does arrive is counted by what became of it.
        accounted.outcome = 'droppedByDuplicateDetection';
      } else {
        seen.add(key);
        if (validation.ok && digest !== undefined) {
          accounted.outcome = await outcomeOfValid(validation.value, digest, raw, sources);
          accounted.deadLetteredAfterOutcome =
            accounted.outcome !== undefined &&
            accounted.outcome !== 'deadLettered' &&
            sources.deadLetteredEntryIds.has(entryMessageId(validation.value.transactionId, digest));
        } else if (sources.parkedIds.has(parkIdFor('invalid', raw))) {
          accounted.outcome = 'parked';
        }
        // Not forwarded: its ledger message was dead-lettered, or parked whole.
        if (accounted.outcome === undefined && sources.deadLetteredLedgerIds.has(input.messageId))
          accounted.outcome = 'deadLettered';
        if (accounted.outcome === undefined && sources.parkedIds.has(input.messageId))
          accounted.outcome = 'parked';
      }
      yield accounted;
    }
  }
}

export async function buildAccount(sources: AccountSources): Promise<AccountResult> {
  const account: EntryAccount = {
    entries: 0,
    applied: 0,
    duplicate: 0,
    parked: 0,
    buffered: 0,
    deadLettered: 0,
    droppedByDuplicateDetection: 0,
  };
  let ledgerMessages = 0;
  const ledgerMessageIds = new Set<string>();
  function* counted(): Generator<AccountInput> {
    for (const input of sources.inputs) {
      ledgerMessages += 1;
      ledgerMessageIds.add(input.messageId);
      yield input;
    }
  }
  let deadLetteredAfterOutcome = 0;
  for await (const entry of accountEntries({ ...sources, inputs: counted() })) {
    account.entries += 1;
    if (entry.outcome !== undefined) account[entry.outcome] += 1;
    if (entry.deadLetteredAfterOutcome) deadLetteredAfterOutcome += 1;
  }
  return { account, deadLetteredAfterOutcome, ledgerMessages, ledgerMessageIds };
}
