/**
 * One order as an operator looks into it (`GET /api/ops/orders/{orderId}`, the console's search):
 * its state, its transaction records, its held (parked and dead-lettered) messages, its saga's
 * timeline, and the id of its trace. Read through the ports only, on Azure and locally alike.
 */
import { compareText } from '../../domain/compare';
import { orderIdProblem } from '../../domain/entry';
import { waitingFor, type TransactionRecord } from '../../domain/order';
import type { SagaStatus } from '../../domain/saga';
import { readOrderAndRecords } from '../order-documents';
import type { DocumentContainer } from '../ports';
import { readSagaRecord, type SagaRecord } from '../fulfillment/saga-record';
import { summaryOf } from './held-messages';
import { entrySequenceOf, inSequenceOrder, orderIdOf, type Held } from './held-selection';
import { OPERABLE_QUEUES, type MessageOperations } from './message-operations-port';

export interface OrderViewDeps {
  operations: MessageOperations;
  orders: DocumentContainer;
  /** The order's trace id (src/functions/order-trace.ts computes it from the order id). */
  traceIdOf: (orderId: string) => string;
}

export interface OrderStateView {
  status: string;
  customerId: string | null;
  currency: string | null;
  lineCount: number;
  total: number;
  appliedSequence: number;
  finalSequence: number | null;
  /** The missing sequence the buffered entries wait for, else null. */
  waitingFor: number | null;
  buffered: Array<{ sequence: number; transactionId: string; type: string; messageId: string }>;
}

export interface TimelineEvent {
  at: string;
  /** `status`, `step`, `review` or `cancel`. */
  kind: string;
  what: string;
  detail: string | null;
}

export interface SagaTimeline {
  instanceId: string;
  status: SagaStatus;
  reason: string | null;
  timeline: TimelineEvent[];
}

export interface OrderInspection {
  orderId: string;
  order: OrderStateView | null;
  records: TransactionRecord[];
  /** Held messages as listed (src/services/operations/held-messages.ts `summaryOf`), with their entry's sequence. */
  parked: Array<Record<string, unknown>>;
  deadLettered: Array<Record<string, unknown>>;
  saga: SagaTimeline | null;
  traceId: string;
  /** Listings that stopped at the broker's bound: a held message of the order may lie past it. */
  truncated: string[];
}

export type OrderInspectionOutcome =
  | { kind: 'inspection'; inspection: OrderInspection }
  | { kind: 'malformed'; error: string }
  | { kind: 'unknown-order'; orderId: string };

/** Every dated thing the saga record keeps, oldest first. */
export function sagaTimeline(record: SagaRecord): TimelineEvent[] {
  const events: TimelineEvent[] = record.transitions.map((change) => ({
    at: change.at,
    kind: 'status',
    what: change.status,
    detail: change.reason,
  }));
  for (const [name, step] of Object.entries(record.steps)) {
    if (step === undefined) continue;
    events.push({ at: step.startedAt, kind: 'step', what: `${name} started`, detail: null });
    if (step.endedAt !== null) {
      events.push({
        at: step.endedAt,
        kind: 'step',
        what: `${name} ${step.status}`,
        detail: `${step.attempts} attempt${step.attempts === 1 ? '' : 's'}${step.error === null ? '' : `: ${step.error}`}`,
      });
    }
  }
  for (const review of record.reviews ?? []) {
    events.push({
      at: review.at,
      kind: 'review',
      what: review.action,
      detail:
        [review.by === null ? null : `by ${review.by}`, review.note]
          .filter((part) => part !== null)
          .join(': ') || null,
    });
  }
  if (record.cancel !== null) {
    events.push({
      at: record.cancel.requestedAt,
      kind: 'cancel',
      what: 'cancel requested',
      detail: record.cancel.requestedBy === null ? null : `by ${record.cancel.requestedBy}`,
    });
  }
  // Stable: events of one instant keep the order above (status, steps, reviews, cancel).
  return events.sort((a, b) => compareText(a.at, b.at));
}

function heldRow(message: Held): Record<string, unknown> {
  return { ...summaryOf(message), entrySequence: entrySequenceOf(message) };
}

export async function inspectOrder(deps: OrderViewDeps, orderId: string): Promise<OrderInspectionOutcome> {
  const problem = orderIdProblem(orderId);
  if (problem !== null) return { kind: 'malformed', error: problem };
  const [{ state, records }, saga, parked, deadLettered] = await Promise.all([
    readOrderAndRecords(deps.orders, orderId),
    readSagaRecord(deps.orders, orderId),
    deps.operations.listParked(),
    Promise.all(OPERABLE_QUEUES.map((queue) => deps.operations.listDeadLettered(queue))),
  ]);
  const ofOrder = (messages: readonly Held[]): Held[] =>
    inSequenceOrder(messages.filter((message) => orderIdOf(message) === orderId));
  const heldParked = ofOrder(parked.messages);
  const heldDead = ofOrder(deadLettered.flatMap((listing) => listing.messages));
  if (
    state === undefined &&
    records.length === 0 &&
    saga === undefined &&
    heldParked.length + heldDead.length === 0
  )
    return { kind: 'unknown-order', orderId };
  return {
    kind: 'inspection',
    inspection: {
      orderId,
      order:
        state === undefined
          ? null
          : {
              status: state.status,
              customerId: state.customerId,
              currency: state.currency,
              lineCount: state.lineCount,
              total: state.total,
              appliedSequence: state.appliedSequence,
              finalSequence: state.finalSequence,
              waitingFor: waitingFor(state),
              buffered: state.buffered.map((waiting) => ({
                sequence: waiting.entry.sequence,
                transactionId: waiting.entry.transactionId,
                type: waiting.entry.type,
                messageId: waiting.messageId,
              })),
            },
      records: [...records].sort((a, b) => a.sequence - b.sequence),
      parked: heldParked.map(heldRow),
      deadLettered: heldDead.map(heldRow),
      saga:
        saga === undefined
          ? null
          : {
              instanceId: saga.instanceId,
              status: saga.status,
              reason: saga.reason,
              timeline: sagaTimeline(saga),
            },
      traceId: deps.traceIdOf(orderId),
      truncated: [
        ...(parked.truncated ? ['parked'] : []),
        ...OPERABLE_QUEUES.filter((_, index) => deadLettered[index].truncated).map(
          (queue) => `${queue}/deadletter`,
        ),
      ],
    },
  };
}
