/**
 * The parallel half of the convoy: apply one entry to its order exactly once, in sequence order.
 * The order's header and the entry's transaction record are written in one transactional batch; the
 * store's unique id (409) and etag (412) are the only arbiters between racing deliveries.
 */
import {
  admit,
  decideEntry,
  decideRelease,
  judgeSeen,
  newOrderState,
  recordsNeeded,
  releasable,
  releaseNeeded,
  type Decision,
  type OrderState,
  type KnownRecords,
  type ParkReason,
  type Release,
} from '../../domain/order';
import { updateOptimistically, type Change, type OptimisticTarget } from '../optimistic-update';
import { park, type ParkRequest } from './parking';
import { QUEUE } from '../queues';
import type { OrderCache } from './order-cache';
import {
  fulfillmentInputOf,
  outboxAfter,
  outboxWithout,
  type OrderDocument,
  type Outbox,
} from '../order-documents';
import { knownRecords, reloadOrder, writeChange } from './order-writes';
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
  /** The queues' message size limit a parked copy must fit (SERVICE_BUS_MAX_MESSAGE_BYTES); Standard's by default. */
  maxMessageBytes?: number;
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
  // session's cache, and the write is the batch of the header and the entry's transaction record,
  // which has a third outcome a plain replace has not: the record exists, so the entry was seen.
  const target: OptimisticTarget<OrderDocument, Attempt> = {
    read: (attempt) => (attempt === 1 ? deps.cache.get(orderId) : reloadOrder(deps, orderId)),
    async write(document, current, attempt) {
      if (attempt.kind !== 'change') throw new Error(`order ${orderId}: only a change is written`);
      const written = await writeChange(deps, document, current, attempt.decision);
      if (written.kind !== 'seen') return written;
      const decision = judgeSeen(written.record, entry.transactionId, digest);
      return { kind: 'settled', result: { kind: 'seen', decision } };
    },
  };

  // Decided at once when the entry needs no stored records (it amends nothing), else once they are read.
  const decide = (
    current: Stored<OrderDocument> | undefined,
  ): Change<OrderDocument, Attempt> | Promise<Change<OrderDocument, Attempt>> => {
    const state = current?.document ?? newOrderState(orderId);
    const needed = recordsNeeded(state, entry);
    return needed.length === 0
      ? decideOn(current, state, NO_RECORDS)
      : knownRecords(deps, orderId, needed).then((known) => decideOn(current, state, known));
  };
  const decideOn = (
    current: Stored<OrderDocument> | undefined,
    state: OrderState,
    known: KnownRecords,
  ): Change<OrderDocument, Attempt> => {
    const decision = decideEntry(
      state,
      entry,
      digest,
      message.messageId,
      message.applicationProperties,
      known,
    );
    if (decision.kind !== 'change')
      return { next: undefined, result: { kind: 'settled', decision, current } };
    const document = orderDocument(
      decision,
      current?.document.correlationId ?? correlationId,
      current?.document.outbox ?? null,
    );
    return { next: document, result: { kind: 'change', decision, document } };
  };
  const attempt = await updateOptimistically<OrderDocument, Attempt>(target, decide, {
    code: 'order-contention',
    subject: `order ${orderId}`,
  });

  const outcome = await settle(deps, message, orderId, attempt, properties);
  // Buffered entries a change could not release in one batch, or that a crash between two batches
  // left releasable: any delivery on the order goes on with them.
  if (hasReleasable(deps, orderId)) await drain(deps, orderId, properties);
  return outcome;
}

async function settle(
  deps: OrderTransactionDeps,
  message: DeliveredMessage,
  orderId: string,
  attempt: Attempt,
  properties: Record<string, string | number | null | undefined>,
): Promise<TransactionOutcome> {
  if (attempt.kind === 'change') {
    if (attempt.document.outbox !== null) await settleOutbox(deps, orderId, attempt.document.outbox);
    return recordChange(deps, attempt.decision, properties);
  }
  const { decision } = attempt;
  if (decision.kind === 'duplicate') {
    // Seen by the store: this very entry was committed by an earlier delivery, whatever the cache said.
    const outbox =
      attempt.kind === 'seen'
        ? ((await reloadOrder(deps, orderId))?.document.outbox ?? null)
        : (attempt.current?.document.outbox ?? null);
    await settleOutbox(deps, orderId, outbox);
    deps.telemetry.metric('entries.duplicate', 1, properties);
    return { kind: 'duplicate', orderId };
  }
  if (decision.kind === 'change') throw new Error(`order ${orderId}: a change is not settled`);
  await park(deps, [parkRequest(message, decision.reason, decision.description, decision.transactionId)]);
  return { kind: 'parked', reason: decision.reason, orderId };
}

/**
 * No records to read, shared by the decisions that need none. Most entries amend nothing and leave
 * nothing to release or to do: the checks that skip those calls save an async call and its await
 * each, some 380 bytes of allocation per entry apiece (measured on the consumer alone).
 */
const NO_RECORDS: KnownRecords = new Map();

/** Whether the order's cached header has buffered entries a change may release now. */
function hasReleasable(deps: OrderTransactionDeps, orderId: string): boolean {
  const cached = deps.cache.get(orderId);
  return cached !== undefined && releasable(cached.document);
}

/** Releases, batch by batch, the buffered entries of the order whose gap is filled. */
async function drain(
  deps: OrderTransactionDeps,
  orderId: string,
  properties: Record<string, string | number | null | undefined>,
): Promise<void> {
  while (hasReleasable(deps, orderId)) {
    const released = await updateOptimistically<OrderDocument, Release | null>(
      {
        read: async (attempt) => (attempt === 1 ? deps.cache.get(orderId) : reloadOrder(deps, orderId)),
        async write(document, current, release) {
          if (release === null) return { kind: 'written' };
          const written = await writeChange(deps, document, current, release);
          return written.kind === 'written' ? written : { kind: 'lost' };
        },
      },
      async (current) => {
        if (current === undefined) return { next: undefined, result: null };
        const header = current.document;
        const known = await knownRecords(deps, orderId, releaseNeeded(header));
        const release = decideRelease(header, known);
        if (release === null) return { next: undefined, result: null };
        return { next: orderDocument(release, header.correlationId, header.outbox), result: release };
      },
      { code: 'order-contention', subject: `the buffer of order ${orderId}` },
    );
    if (released === null) return;
    await settleOutbox(deps, orderId, deps.cache.get(orderId)?.document.outbox ?? null);
    if (released.applied.length > 0)
      deps.telemetry.metric('entries.applied', released.applied.length, properties);
  }
}

/** The decision on the order (a change to write, or a duplicate or park that writes nothing), or
 * what the store's record of the entry, found by its 409, made of it. */
type Attempt =
  | { kind: 'change'; decision: Extract<Decision, { kind: 'change' }>; document: OrderDocument }
  | {
      kind: 'settled';
      decision: Exclude<Decision, { kind: 'change' }>;
      current: Stored<OrderDocument> | undefined;
    }
  | { kind: 'seen'; decision: Decision };

/** The order as this change leaves it: its effects added to those still pending before it. */
function orderDocument(
  decision: Extract<Decision, { kind: 'change' }> | Release,
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
      read: async (attempt) => (attempt === 1 ? deps.cache.get(orderId) : reloadOrder(deps, orderId)),
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
