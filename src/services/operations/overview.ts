/**
 * The pipeline at a glance, for the operators' console (`GET /api/ops/overview`, docs/operations.md
 * "The console"): each queue's backlog with its oldest message's age, per session too; the orders
 * waiting on a gap; parked and dead-lettered messages grouped by reason; the sagas waiting for a
 * person. Read through the ports only, so Azure and the embedded runtime answer alike.
 */
import { compareText } from '../../domain/compare';
import { groupBy } from '../../domain/group-by';
import { waitingFor } from '../../domain/order';
import type { SagaStatus } from '../../domain/saga';
import { QUEUE } from '../queues';
import { GAP_KIND, readOrderState, type GapDocument } from '../order-documents';
import type { DocumentContainer } from '../ports';
import type { SagaRecord } from '../fulfillment/saga-record';
import { entrySequenceOf, orderIdOf, reasonOf, type Held } from './held-selection';
import { OPERABLE_QUEUES, type MessageOperations, type QueueBacklog } from './message-operations-port';

export interface OverviewDeps {
  operations: MessageOperations;
  orders: DocumentContainer;
  now: () => number;
}

/** How many message ids a reason group lists: enough to inspect a few, the count says the rest. */
export const MESSAGE_IDS_PER_GROUP = 20;
/** How many sessions a queue lists, most pending first; `sessionCount` says how many have messages. */
export const SESSIONS_PER_QUEUE = 50;

export interface SessionRow {
  sessionId: string;
  pending: number;
  oldestAgeSeconds: number;
}

export interface QueueRow {
  queue: string;
  active: number;
  deadLettered: number;
  /** The oldest active message's age, null when none is active. */
  oldestAgeSeconds: number | null;
  sessions: SessionRow[];
  /** Sessions with messages, the listed ones and any past SESSIONS_PER_QUEUE. */
  sessionCount: number;
  /** True when the broker's per-session view stopped at its bound (Azure peeks a bounded number). */
  truncated: boolean;
}

export interface GapRow {
  orderId: string;
  appliedSequence: number;
  /** The missing sequence number the order's buffered entries wait behind. */
  waitingFor: number;
  /** How many entries are buffered behind the gap, and their sequences. */
  buffered: number;
  bufferedSequences: number[];
  /**
   * Since when the gap has been open, as far as anything records it: the order's header keeps no time
   * for its buffered entries, so this is when the broker accepted the held (parked or dead-lettered)
   * copy of the missing entry, when one is held; else null.
   */
  since: string | null;
  /** Where the missing entry is held, when it is: `parked` or `deadletter`. */
  heldAs: 'parked' | 'deadletter' | null;
}

export interface HeldGroup {
  reason: string;
  count: number;
  /** When the broker accepted the oldest and the newest held copy of the group, ISO text. */
  oldest: string;
  newest: string;
  /** The first MESSAGE_IDS_PER_GROUP, oldest first. */
  messageIds: string[];
  /** The orders the group's messages belong to, each once, at most MESSAGE_IDS_PER_GROUP. */
  orderIds: string[];
}

export interface DeadLetteredGroup extends HeldGroup {
  queue: string;
}

export interface SagaRow {
  orderId: string;
  instanceId: string;
  reason: string | null;
  /** When the saga last entered needs-attention (its record's transition), ISO text. */
  since: string | null;
  alerts: number;
}

export interface Overview {
  at: string;
  queues: QueueRow[];
  gaps: GapRow[];
  parked: HeldGroup[];
  deadLettered: DeadLetteredGroup[];
  sagasNeedingAttention: SagaRow[];
  /** Listings that stopped at the broker's bound: their counts are then lower bounds. */
  truncated: string[];
}

const NEEDS_ATTENTION: SagaStatus = 'needs-attention';

const ageSeconds = (now: number, enqueued: number): number =>
  Math.max(0, Math.round((now - enqueued) / 1000));

const iso = (ms: number): string => new Date(ms).toISOString();

function queueRow(backlog: QueueBacklog, now: number): QueueRow {
  return {
    queue: backlog.queue,
    active: backlog.activeMessages,
    deadLettered: backlog.deadLetteredMessages,
    oldestAgeSeconds:
      backlog.oldestEnqueuedTimeUtc === null ? null : ageSeconds(now, backlog.oldestEnqueuedTimeUtc),
    sessions: backlog.sessions.slice(0, SESSIONS_PER_QUEUE).map((session) => ({
      sessionId: session.sessionId,
      pending: session.pending,
      oldestAgeSeconds: ageSeconds(now, session.oldestEnqueuedTimeUtc),
    })),
    sessionCount: backlog.sessions.length,
    truncated: backlog.truncated,
  };
}

/** Held messages grouped by reason, the largest group first, each group's messages oldest first. */
export function groupHeld(messages: readonly Held[]): HeldGroup[] {
  return [...groupBy(messages, (message) => reasonOf(message) ?? 'unknown')]
    .map(([reason, held]) => {
      const byAge = [...held].sort((a, b) => a.enqueuedTimeUtc - b.enqueuedTimeUtc);
      const orderIds = [...new Set(byAge.map(orderIdOf).filter((id): id is string => id !== null))];
      return {
        reason,
        count: byAge.length,
        oldest: iso(byAge[0].enqueuedTimeUtc),
        newest: iso(byAge[byAge.length - 1].enqueuedTimeUtc),
        messageIds: byAge.slice(0, MESSAGE_IDS_PER_GROUP).map((message) => message.messageId),
        orderIds: orderIds.slice(0, MESSAGE_IDS_PER_GROUP),
      };
    })
    .sort((a, b) => b.count - a.count || compareText(a.reason, b.reason));
}

/** The held copy of an order's entry at `sequence`, the first the broker accepted. */
function heldEntry(held: readonly Held[], orderId: string, sequence: number): Held | undefined {
  return held
    .filter((message) => orderIdOf(message) === orderId && entrySequenceOf(message) === sequence)
    .sort((a, b) => a.enqueuedTimeUtc - b.enqueuedTimeUtc)[0];
}

/**
 * The orders whose buffered entries wait behind a gap: exactly those holding a gap document
 * (docs/documents.md), one query on `kind`, whatever the number of orders kept. Each is then read
 * as it stands (readOrderState), the one way a reader outside the consumer sees an order.
 */
async function gaps(orders: DocumentContainer, held: readonly Held[]): Promise<GapRow[]> {
  const candidates = (await orders.query<GapDocument>({ where: { kind: GAP_KIND } })).map(
    ({ document }) => document,
  );
  const rows = await Promise.all(
    candidates.map(async ({ orderId }): Promise<GapRow | null> => {
      const state = await readOrderState(orders, orderId);
      const missing = state === undefined ? null : waitingFor(state);
      if (state === undefined || missing === null) return null;
      const copy = heldEntry(held, orderId, missing);
      return {
        orderId,
        appliedSequence: state.appliedSequence,
        waitingFor: missing,
        buffered: state.buffered.length,
        bufferedSequences: state.buffered.map((waiting) => waiting.entry.sequence),
        since: copy === undefined ? null : iso(copy.enqueuedTimeUtc),
        heldAs: copy === undefined ? null : copy.kind === 'parked' ? 'parked' : 'deadletter',
      };
    }),
  );
  return rows
    .filter((row): row is GapRow => row !== null)
    .sort(
      (a, b) => compareText(a.since ?? '\uffff', b.since ?? '\uffff') || compareText(a.orderId, b.orderId),
    );
}

/**
 * The sagas whose record says they wait for a person (the record is the audit trail the API reads
 * too): one query on `kind` and `status`, both indexed, so it reads only those records.
 */
async function sagasNeedingAttention(orders: DocumentContainer): Promise<SagaRow[]> {
  const records = await orders.query<SagaRecord>({ where: { kind: 'saga', status: NEEDS_ATTENTION } });
  return records
    .map(({ document }) => document)
    .map((record) => {
      const entered = [...record.transitions].reverse().find((change) => change.status === NEEDS_ATTENTION);
      return {
        orderId: record.orderId,
        instanceId: record.instanceId,
        reason: record.reason,
        since: entered?.at ?? null,
        alerts: record.alerts,
      };
    })
    .sort((a, b) => compareText(a.since ?? '', b.since ?? '') || compareText(a.orderId, b.orderId));
}

export async function overview(deps: OverviewDeps): Promise<Overview> {
  const deadLetterQueues = OPERABLE_QUEUES;
  const [backlogs, parked, deadLettered] = await Promise.all([
    Promise.all(OPERABLE_QUEUES.map((queue) => deps.operations.backlog(queue))),
    deps.operations.listParked(),
    Promise.all(deadLetterQueues.map((queue) => deps.operations.listDeadLettered(queue))),
  ]);
  const held: Held[] = [...parked.messages, ...deadLettered.flatMap((listing) => listing.messages)];
  const [gapRows, sagaRows] = await Promise.all([
    gaps(deps.orders, held),
    sagasNeedingAttention(deps.orders),
  ]);
  const now = deps.now();
  return {
    at: iso(now),
    queues: backlogs.map((backlog) => queueRow(backlog, now)),
    gaps: gapRows,
    parked: groupHeld(parked.messages),
    deadLettered: deadLetterQueues.flatMap((queue, index) =>
      groupHeld(deadLettered[index].messages).map((group) => ({ queue, ...group })),
    ),
    sagasNeedingAttention: sagaRows,
    truncated: [
      ...(parked.truncated ? [QUEUE.parked] : []),
      ...deadLetterQueues
        .filter((_, index) => deadLettered[index].truncated)
        .map((queue) => `${queue}/deadletter`),
      ...backlogs.filter((backlog) => backlog.truncated).map((backlog) => `${backlog.queue} sessions`),
    ],
  };
}
