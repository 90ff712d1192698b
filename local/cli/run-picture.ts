/**
 * The data of the run's picture (`--html`): every entry of the input, where it came in (ledger
 * message and index), with the outcome the report's account gives it and, when the run saw it, the
 * time it met that outcome; per order those entries, the redeliveries its consumer answered as
 * duplicates, its saga's steps and compensations with their times, and what makes it a problem
 * order; the load over time; with the report's parked and dead-lettered lists and its counts.
 * Built at the end from the input file (read once more), what the store and the broker hold and the
 * telemetry timeline.
 */
import { isCompensation, type OperationName, type SagaStatus } from '../../src/domain/saga';
import { canonicalJson, entryDigest, entryMessageId } from '../../src/domain/digest';
import { parseEntryMessage } from '../../src/domain/entry';
import { groupBy } from '../../src/domain/group-by';
import { ownValue } from '../../src/domain/own-properties';
import type { TransactionRecord } from '../../src/domain/order';
import { parkIdFor } from '../../src/services/convoy/parking';
import { readSagaRecord } from '../../src/services/fulfillment/saga-record';
import { readOrderStates } from '../../src/services/order-documents';
import { QUEUE } from '../../src/services/queues';
import type { EmbeddedApp } from '../app';
import {
  accountEntries,
  heldIds,
  type AccountedEntry,
  type EntryAccount,
  type EntryOutcome,
  type HeldMessage,
} from '../entry-account';
import { transactionRecordsByOrder } from '../order-records';
import { heldAndOwed } from '../run-report';
import {
  reportParked,
  type Report,
  type ReportDeadLettered,
  type ReportParked,
  type ReportStats,
} from '../report';
import type { Load, LoadSample, TimelineRecord, TimelineRecorder } from '../timeline';
import { backlogOf } from './pacing';
import { readInputFile } from './input-file';
import { naturalCompare } from './summary';

export type { EntryOutcome };

/** The account's outcomes, in the order the page shows them. */
export const ENTRY_OUTCOMES = [
  'applied',
  'duplicate',
  'droppedByDuplicateDetection',
  'parked',
  'buffered',
  'deadLettered',
] as const satisfies readonly EntryOutcome[];
// Every outcome of the account is on the page: one added there fails to compile here until listed.
const everyOutcomeListed: Exclude<EntryOutcome, (typeof ENTRY_OUTCOMES)[number]> extends never
  ? true
  : never = true;
void everyOutcomeListed;
/** `lost`: an entry the account found no outcome for. */
export type PictureOutcome = EntryOutcome | 'lost';

export interface PictureEntry {
  /** The ledger message it came in, and its index in that message's `entries`. */
  ledgerMessageId: string;
  index: number;
  /** As the entry names them, when it does (an invalid entry may not). */
  orderId: string | null;
  transactionId: string | null;
  sequence: number | null;
  outcome: PictureOutcome;
  /**
   * What the outcome came of: the park's or the dead letter's reason; `repeat` for a duplicate (of
   * an earlier entry of the input, the same content); `ledger messageId reused` for an entry dropped
   * with its ledger message by duplicate detection.
   */
  reason: string | null;
  /** A repeat's first copy: `<ledger messageId> entries[<index>]`. */
  repeats: string | null;
  /**
   * Milliseconds from the start of the run when it met its outcome; null when no handler saw it (a
   * repeat the broker's duplicate detection dropped, a dead letter) or the run did not record when.
   */
  at: number | null;
  /** When it was buffered behind a gap, if it was. */
  bufferedAt: number | null;
  /** The messageId of the parked or dead-lettered message that holds it, when one does. */
  heldAs: string | null;
}

export interface PictureOperation {
  name: OperationName;
  kind: 'step' | 'compensation';
  status: string;
  attempts: number;
  error: string | null;
  start: number | null;
  end: number | null;
}

export interface PictureSaga {
  status: SagaStatus;
  reason: string | null;
  operations: PictureOperation[];
  transitions: Array<{ at: number | null; status: SagaStatus; reason: string | null }>;
}

/** What makes an order a problem, most pressing first (the problem list's order). */
export const PROBLEMS = [
  'lost',
  'dead-lettered',
  'needs-attention',
  'saga-unfinished',
  'waiting',
  'compensated',
  'cancelled',
  'parked',
] as const;
export type Problem = (typeof PROBLEMS)[number];

export interface PictureOrder {
  orderId: string;
  /** The order's status; null when the store holds no order of this id (each entry of it parked). */
  status: string | null;
  total: number;
  currency: string | null;
  appliedSequence: number;
  waitingFor: number | null;
  /** Its entries in input order. */
  entries: PictureEntry[];
  /** Redeliveries of its entries the consumer answered from their idempotency record (409): when, and the entry's sequence. */
  answeredDuplicates: Array<{ sequence: number | null; at: number }>;
  saga: PictureSaga | null;
  problems: Problem[];
}

export interface RunPicture {
  input: string;
  durationMs: number;
  /** The report's account: the page's per-entry outcomes must add up to it. */
  account: EntryAccount;
  orders: PictureOrder[];
  /** Entries that name no order (no string orderId): they appear under their ledger message. */
  unordered: PictureEntry[];
  parked: ReportParked[];
  deadLettered: ReportDeadLettered[];
  stats: ReportStats;
  /** The load over the run (sessions held, messages waiting). */
  load: LoadSample[];
}

/** The load the picture samples while the run goes (`TimelineRecorder.watch`). */
export function loadOf(app: Pick<EmbeddedApp, 'broker' | 'durable' | 'host'>): Load {
  const backlog = backlogOf(app);
  return {
    orderSessions: app.host.stats().byFunction.orderTransactions?.activeSessions ?? 0,
    entriesWaiting: backlog.entries,
    ledgerWaiting: backlog.ledgerMessages,
    sagasInFlight: backlog.sagas,
  };
}

/** Each held message's ids (its own, and its entry's: `heldIds`) with the reason it is held for. */
function reasonsById(messages: ReadonlyArray<HeldMessage & { reason: string }>): Map<string, string> {
  const reasons = new Map<string, string>();
  for (const message of messages) {
    for (const id of heldIds([message])) if (!reasons.has(id)) reasons.set(id, message.reason);
  }
  return reasons;
}

function stringField(raw: unknown, key: string): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const value = ownValue(raw as Record<string, unknown>, key);
  return typeof value === 'string' ? value : null;
}

function numberField(raw: unknown, key: string): number | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const value = ownValue(raw as Record<string, unknown>, key);
  return typeof value === 'number' ? value : null;
}

export interface HeldReasons {
  parked: ReadonlyMap<string, string>;
  deadLetteredEntries: ReadonlyMap<string, string>;
  deadLetteredLedger: ReadonlyMap<string, string>;
}

/** The first of `ids` a held message goes by, with its reason. */
function heldBy(
  reasons: ReadonlyMap<string, string>,
  ids: readonly string[],
): Pick<PictureEntry, 'reason' | 'heldAs'> {
  for (const id of ids) {
    const reason = reasons.get(id);
    if (reason !== undefined) return { reason, heldAs: id };
  }
  return { reason: null, heldAs: null };
}

/**
 * The account's entries (local/entry-account.ts decides each outcome) as the picture shows them:
 * named by what they carry, with the reason of their outcome and, held, the id of the message that
 * holds them; a duplicate with where its first copy came.
 */
export async function describeEntries(
  accounted: AsyncIterable<AccountedEntry>,
  held: HeldReasons,
): Promise<PictureEntry[]> {
  const entries: PictureEntry[] = [];
  /** Where each distinct entry first came, by its digest (or, invalid, its canonical JSON), as the account keys repeats. */
  const firstSeen = new Map<string, string>();
  for await (const { ledgerMessageId, index, raw, outcome } of accounted) {
    const validation = parseEntryMessage(raw);
    const entry: PictureEntry = {
      ledgerMessageId,
      index,
      orderId: validation.ok ? validation.value.orderId : stringField(raw, 'orderId'),
      transactionId: validation.ok ? validation.value.transactionId : stringField(raw, 'transactionId'),
      sequence: validation.ok ? validation.value.sequence : numberField(raw, 'sequence'),
      outcome: outcome ?? 'lost',
      reason: null,
      repeats: null,
      at: null,
      bufferedAt: null,
      heldAs: null,
    };
    entries.push(entry);
    const key = validation.ok ? entryDigest(validation.value) : `invalid\u0000${canonicalJson(raw)}`;
    const entryId = validation.ok ? [entryMessageId(validation.value.transactionId, key)] : [];
    if (outcome === 'duplicate') {
      entry.reason = 'repeat';
      entry.repeats = firstSeen.get(key) ?? null;
      continue;
    }
    if (outcome === 'droppedByDuplicateDetection') {
      entry.reason = 'ledger messageId reused';
      continue;
    }
    if (!firstSeen.has(key)) firstSeen.set(key, `${ledgerMessageId} entries[${index}]`);
    if (outcome === 'parked') {
      const parkIds = validation.ok ? [...entryId, parkIdFor('too-large', raw)] : [parkIdFor('invalid', raw)];
      Object.assign(entry, heldBy(held.parked, [...parkIds, ledgerMessageId]));
    } else if (outcome === 'deadLettered') {
      const byEntry = heldBy(held.deadLetteredEntries, entryId);
      Object.assign(
        entry,
        byEntry.heldAs === null ? heldBy(held.deadLetteredLedger, [ledgerMessageId]) : byEntry,
      );
    }
  }
  return entries;
}

type Timed = Pick<TimelineRecord, 'at'>;

/** Takes the first record matching, so that each record times one entry. */
function takeFirst<T extends Timed>(records: T[], match: (record: T) => boolean): T | undefined {
  const index = records.findIndex(match);
  return index < 0 ? undefined : records.splice(index, 1)[0];
}

/**
 * When each of an order's slots met its outcome, by transactionId: its slots are applied in
 * sequence order, one `applied` record counting those one write applied; a rejected slot when it
 * was parked; each slot buffered when its `buffered` record says.
 */
function slotTimes(
  slots: Iterable<TransactionRecord>,
  records: readonly TimelineRecord[],
  parkedAt: ReadonlyMap<string, number>,
): Map<string, Pick<PictureEntry, 'at' | 'bufferedAt'>> {
  const buffered = records.filter((r) => r.kind === 'buffered');
  const bufferedAt = (sequence: number): number | null =>
    takeFirst(buffered, (record) => record.sequence === sequence)?.at ?? null;
  const appliedTimes: number[] = [];
  for (const record of records)
    if (record.kind === 'applied') for (let i = 0; i < record.count; i++) appliedTimes.push(record.at);
  let nextApplied = 0;
  const times = new Map<string, Pick<PictureEntry, 'at' | 'bufferedAt'>>();
  for (const slot of [...slots].sort((a, b) => a.sequence - b.sequence)) {
    if (slot.outcome === 'buffered') {
      times.set(slot.transactionId, { at: bufferedAt(slot.sequence), bufferedAt: null });
      continue;
    }
    const at =
      slot.outcome === 'applied'
        ? (appliedTimes[nextApplied++] ?? null)
        : (parkedAt.get(entryMessageId(slot.transactionId, slot.digest)) ?? null);
    times.set(slot.transactionId, { at, bufferedAt: bufferedAt(slot.sequence) });
  }
  return times;
}

function problemsOf(order: Omit<PictureOrder, 'problems'>): Problem[] {
  const outcomes = new Set(order.entries.map((entry) => entry.outcome));
  const saga = order.saga?.status;
  const found = new Set<Problem>();
  if (outcomes.has('lost')) found.add('lost');
  if (outcomes.has('deadLettered')) found.add('dead-lettered');
  if (saga === 'needs-attention') found.add('needs-attention');
  if (saga === 'running' || saga === 'compensating') found.add('saga-unfinished');
  if (outcomes.has('buffered') || order.waitingFor !== null) found.add('waiting');
  if (saga === 'compensated') found.add('compensated');
  if (saga === 'cancelled') found.add('cancelled');
  if (outcomes.has('parked')) found.add('parked');
  return PROBLEMS.filter((problem) => found.has(problem));
}

export async function buildRunPicture(
  app: EmbeddedApp,
  report: Report,
  timeline: TimelineRecorder,
  input: string,
): Promise<RunPicture> {
  const durationMs = Date.now() - timeline.startedAt;
  const fromStart = (iso: string | null): number | null =>
    iso === null ? null : Math.max(0, Date.parse(iso) - timeline.startedAt);
  const documents = await readOrderStates(app.orders);
  const transactions = await transactionRecordsByOrder(app.orders);
  const parkedMessages = app.broker.peek(QUEUE.parked);
  const entryDeadLetters = app.broker.deadLetters(QUEUE.orderTransactions);
  const ledgerDeadLetters = app.broker.deadLetters(QUEUE.ledger);
  const sagaStarted = new Set(report.orders.filter((o) => o.saga !== null).map((o) => o.orderId));
  const entries = await describeEntries(
    accountEntries({
      // Read once more, as the report's account reads it; a line over a size limit stopped the run before it began.
      inputs: readInputFile(input, input, Number.MAX_SAFE_INTEGER),
      recordOf: (orderId, transactionId) => Promise.resolve(transactions.get(orderId)?.get(transactionId)),
      // The account's other sources as the report reads them.
      ...heldAndOwed(
        app.broker,
        documents.map((document) => [document.orderId, document.outbox] as const),
        sagaStarted,
      ),
    }),
    {
      parked: reasonsById(
        parkedMessages.map((message) => ({ ...message, reason: reportParked(message).reason })),
      ),
      deadLetteredEntries: reasonsById(
        entryDeadLetters.map((message) => ({ ...message, reason: message.deadLetterReason })),
      ),
      deadLetteredLedger: new Map(
        ledgerDeadLetters.map((message) => [message.messageId, message.deadLetterReason]),
      ),
    },
  );

  // Times: parks by the id they were parked under; the rest from each order's records.
  const parkedAt = new Map<string, number>();
  for (const record of timeline.records) {
    if (record.kind === 'parked' && record.messageId !== null && !parkedAt.has(record.messageId))
      parkedAt.set(record.messageId, record.at);
  }
  const records = groupBy(timeline.records, (record) => record.orderId);
  const byOrder = groupBy(entries, (entry) => entry.orderId);
  for (const [orderId, list] of byOrder) {
    const times = slotTimes(transactions.get(orderId)?.values() ?? [], records.get(orderId) ?? [], parkedAt);
    for (const entry of list) {
      const slot = entry.transactionId === null ? undefined : times.get(entry.transactionId);
      if (entry.outcome === 'applied' || entry.outcome === 'buffered' || entry.reason === 'rejected')
        Object.assign(entry, slot ?? {});
      else if (entry.outcome === 'parked') entry.at = parkedAt.get(entry.heldAs ?? '') ?? null;
    }
  }
  const unordered = entries.filter((entry) => entry.orderId === null);
  for (const entry of unordered)
    if (entry.outcome === 'parked') entry.at = parkedAt.get(entry.heldAs ?? '') ?? null;

  const reportOrders = new Map(report.orders.map((order) => [order.orderId, order]));
  const orderIds = [...new Set([...reportOrders.keys(), ...byOrder.keys()])].sort(naturalCompare);
  const orders: PictureOrder[] = [];
  for (const orderId of orderIds) {
    const order = reportOrders.get(orderId);
    const saga = order?.saga == null ? undefined : await readSagaRecord(app.orders, orderId);
    const picture: Omit<PictureOrder, 'problems'> = {
      orderId,
      status: order?.status ?? null,
      total: order?.total ?? 0,
      currency: order?.currency ?? null,
      appliedSequence: order?.appliedSequence ?? 0,
      waitingFor: order?.waitingFor ?? null,
      entries: byOrder.get(orderId) ?? [],
      answeredDuplicates: (records.get(orderId) ?? [])
        .filter((record) => record.kind === 'duplicate')
        .map((record) => ({ sequence: record.sequence, at: record.at })),
      saga:
        saga === undefined
          ? null
          : {
              status: saga.status,
              reason: saga.reason,
              operations: Object.entries(saga.steps).map(([name, step]) => ({
                name: name as OperationName,
                kind: isCompensation(name as OperationName) ? 'compensation' : 'step',
                status: step?.status ?? 'unknown',
                attempts: step?.attempts ?? 0,
                error: step?.error ?? null,
                start: fromStart(step?.startedAt ?? null),
                end: fromStart(step?.endedAt ?? null),
              })),
              transitions: saga.transitions.map((transition) => ({
                at: fromStart(transition.at),
                status: transition.status,
                reason: transition.reason,
              })),
            },
    };
    orders.push({ ...picture, problems: problemsOf(picture) });
  }
  return {
    input,
    durationMs,
    account: report.stats.account,
    orders,
    unordered,
    parked: report.parked,
    deadLettered: report.deadLettered,
    stats: report.stats,
    load: [...timeline.samples],
  };
}
