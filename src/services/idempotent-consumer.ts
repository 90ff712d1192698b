/**
 * The Idempotent Consumer of `order-transactions`: each entry applied to its order exactly once, in
 * sequence order (docs/messages.md (the order of checks)). The order's header and the entry's
 * transaction record are written in one transactional batch; the store's unique id (409, on the
 * record) and etag (412, on the header) are the only arbiters between racing deliveries.
 */
import {
  admit,
  newOrderState,
  recordsNeeded,
  type ChangeDecision,
  type Duplicate,
  type ParkDecision,
  type ParkReason,
} from '../domain/order';
import { digestMismatch } from '../domain/order-slots';
import { resequence } from '../domain/sequential-convoy';
import { releaseBuffered } from './convoy/buffer-release';
import { knownRecords, readOrder, readRecord, reloadOrder, writeOrderBatch } from './convoy/order-store';
import { changeOutcome } from './convoy/entry-outcome';
import { dispatchOutbox, orderDocument, type OutboxDeps } from './convoy/outbox';
import { park, parkRequestOf } from './convoy/parking';
import { updateOptimistically } from './optimistic-update';
import type { OrderDocument } from './order-documents';
import type { DeliveredMessage, Stored, TelemetryProperties } from './ports';
import { QUEUE } from './queues';

export const CONSUMER = 'orderTransactions';

/** The orders container, the session's cache of orders, the sender, the saga starter, telemetry. */
export type ConsumerDeps = OutboxDeps;

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

/** Where the entry stands once its order is written, or needs no write. */
type ConsumerStep =
  /** A change was written: the order's header, with the effects still to dispatch. */
  | { kind: 'changed'; decision: ChangeDecision; document: OrderDocument }
  /** Decided on the header as read: nothing to write. */
  | { kind: 'unchanged'; decision: Duplicate | ParkDecision; current: Stored<OrderDocument> | undefined }
  /** The store holds the entry's record already (409): its digest decided. */
  | { kind: 'recorded'; decision: Duplicate | ParkDecision };

/**
 * One delivery of an entry: read its order, decide (src/domain/sequential-convoy.ts, `resequence`),
 * write the header and the entry's record in one batch, then carry the decision out.
 */
export async function applyEntry(deps: ConsumerDeps, message: DeliveredMessage): Promise<TransactionOutcome> {
  // Checks 1 and 2: a valid entry, in its order's session.
  const admitted = admit({ ...message, sessionId: message.sessionId ?? '' });
  if (admitted.kind === 'park') return parkMessage(deps, message, admitted, message.sessionId ?? null);
  const { entry, digest, properties: kept } = admitted;
  const orderId = entry.orderId;
  const correlationId = message.correlationId ?? null;
  const properties = {
    orderId,
    messageId: message.messageId,
    sessionId: message.sessionId,
    correlationId,
    sequence: entry.sequence,
  };

  const step = await updateOptimistically<OrderDocument, ConsumerStep>(
    {
      // The session's cached header first; after a lost race (412), the header as stored now.
      read: (attempt) => readOrder(deps, orderId, attempt),
      async write(document, current, step) {
        if (step.kind !== 'changed') throw new Error(`order ${orderId}: only a change is written`);
        const written = await writeOrderBatch(deps, document, current, step.decision);
        if (written.kind !== 'record-exists') return written;
        // 409 on the entry's record: an earlier delivery committed this transaction. The record's
        // digest tells a duplicate (the same content) from a reused transactionId (other content).
        const record = (await readRecord(deps, orderId, entry.transactionId))?.document;
        // Gone again (it never is: records have no ttl): decide again on what is stored.
        if (record === undefined) return { kind: 'lost' };
        const decision: Duplicate | ParkDecision =
          record.digest === digest
            ? { kind: 'duplicate', transactionId: entry.transactionId, previous: record.outcome }
            : digestMismatch(record, entry.transactionId, digest);
        return { kind: 'ended', result: { kind: 'recorded', decision } };
      },
    },
    async (current) => {
      // Checks 3 to 6 on the order as read, given the records the decision needs.
      const state = current?.document ?? newOrderState(orderId);
      const known = await knownRecords(deps, orderId, recordsNeeded(state, entry));
      const decision = resequence(state, entry, digest, message.messageId, kept, known);
      if (decision.kind !== 'change')
        return { next: undefined, result: { kind: 'unchanged', decision, current } };
      const order = current?.document;
      const document = orderDocument(decision, order?.correlationId ?? correlationId, order?.outbox ?? null);
      return { next: document, result: { kind: 'changed', decision, document } };
    },
    { code: 'order-contention', subject: `order ${orderId}` },
  );

  const outcome = await carryOut(deps, message, orderId, step, properties);
  await releaseBuffered(deps, orderId, properties);
  return outcome;
}

/** Carries out where the entry stands: the order's effects dispatched, or the message parked. */
async function carryOut(
  deps: ConsumerDeps,
  message: DeliveredMessage,
  orderId: string,
  step: ConsumerStep,
  properties: TelemetryProperties,
): Promise<TransactionOutcome> {
  if (step.kind === 'changed') {
    await dispatchOutbox(deps, step.document);
    return changeOutcome(deps.telemetry, step.decision, properties);
  }
  const { decision } = step;
  if (decision.kind === 'park') return parkMessage(deps, message, decision, orderId);
  // A duplicate: its first delivery's effects may still be pending. Found by the store's 409, it was
  // committed whatever the cache said, so the header is read again for them.
  const current = step.kind === 'recorded' ? await reloadOrder(deps, orderId) : step.current;
  await dispatchOutbox(deps, current?.document);
  deps.telemetry.metric('entries.duplicate', 1, properties);
  return { kind: 'duplicate', orderId };
}

async function parkMessage(
  deps: ConsumerDeps,
  message: DeliveredMessage,
  decision: ParkDecision,
  orderId: string | null,
): Promise<TransactionOutcome> {
  await park(deps, [parkRequestOf(QUEUE.orderTransactions, message, decision)]);
  return { kind: 'parked', reason: decision.reason, orderId };
}
