/**
 * The parallel half of the convoy: apply one entry to its order exactly once, in sequence order.
 * The order document and an inbox marker are written in one transactional batch; the store's
 * unique id (409) and etag (412) are the only arbiters between racing deliveries.
 */
import { admit, decideEntry, newOrderState, type Decision, type ParkReason } from '../../domain/order';
import { PermanentError } from '../../domain/errors';
import { updateOptimistically, type OptimisticTarget } from '../optimistic-update';
import { park, type ParkRequest } from './parking';
import { QUEUE } from '../queues';
import type { OrderCache } from './order-cache';
import {
  fulfillmentInputOf,
  inboxMarkerId,
  outboxAfter,
  outboxWithout,
  type InboxMarker,
  type OrderDocument,
  type Outbox,
} from '../order-documents';
import type {
  DeliveredMessage,
  DocumentContainer,
  FulfillmentStarter,
  MessageSender,
  Stored,
  Telemetry,
} from '../ports';

export const CONSUMER = 'orderTransactions';

export interface OrderTransactionDeps {
  orders: DocumentContainer;
  sender: MessageSender;
  fulfillment: FulfillmentStarter;
  telemetry: Telemetry;
  cache: OrderCache;
  inboxMarkerTtlSeconds: number;
}

export type TransactionOutcome =
  | {
      kind: 'applied' | 'buffered' | 'rejected';
      orderId: string;
      applied: number;
      rejected: number;
      submitted: boolean;
    }
  | { kind: 'duplicate'; orderId: string }
  | { kind: 'parked'; reason: ParkReason; orderId: string | null };

export async function processOrderTransaction(
  deps: OrderTransactionDeps,
  message: DeliveredMessage,
): Promise<TransactionOutcome> {
  const correlationId = message.correlationId ?? null;
  const admitted = admit({
    messageId: message.messageId,
    sessionId: message.sessionId ?? '',
    body: message.body,
  });
  if (admitted.kind === 'park') {
    await park(deps, [parkRequest(message, admitted.reason, admitted.description, admitted.transactionId)]);
    return { kind: 'parked', reason: admitted.reason, orderId: message.sessionId ?? null };
  }
  const { entry, digest } = admitted;
  const orderId = entry.orderId;
  const properties = {
    orderId,
    messageId: message.messageId,
    sessionId: message.sessionId,
    correlationId,
    sequence: entry.sequence,
  };

  // The one optimistic update, on a target of the consumer's own: the first read comes from the
  // session's cache, and the write is the batch of the order and its inbox marker, which has a third
  // outcome a plain replace has not: the marker exists, so this very message was committed before.
  const target: OptimisticTarget<OrderDocument, Attempt> = {
    read: async (attempt) => (attempt === 1 ? deps.cache.get(orderId) : reload(deps, orderId)),
    async write(document, current, attempt) {
      if (attempt.kind !== 'change') throw new Error(`order ${orderId}: only a change is written`);
      const marker: InboxMarker = {
        id: inboxMarkerId(CONSUMER, entry.transactionId, digest),
        kind: 'inbox',
        orderId,
        consumer: CONSUMER,
        messageId: message.messageId,
        transactionId: entry.transactionId,
        digest,
        outcome: attempt.decision.outcome,
        ttl: deps.inboxMarkerTtlSeconds,
      };
      const result = await deps.orders.batch(orderId, [
        { op: 'create', document: marker },
        current === undefined
          ? { op: 'create', document }
          : { op: 'replace', document, ifMatch: current.etag },
      ]);
      const [markerResult, orderResult] = result.results;
      if (result.ok) {
        if (orderResult.etag === undefined) {
          throw new PermanentError(
            'missing-etag',
            `the batch for order ${orderId} returned no etag for the order`,
          );
        }
        deps.cache.set(orderId, { document, etag: orderResult.etag });
        return { kind: 'written' };
      }
      if (markerResult.status === 409) return { kind: 'settled', result: { kind: 'committed-before' } };
      // Another writer got there first: decide again on what it wrote.
      if (orderResult.status === 409 || orderResult.status === 412 || orderResult.status === 404) {
        return { kind: 'lost' };
      }
      throw new PermanentError(
        'unexpected-batch-result',
        `batch for order ${orderId} failed with statuses ${result.results.map((r) => r.status).join(', ')}`,
      );
    },
  };

  const attempt = await updateOptimistically<OrderDocument, Attempt>(
    target,
    (current) => {
      const decision = decideEntry(
        current?.document ?? newOrderState(orderId),
        entry,
        digest,
        message.messageId,
        message.applicationProperties,
      );
      if (decision.kind !== 'change')
        return { next: undefined, result: { kind: 'settled', decision, current } };
      const document = orderDocument(
        decision,
        current?.document.correlationId ?? correlationId,
        current?.document.outbox ?? null,
      );
      return { next: document, result: { kind: 'change', decision, document } };
    },
    { code: 'order-contention', subject: `order ${orderId}` },
  );

  if (attempt.kind === 'committed-before') {
    // This very entry was committed by an earlier delivery: a duplicate, whatever the cache said.
    await settleOutbox(deps, orderId, (await reload(deps, orderId))?.document.outbox ?? null);
    deps.telemetry.metric('entries.duplicate', 1, properties);
    return { kind: 'duplicate', orderId };
  }
  if (attempt.kind === 'settled') {
    const { decision } = attempt;
    if (decision.kind === 'duplicate') {
      await settleOutbox(deps, orderId, attempt.current?.document.outbox ?? null);
      deps.telemetry.metric('entries.duplicate', 1, properties);
      return { kind: 'duplicate', orderId };
    }
    await park(deps, [parkRequest(message, decision.reason, decision.description, decision.transactionId)]);
    return { kind: 'parked', reason: decision.reason, orderId };
  }
  await settleOutbox(deps, orderId, attempt.document.outbox);
  return recordChange(deps, attempt.decision, properties);
}

/** The decision on the order (a change to write, or a duplicate or park that writes nothing), or that
 * the inbox marker showed the message committed before. */
type Attempt =
  | { kind: 'change'; decision: Extract<Decision, { kind: 'change' }>; document: OrderDocument }
  | {
      kind: 'settled';
      decision: Exclude<Decision, { kind: 'change' }>;
      current: Stored<OrderDocument> | undefined;
    }
  | { kind: 'committed-before' };

async function reload(
  deps: OrderTransactionDeps,
  orderId: string,
): Promise<Stored<OrderDocument> | undefined> {
  const stored = await deps.orders.read<OrderDocument>(orderId, orderId);
  if (stored === undefined) deps.cache.delete(orderId);
  else deps.cache.set(orderId, stored);
  return stored;
}

/** The order as this change leaves it: its effects added to those still pending before it. */
function orderDocument(
  decision: Extract<Decision, { kind: 'change' }>,
  correlationId: string | null,
  pending: Outbox | null,
): OrderDocument {
  const { state } = decision;
  const added: Outbox = {
    parks: decision.rejected.map((rejection) => ({
      fromQueue: QUEUE.orderTransactions,
      messageId: rejection.messageId,
      sessionId: state.orderId,
      body: rejection.entry,
      correlationId: correlationId ?? undefined,
      applicationProperties: rejection.properties,
      transactionId: rejection.transactionId,
      reason: 'rejected',
      description: rejection.description,
    })),
    startFulfillment: decision.submitted ? fulfillmentInputOf(state, correlationId) : null,
  };
  return {
    ...state,
    id: state.orderId,
    kind: 'order',
    correlationId,
    outbox: outboxAfter(pending, added),
  };
}

async function performOutbox(deps: OrderTransactionDeps, outbox: Outbox | null): Promise<void> {
  if (outbox === null) return;
  await park(deps, outbox.parks);
  if (outbox.startFulfillment !== null) {
    await deps.fulfillment.start(outbox.startFulfillment);
    deps.telemetry.event('OrderSubmitted', {
      orderId: outbox.startFulfillment.orderId,
      total: outbox.startFulfillment.total,
      correlationId: outbox.startFulfillment.correlationId,
    });
  }
}

/**
 * Does the order's pending effects, then removes them from its outbox. Nothing is removed before it
 * is done: when an effect fails the error is thrown, the message is tried again and in the end given
 * back, and the effect stays pending for the next delivery on the order. A delivery whose effects
 * were done but not yet removed does them again, to no harm (both are idempotent).
 */
async function settleOutbox(
  deps: OrderTransactionDeps,
  orderId: string,
  pending: Outbox | null,
): Promise<void> {
  if (pending === null) return;
  await performOutbox(deps, pending);
  if (pending.parks.length === 0) {
    // A saga start alone is not worth a write: asked again it is a no-op (the instance id). The
    // session's cached copy forgets it, so the order's next write leaves it out.
    const cached = deps.cache.get(orderId);
    if (cached !== undefined) {
      const outbox = outboxWithout(cached.document.outbox, pending);
      deps.cache.set(orderId, { document: { ...cached.document, outbox }, etag: cached.etag });
    }
    return;
  }
  // A park must not be repeated once the parked queue has forgotten its id (a late re-send): it
  // leaves the stored outbox before the message is completed.
  await updateOptimistically<OrderDocument, null>(
    {
      read: async (attempt) => (attempt === 1 ? deps.cache.get(orderId) : reload(deps, orderId)),
      async write(document, current) {
        if (current === undefined) return { kind: 'lost' };
        const written = await deps.orders.replace(document, { ifMatch: current.etag });
        if (written.status !== 200) return { kind: 'lost' };
        deps.cache.set(orderId, { document, etag: written.etag });
        return { kind: 'written' };
      },
    },
    (current) => {
      const outbox = current?.document.outbox ?? null;
      const left = outboxWithout(outbox, pending);
      if (current === undefined || outbox === null || sameOutbox(left, outbox))
        return { next: undefined, result: null };
      return { next: { ...current.document, outbox: left }, result: null };
    },
    { code: 'order-contention', subject: `the outbox of order ${orderId}` },
  );
}

/** `outboxWithout` only removes: the same count is the same outbox. */
function sameOutbox(a: Outbox | null, b: Outbox | null): boolean {
  const size = (outbox: Outbox | null): number =>
    outbox === null ? 0 : outbox.parks.length + (outbox.startFulfillment === null ? 0 : 1);
  return size(a) === size(b);
}

function recordChange(
  deps: OrderTransactionDeps,
  decision: Extract<Decision, { kind: 'change' }>,
  properties: Record<string, string | number | null | undefined>,
): TransactionOutcome {
  if (decision.applied.length > 0)
    deps.telemetry.metric('entries.applied', decision.applied.length, properties);
  if (decision.outcome === 'buffered') {
    deps.telemetry.metric('entries.buffered', 1, {
      ...properties,
      waitingFor: decision.state.appliedSequence + 1,
    });
  }
  return {
    kind: decision.outcome,
    orderId: decision.state.orderId,
    applied: decision.applied.length,
    rejected: decision.rejected.length,
    submitted: decision.submitted,
  };
}

function parkRequest(
  message: DeliveredMessage,
  reason: ParkReason,
  description: string,
  transactionId: string | null,
): ParkRequest {
  return {
    fromQueue: QUEUE.orderTransactions,
    messageId: message.messageId,
    sessionId: message.sessionId,
    body: message.body,
    correlationId: message.correlationId,
    applicationProperties: message.applicationProperties,
    transactionId,
    reason,
    description,
  };
}
