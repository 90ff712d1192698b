/**
 * What the order HTTP functions do, independent of HTTP: read an order with its saga, cancel it,
 * and record a person's review of a saga that needs attention. Each answers with an outcome; the
 * HTTP functions map outcomes to status codes (src/functions/http/http-support.ts).
 */
import { orderIdProblem } from '../../domain/entry';
import { waitingFor, type OrderLine } from '../../domain/order';
import {
  fulfillmentInstanceId,
  isPastPointOfNoReturn,
  refundAfterCancellationFee,
  STEPS,
  type StepName,
} from '../../domain/saga';
import { CANCEL_CONFIRMED_ORDER, CANCEL_EVENT, REVIEW_EVENT, cancellationInstanceId } from './starter';
import {
  fulfillmentInputOf,
  readOrderHeader,
  readOrderLines,
  readOrderState,
  type OrderDocument,
} from '../order-documents';
import type { DocumentContainer, OrchestrationClient } from '../ports';
import {
  readSagaRecord,
  updateSagaRecord,
  type CancelRequest,
  type ReviewRecord,
  type ReviewDecision,
  type SagaRecord,
  MAX_TRANSITIONS,
} from './saga-record';

export interface OrdersApiDeps {
  orders: DocumentContainer;
  orchestrations: OrchestrationClient;
  cancellationFeePercent: number;
  now: () => number;
}

/** An order as a reader sees it: its state, what it waits for, and its saga record (null before it starts). */
export interface OrderView {
  orderId: string;
  status: OrderDocument['status'];
  customerId: OrderDocument['customerId'];
  currency: OrderDocument['currency'];
  lines: OrderLine[];
  total: number;
  appliedSequence: number;
  waitingFor: number | null;
  saga: SagaView | null;
}

export type SagaView = Pick<
  SagaRecord,
  'status' | 'reason' | 'instanceId' | 'steps' | 'transitions' | 'alerts' | 'cancel'
>;

/** No order with this id. */
export interface UnknownOrder {
  kind: 'unknown-order';
  orderId: string;
}

/** The request cannot be served as it is: `error` names what is wrong. */
export interface Malformed {
  kind: 'malformed';
  error: string;
}

/** The order's state does not allow the request; `reason` says why and what to do. */
export interface NotNow {
  kind: 'not-now';
  reason: string;
}

export type GetOrderOutcome = { kind: 'order'; order: OrderView } | Malformed | UnknownOrder;

export type CancelOutcome =
  | Malformed
  | UnknownOrder
  | NotNow
  | { kind: 'already-requested'; orderId: string; saga: SagaView }
  | { kind: 'accepted'; orderId: string; afterPointOfNoReturn: boolean; fee: number | null };

export type ReviewOutcome =
  | Malformed
  | UnknownOrder
  | NotNow
  | { kind: 'passed'; orderId: string; action: 'retry' | 'resolved'; instanceId: string };

const unknownOrder = (orderId: string): UnknownOrder => ({ kind: 'unknown-order', orderId });
const notNow = (reason: string): NotNow => ({ kind: 'not-now', reason });

function sagaView(saga: SagaRecord): SagaView {
  const { status, reason, instanceId, steps, transitions, alerts, cancel } = saga;
  return { status, reason, instanceId, steps, transitions, alerts, cancel };
}

function orderView(order: OrderDocument, lines: OrderLine[], saga: SagaRecord | undefined): OrderView {
  return {
    orderId: order.orderId,
    status: order.status,
    customerId: order.customerId,
    currency: order.currency,
    lines,
    total: order.total,
    appliedSequence: order.appliedSequence,
    waitingFor: waitingFor(order),
    saga: saga === undefined ? null : sagaView(saga),
  };
}

/** An id no order can have is a malformed request, not a lookup: the store would refuse it. */
function malformedOrderId(orderId: string): Malformed | null {
  const problem = orderIdProblem(orderId);
  return problem === null ? null : { kind: 'malformed', error: problem };
}

export async function getOrder(deps: OrdersApiDeps, orderId: string): Promise<GetOrderOutcome> {
  const malformed = malformedOrderId(orderId);
  if (malformed !== null) return malformed;
  // The order as it stands: its header rolled forward over the records written without it.
  const order = await readOrderState(deps.orders, orderId);
  if (order === undefined) return unknownOrder(orderId);
  const [lines, saga] = await Promise.all([
    readOrderLines(deps.orders, orderId),
    readSagaRecord(deps.orders, orderId),
  ]);
  return { kind: 'order', order: orderView(order, lines, saga) };
}

/**
 * A saga record that names an instance this order's id does not map to: one started before instance
 * ids were made safe for every order id (docs/saga.md, "Upgrading"). Such an instance is never
 * signalled from here: its name, put into the durable client's URL, may reach another order's saga.
 */
function foreignInstance(orderId: string, record: SagaRecord): NotNow | null {
  const own = [fulfillmentInstanceId(orderId), cancellationInstanceId(orderId)];
  if (own.includes(record.instanceId)) return null;
  return notNow(
    `the fulfillment of order ${orderId} runs as instance ${JSON.stringify(record.instanceId)}, named before instance ids were made safe for every order id; it is not signalled from here (docs/saga.md, "Upgrading")`,
  );
}

function completedSteps(saga: SagaRecord): StepName[] {
  return STEPS.filter((step) => saga.steps[step]?.status === 'completed');
}

/** `by` names who asked (recorded in the saga record's cancel request). */
export async function cancelOrder(
  deps: OrdersApiDeps,
  orderId: string,
  by: string | null = null,
): Promise<CancelOutcome> {
  const malformed = malformedOrderId(orderId);
  if (malformed !== null) return malformed;
  const stored = await readOrderHeader(deps.orders, orderId);
  if (stored === undefined) return unknownOrder(orderId);
  const order = stored.document;
  if (order.status !== 'submitted') {
    return notNow(`order ${orderId} is ${order.status}: only a submitted order has a fulfillment to cancel`);
  }
  const existing = await readSagaRecord(deps.orders, orderId);
  if (existing === undefined) {
    return notNow(`the fulfillment of order ${orderId} has not started yet; try again in a moment`);
  }

  // The request is recorded first, on the record's etag: either the saga sees it before it completes,
  // or this call sees the saga completed. Never both, never neither.
  const at = new Date(deps.now()).toISOString();
  const recorded = await updateSagaRecord<
    { answer: CancelOutcome } | { deliver: SagaRecord; cancel: CancelRequest; answer?: CancelOutcome }
  >(
    deps.orders,
    orderId,
    () => existing,
    (record) => {
      // A running saga is told by its instance id, which must be one this order's id maps to; a
      // completed one's cancel starts a new instance, named after the order id.
      const foreign = record.status === 'running' ? foreignInstance(orderId, record) : null;
      // A repeat changes nothing more and says so; one that finds the first delivery not yet done
      // (still under way, or failed) delivers it again, which is idempotent.
      if (record.cancel !== null) {
        const answer: CancelOutcome = { kind: 'already-requested', orderId, saga: sagaView(record) };
        const undelivered = !record.cancel.delivered && foreign === null;
        return {
          next: undefined,
          result: undelivered ? { deliver: record, cancel: record.cancel, answer } : { answer },
        };
      }
      if (record.status !== 'running' && record.status !== 'completed') {
        return {
          next: undefined,
          result: {
            answer: notNow(
              `the fulfillment of order ${orderId} is ${record.status}; there is nothing left to cancel`,
            ),
          },
        };
      }
      if (foreign !== null) return { next: undefined, result: { answer: foreign } };
      // Once the saga recorded reaching the point of no return, the cancel keeps the fee.
      const afterPointOfNoReturn =
        record.status === 'completed' ||
        (record.pointOfNoReturnAt ?? null) !== null ||
        isPastPointOfNoReturn(completedSteps(record));
      const fee = afterPointOfNoReturn
        ? refundAfterCancellationFee(order.total, deps.cancellationFeePercent).fee
        : null;
      const cancel: CancelRequest = {
        requestedAt: at,
        afterPointOfNoReturn,
        fee,
        delivered: false,
        requestedBy: by,
      };
      const next: SagaRecord = { ...record, cancel };
      return { next, result: { deliver: next, cancel } };
    },
  );
  if (!('deliver' in recorded)) return recorded.answer;
  const { deliver: saga, cancel } = recorded;

  // Both deliveries are idempotent: an existing instance is not started again, and a saga that
  // already took a cancel, or finished, ignores another.
  if (saga.status === 'completed') {
    await deps.orchestrations.startNew(CANCEL_CONFIRMED_ORDER, cancellationInstanceId(orderId), {
      order: fulfillmentInputOf(order, order.correlationId),
      completed: completedSteps(saga),
    });
  } else {
    await deps.orchestrations.raiseEvent(fulfillmentInstanceId(orderId), CANCEL_EVENT, { requestedAt: at });
  }
  await updateSagaRecord(
    deps.orders,
    orderId,
    () => saga,
    (record) => ({
      next:
        record.cancel === null || record.cancel.delivered
          ? undefined
          : { ...record, cancel: { ...record.cancel, delivered: true } },
      result: undefined,
    }),
  );
  if (recorded.answer !== undefined) return recorded.answer;
  const { afterPointOfNoReturn, fee } = cancel;
  return { kind: 'accepted', orderId, afterPointOfNoReturn, fee };
}

/** The longest review note taken: it is kept on the saga record and shown in its reason. */
export const MAX_REVIEW_NOTE_LENGTH = 500;

export function parseReview(
  body: unknown,
): { ok: true; action: 'retry' | 'resolved'; note?: string } | { ok: false; error: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: 'body must be a JSON object such as {"action": "retry"}' };
  }
  const action: unknown = Object.hasOwn(body, 'action')
    ? (body as Record<string, unknown>).action
    : undefined;
  const note: unknown = Object.hasOwn(body, 'note') ? (body as Record<string, unknown>).note : undefined;
  if (action !== 'retry' && action !== 'resolved') {
    return {
      ok: false,
      error: `action must be "retry" or "resolved", got ${JSON.stringify(action) ?? 'nothing'}`,
    };
  }
  if (note !== undefined && typeof note !== 'string')
    return { ok: false, error: 'note must be a string when present' };
  if (note !== undefined && note.length > MAX_REVIEW_NOTE_LENGTH)
    return {
      ok: false,
      error: `note must be at most ${MAX_REVIEW_NOTE_LENGTH} characters, got ${note.length}`,
    };
  return note === undefined ? { ok: true, action } : { ok: true, action, note };
}

/**
 * Passes a person's decision to the saga that waits for it. One decision per needs-attention
 * episode: it is recorded on the record's etag first, so of two reviews at once one is passed and the
 * other is refused with the decision already taken; a decision never answers a later episode.
 * `by` names who reviewed; the accepted review is kept in the record's `reviews`.
 */
export async function reviewSaga(
  deps: OrdersApiDeps,
  orderId: string,
  body: unknown,
  by: string | null = null,
): Promise<ReviewOutcome> {
  const malformed = malformedOrderId(orderId);
  if (malformed !== null) return malformed;
  const review = parseReview(body);
  if (!review.ok) return { kind: 'malformed', error: review.error };
  const order = await readOrderHeader(deps.orders, orderId);
  if (order === undefined) return unknownOrder(orderId);
  const existing = await readSagaRecord(deps.orders, orderId);
  if (existing === undefined)
    return notNow(
      `the fulfillment of order ${orderId} is not started; only one that needs attention takes a review`,
    );
  const at = new Date(deps.now()).toISOString();
  const taken = await updateSagaRecord<{ refused: NotNow } | { deliver: ReviewDecision; instanceId: string }>(
    deps.orders,
    orderId,
    () => existing,
    (record) => {
      if (record.status !== 'needs-attention') {
        const refused = notNow(
          `the fulfillment of order ${orderId} is ${record.status}; only one that needs attention takes a review`,
        );
        return { next: undefined, result: { refused } };
      }
      const foreign = foreignInstance(orderId, record);
      if (foreign !== null) return { next: undefined, result: { refused: foreign } };
      const episode = record.review?.episode ?? null;
      const decided = record.review?.decision ?? null;
      if (decided !== null) {
        const { action, note, at: when, delivered } = decided;
        // The same decision again before it reached the saga: deliver it again (idempotent).
        if (!delivered && action === review.action && note === review.note) {
          const again: ReviewDecision = { action };
          if (note !== undefined) again.note = note;
          if (episode !== null) again.episode = episode;
          return { next: undefined, result: { deliver: again, instanceId: record.instanceId } };
        }
        const refused = notNow(
          `a decision ("${action}") was already taken on this episode of order ${orderId} at ${when}; wait for the saga to act on it`,
        );
        return { next: undefined, result: { refused } };
      }
      const decision: ReviewDecision = { action: review.action };
      if (review.note !== undefined) decision.note = review.note;
      if (episode !== null) decision.episode = episode;
      const reviewed: ReviewRecord = { at, by, action: review.action, note: review.note ?? null };
      const next: SagaRecord = {
        ...record,
        review: { episode, decision: { ...decision, at, delivered: false } },
        reviews: [...(record.reviews ?? []), reviewed].slice(-MAX_TRANSITIONS),
      };
      return { next, result: { deliver: decision, instanceId: record.instanceId } };
    },
  );
  if ('refused' in taken) return taken.refused;
  await deps.orchestrations.raiseEvent(taken.instanceId, REVIEW_EVENT, taken.deliver);
  await updateSagaRecord(
    deps.orders,
    orderId,
    () => existing,
    (record) => {
      const current = record.review;
      if (!current || current.decision === null || current.decision.delivered)
        return { next: undefined, result: undefined };
      if (current.episode !== (taken.deliver.episode ?? null)) return { next: undefined, result: undefined };
      const review = { episode: current.episode, decision: { ...current.decision, delivered: true } };
      return { next: { ...record, review }, result: undefined };
    },
  );
  return { kind: 'passed', orderId, action: review.action, instanceId: taken.instanceId };
}
