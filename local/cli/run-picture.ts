/**
 * The data of the run's picture (`--html`): per order, each entry's outcome and when it happened,
 * and the saga's steps and compensations with their times; with the report's parked and
 * dead-lettered lists and its counts. Built at the end from what the store holds (each order's
 * transaction records with their slot outcome, the saga records) and the telemetry timeline.
 */
import { isCompensation, type OperationName, type SagaStatus } from '../../src/domain/saga';
import type { EmbeddedApp } from '../app';
import type { Report, ReportDeadLettered, ReportParked, ReportStats } from '../report';
import type { TimelineRecord, TimelineRecorder } from '../timeline';
import { readSagaRecord } from '../../src/services/fulfillment/saga-record';
import type { TransactionRecord } from '../../src/domain/order';
import { type OrderDocument } from '../../src/services/order-documents';
import { transactionRecordsByOrder } from '../order-records';
import { QUEUE } from '../../src/services/queues';
import { naturalCompare } from './summary';

export type EntryOutcome = 'applied' | 'rejected' | 'duplicate' | 'buffered' | 'parked' | 'dead-lettered';

export interface PictureEntry {
  sequence: number | null;
  transactionId: string | null;
  outcome: EntryOutcome;
  /** Milliseconds from the start of the run; null when the run did not see when. */
  at: number | null;
  /** When it was buffered behind a gap, if it was. */
  bufferedAt: number | null;
  reason: string | null;
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

export interface PictureOrder {
  orderId: string;
  status: string;
  total: number;
  currency: string | null;
  appliedSequence: number;
  waitingFor: number | null;
  entries: PictureEntry[];
  saga: {
    status: SagaStatus;
    reason: string | null;
    operations: PictureOperation[];
    transitions: Array<{ at: number | null; status: SagaStatus; reason: string | null }>;
  } | null;
}

export interface RunPicture {
  input: string;
  durationMs: number;
  orders: PictureOrder[];
  parked: ReportParked[];
  deadLettered: ReportDeadLettered[];
  stats: ReportStats;
}

type Timed = Pick<TimelineRecord, 'at'>;

/** Takes the first record matching, so that each record times one entry. */
function takeFirst<T extends Timed>(records: T[], match: (record: T) => boolean): T | undefined {
  const index = records.findIndex(match);
  return index < 0 ? undefined : records.splice(index, 1)[0];
}

function byOrder(records: readonly TimelineRecord[]): Map<string, TimelineRecord[]> {
  const map = new Map<string, TimelineRecord[]>();
  for (const record of records) {
    if (record.orderId === null) continue;
    const list = map.get(record.orderId) ?? [];
    list.push(record);
    map.set(record.orderId, list);
  }
  return map;
}

function entriesOf(
  transactions: Iterable<TransactionRecord>,
  records: readonly TimelineRecord[],
  deadLettered: readonly ReportDeadLettered[],
  durationMs: number,
): PictureEntry[] {
  const kind = (wanted: TimelineRecord['kind']): TimelineRecord[] => records.filter((r) => r.kind === wanted);
  const buffered = kind('buffered');
  const parked = kind('parked');
  const bufferedAt = (sequence: number): number | null =>
    takeFirst(buffered, (record) => record.sequence === sequence)?.at ?? null;
  const slots = [...transactions].sort((a, b) => a.sequence - b.sequence);
  const entries: PictureEntry[] = [];

  // Entries are applied in sequence order, and one `applied` record counts those one write applied.
  const appliedTimes: number[] = [];
  for (const record of kind('applied')) for (let i = 0; i < record.count; i++) appliedTimes.push(record.at);
  let nextApplied = 0;
  for (const slot of slots) {
    const base = { sequence: slot.sequence, transactionId: slot.transactionId, reason: null };
    if (slot.outcome === 'applied') {
      entries.push({
        ...base,
        outcome: 'applied',
        at: appliedTimes[nextApplied++] ?? null,
        bufferedAt: bufferedAt(slot.sequence),
      });
    } else if (slot.outcome === 'rejected') {
      const park = takeFirst(
        parked,
        (r) => r.transactionId === slot.transactionId && r.reason === 'rejected',
      );
      entries.push({
        ...base,
        outcome: 'rejected',
        reason: 'rejected',
        at: park?.at ?? null,
        bufferedAt: bufferedAt(slot.sequence),
      });
    } else {
      entries.push({ ...base, outcome: 'buffered', at: bufferedAt(slot.sequence), bufferedAt: null });
    }
  }
  for (const record of parked) {
    if (record.reason === 'rejected') continue;
    entries.push({
      sequence: null,
      transactionId: record.transactionId,
      outcome: 'parked',
      at: record.at,
      bufferedAt: null,
      reason: record.reason,
    });
  }
  for (const record of kind('duplicate')) {
    entries.push({
      sequence: record.sequence,
      transactionId: null,
      outcome: 'duplicate',
      at: record.at,
      bufferedAt: null,
      reason: null,
    });
  }
  for (const message of deadLettered) {
    entries.push({
      sequence: null,
      transactionId: null,
      outcome: 'dead-lettered',
      at: durationMs,
      bufferedAt: null,
      reason: message.reason,
    });
  }
  return entries;
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
  const documents = new Map(
    (await app.orders.query<OrderDocument>({ where: { kind: 'order' } })).map(({ document }) => [
      document.orderId,
      document,
    ]),
  );
  const transactions = await transactionRecordsByOrder(app.orders);
  const records = byOrder(timeline.records);
  const orders: PictureOrder[] = [];
  for (const order of [...report.orders].sort((a, b) => naturalCompare(a.orderId, b.orderId))) {
    const document = documents.get(order.orderId);
    const saga = order.saga === null ? undefined : await readSagaRecord(app.orders, order.orderId);
    const deadLettered = report.deadLettered.filter(
      (message) => message.queue === QUEUE.orderTransactions && message.sessionId === order.orderId,
    );
    orders.push({
      orderId: order.orderId,
      status: order.status,
      total: order.total,
      currency: order.currency,
      appliedSequence: order.appliedSequence,
      waitingFor: order.waitingFor,
      entries:
        document === undefined
          ? []
          : entriesOf(
              transactions.get(order.orderId)?.values() ?? [],
              records.get(order.orderId) ?? [],
              deadLettered,
              durationMs,
            ),
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
    });
  }
  return {
    input,
    durationMs,
    orders,
    parked: report.parked,
    deadLettered: report.deadLettered,
    stats: report.stats,
  };
}
