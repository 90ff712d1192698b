/**
 * The parallel half of the convoy: apply one entry to its order exactly once, in sequence order.
 * The order document and an inbox marker are written in one transactional batch; the store's
 * unique id (409) and etag (412) are the only arbiters between racing deliveries.
 */
import { admit, decideEntry, newOrderState, type Decision, type ParkReason } from '../../domain/order';
import { PermanentError, TransientError } from '../../domain/errors';
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
/** Writes lost to another writer before giving up and letting the broker redeliver. */
const MAX_WRITE_ATTEMPTS = 8;

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

  let stored = deps.cache.get(orderId);
  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
    const decision = decideEntry(
      stored?.document ?? newOrderState(orderId),
      entry,
      digest,
      message.messageId,
      message.applicationProperties,
    );
    if (decision.kind === 'duplicate') {
      await redoOutbox(deps, stored, message.messageId);
      deps.telemetry.metric('entries.duplicate', 1, properties);
      return { kind: 'duplicate', orderId };
    }
    if (decision.kind === 'park') {
      await park(deps, [parkRequest(message, decision.reason, decision.description, decision.transactionId)]);
      return { kind: 'parked', reason: decision.reason, orderId };
    }

    const document = orderDocument(decision, stored?.document.correlationId ?? correlationId, message);
    const marker: InboxMarker = {
      id: inboxMarkerId(CONSUMER, message.messageId),
      kind: 'inbox',
      orderId,
      consumer: CONSUMER,
      messageId: message.messageId,
      transactionId: entry.transactionId,
      digest,
      outcome: decision.outcome,
      ttl: deps.inboxMarkerTtlSeconds,
    };
    const result = await deps.orders.batch(orderId, [
      { op: 'create', document: marker },
      stored === undefined ? { op: 'create', document } : { op: 'replace', document, ifMatch: stored.etag },
    ]);

    if (result.ok) {
      stored = { document, etag: result.results[1].etag ?? '' };
      deps.cache.set(orderId, stored);
      await performOutbox(deps, document.outbox);
      return recordChange(deps, decision, properties);
    }
    const [markerResult, orderResult] = result.results;
    if (markerResult.status === 409) {
      // This very message was committed by an earlier delivery: a duplicate, whatever the cache said.
      stored = await reload(deps, orderId);
      await redoOutbox(deps, stored, message.messageId);
      deps.telemetry.metric('entries.duplicate', 1, properties);
      return { kind: 'duplicate', orderId };
    }
    if (orderResult.status === 409 || orderResult.status === 412 || orderResult.status === 404) {
      // Another writer got there first: decide again on what it wrote.
      stored = await reload(deps, orderId);
      continue;
    }
    throw new PermanentError(
      'unexpected-batch-result',
      `batch for order ${orderId} failed with statuses ${result.results.map((r) => r.status).join(', ')}`,
    );
  }
  throw new TransientError(
    'order-contention',
    `order ${orderId} changed under ${MAX_WRITE_ATTEMPTS} consecutive writes; the message will be redelivered`,
  );
}

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
