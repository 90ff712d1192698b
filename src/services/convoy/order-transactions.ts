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
        id: inboxMarkerId(CONSUMER, message.messageId),
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
      const document = orderDocument(decision, current?.document.correlationId ?? correlationId, message);
      return { next: document, result: { kind: 'change', decision, document } };
    },
    { code: 'order-contention', subject: `order ${orderId}` },
  );

  if (attempt.kind === 'committed-before') {
    // This very message was committed by an earlier delivery: a duplicate, whatever the cache said.
    await redoOutbox(deps, await reload(deps, orderId), message.messageId);
    deps.telemetry.metric('entries.duplicate', 1, properties);
    return { kind: 'duplicate', orderId };
  }
  if (attempt.kind === 'settled') {
    const { decision } = attempt;
    if (decision.kind === 'duplicate') {
      await redoOutbox(deps, attempt.current, message.messageId);
      deps.telemetry.metric('entries.duplicate', 1, properties);
      return { kind: 'duplicate', orderId };
    }
    await park(deps, [parkRequest(message, decision.reason, decision.description, decision.transactionId)]);
    return { kind: 'parked', reason: decision.reason, orderId };
  }
  await performOutbox(deps, attempt.document.outbox);
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

function orderDocument(
  decision: Extract<Decision, { kind: 'change' }>,
  correlationId: string | null,
  message: DeliveredMessage,
): OrderDocument {
  const { state } = decision;
  const outbox: Outbox = {
    messageId: message.messageId,
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
    outbox: outbox.parks.length > 0 || outbox.startFulfillment !== null ? outbox : null,
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

/** A redelivery of the message whose write left effects: do them again, they are idempotent. */
async function redoOutbox(
  deps: OrderTransactionDeps,
  stored: Stored<OrderDocument> | undefined,
  messageId: string,
): Promise<void> {
  const outbox = stored?.document.outbox ?? null;
  if (outbox !== null && outbox.messageId === messageId) await performOutbox(deps, outbox);
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
