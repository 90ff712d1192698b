/**
 * What the order HTTP functions do, independent of HTTP: read an order with its saga, cancel it,
 * and record a person's review of a saga that needs attention. Status codes follow what the
 * caller may do next: 404 unknown order, 400 malformed request, 409 not allowed in this state.
 */
import {
  fulfillmentInstanceId,
  isPastPointOfNoReturn,
  refundAfterCancellationFee,
  STEPS,
  type StepName,
} from '../../domain/saga';
import { CANCEL_CONFIRMED_ORDER, CANCEL_EVENT, REVIEW_EVENT, cancellationInstanceId } from './starter';
import { fulfillmentInputOf, type OrderDocument } from '../order-documents';
import type { DocumentContainer, OrchestrationClient } from '../ports';
import { readSagaRecord, updateSagaRecord, type CancelRequest, type SagaRecord } from './saga-record';

export interface ApiResult {
  status: number;
  body: Record<string, unknown>;
}

export interface OrdersApiDeps {
  orders: DocumentContainer;
  orchestrations: OrchestrationClient;
  cancellationFeePercent: number;
  now: () => number;
}

const notFound = (orderId: string): ApiResult => ({
  status: 404,
  body: { error: `order ${orderId} not found` },
});
const conflict = (message: string): ApiResult => ({ status: 409, body: { error: message } });

function orderView(order: OrderDocument): Record<string, unknown> {
  return {
    orderId: order.orderId,
    status: order.status,
    customerId: order.customerId,
    currency: order.currency,
    lines: order.lines,
    total: order.total,
    appliedSequence: order.appliedSequence,
    waitingFor: order.buffered.length > 0 ? order.appliedSequence + 1 : null,
  };
}

function sagaView(saga: SagaRecord | undefined): Record<string, unknown> | null {
  if (saga === undefined) return null;
  const { status, reason, instanceId, steps, transitions, alerts, cancel } = saga;
  return { status, reason, instanceId, steps, transitions, alerts, cancel };
}

export async function getOrder(deps: OrdersApiDeps, orderId: string): Promise<ApiResult> {
  const order = await deps.orders.read<OrderDocument>(orderId, orderId);
  if (order === undefined) return notFound(orderId);
  const saga = await readSagaRecord(deps.orders, orderId);
  return { status: 200, body: { ...orderView(order.document), saga: sagaView(saga) } };
}

function completedSteps(saga: SagaRecord): StepName[] {
  return STEPS.filter((step) => saga.steps[step]?.status === 'completed');
}

export async function cancelOrder(deps: OrdersApiDeps, orderId: string): Promise<ApiResult> {
  const stored = await deps.orders.read<OrderDocument>(orderId, orderId);
  if (stored === undefined) return notFound(orderId);
  const order = stored.document;
  if (order.status !== 'submitted') {
    return conflict(
      `order ${orderId} is ${order.status}: only a submitted order has a fulfillment to cancel`,
    );
  }
  const existing = await readSagaRecord(deps.orders, orderId);
  if (existing === undefined) {
    return conflict(`the fulfillment of order ${orderId} has not started yet; try again in a moment`);
  }

  // The request is recorded first, on the record's etag: either the saga sees it before it completes,
  // or this call sees the saga completed. Never both, never neither.
  const at = new Date(deps.now()).toISOString();
  const recorded = await updateSagaRecord<
    { answer: ApiResult } | { deliver: SagaRecord; cancel: CancelRequest }
  >(
    deps.orders,
    orderId,
    () => existing,
    (record) => {
      if (record.cancel?.delivered === true) {
        return {
          next: undefined,
          result: {
            answer: {
              status: 200,
              body: { orderId, message: 'cancellation already requested', saga: sagaView(record) },
            },
          },
        };
      }
      // Recorded but never delivered (the delivery failed): deliver it now.
      if (record.cancel !== null)
        return { next: undefined, result: { deliver: record, cancel: record.cancel } };
      if (record.status !== 'running' && record.status !== 'completed') {
        return {
          next: undefined,
          result: {
            answer: conflict(
              `the fulfillment of order ${orderId} is ${record.status}; there is nothing left to cancel`,
            ),
          },
        };
      }
      const afterPointOfNoReturn =
        record.status === 'completed' || isPastPointOfNoReturn(completedSteps(record));
      const fee = afterPointOfNoReturn
        ? refundAfterCancellationFee(order.total, deps.cancellationFeePercent).fee
        : null;
      const cancel: CancelRequest = { requestedAt: at, afterPointOfNoReturn, fee, delivered: false };
      const next: SagaRecord = { ...record, cancel };
      return { next, result: { deliver: next, cancel } };
    },
  );
  if ('answer' in recorded) return recorded.answer;
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
  const { afterPointOfNoReturn, fee } = cancel;
  return {
    status: 202,
    body: {
      orderId,
      message: afterPointOfNoReturn
        ? `cancellation accepted after confirmation: a fee of ${fee} is kept`
        : 'cancellation accepted: the fulfillment is being undone',
    },
  };
}

export function parseReview(
  body: unknown,
): { ok: true; action: 'retry' | 'resolved'; note?: string } | { ok: false; error: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: 'body must be a JSON object such as {"action": "retry"}' };
  }
  const { action, note } = body as Record<string, unknown>;
  if (action !== 'retry' && action !== 'resolved') {
    return {
      ok: false,
      error: `action must be "retry" or "resolved", got ${JSON.stringify(action) ?? 'nothing'}`,
    };
  }
  if (note !== undefined && typeof note !== 'string')
    return { ok: false, error: 'note must be a string when present' };
  return note === undefined ? { ok: true, action } : { ok: true, action, note };
}

export async function reviewSaga(deps: OrdersApiDeps, orderId: string, body: unknown): Promise<ApiResult> {
  const review = parseReview(body);
  if (!review.ok) return { status: 400, body: { error: review.error } };
  const order = await deps.orders.read<OrderDocument>(orderId, orderId);
  if (order === undefined) return notFound(orderId);
  const saga = await readSagaRecord(deps.orders, orderId);
  if (saga === undefined || saga.status !== 'needs-attention') {
    return conflict(
      `the fulfillment of order ${orderId} is ${saga?.status ?? 'not started'}; only one that needs attention takes a review`,
    );
  }
  const decision =
    review.note === undefined ? { action: review.action } : { action: review.action, note: review.note };
  await deps.orchestrations.raiseEvent(saga.instanceId, REVIEW_EVENT, decision);
  return {
    status: 202,
    body: { orderId, message: `review "${review.action}" passed to ${saga.instanceId}` },
  };
}
