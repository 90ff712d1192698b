/**
 * The order's outbox (src/services/order-documents.ts, `Outbox`): the effects a change adds to its
 * header in the same batch, and their dispatch once that batch committed. Nothing leaves the outbox
 * before it is done.
 */
import type { ChangeDecision, Release } from '../../domain/order';
import { updateOptimistically } from '../optimistic-update';
import {
  fulfillmentInputOf,
  HEADER_SLOT,
  ORDER_HEADER_ID,
  ORDER_KIND,
  outboxAfter,
  outboxWithout,
  type OrderDocument,
  type Outbox,
} from '../order-documents';
import { QUEUE } from '../queues';
import type { FulfillmentStarter, MessageSender, Telemetry } from '../ports';
import { park } from './parking';
import { readOrder, type OrderStore } from './order-store';

export interface OutboxDeps extends OrderStore {
  sender: MessageSender;
  fulfillment: FulfillmentStarter;
  telemetry: Telemetry;
  /** The queues' message size limit a parked copy must fit (SERVICE_BUS_MAX_MESSAGE_BYTES); Standard's by default. */
  maxMessageBytes?: number;
}

/** The order as this change leaves it: its effects added to those still pending before it. */
export function orderDocument(
  decision: ChangeDecision | Release,
  correlationId: string | null,
  pending: Outbox | null,
): OrderDocument {
  const { state } = decision;
  const added: Outbox = {
    // Without the order's correlationId, which the header holds once and `dispatchOutbox` adds to
    // each park: a copy in each would grow the header by up to MAX_CORRELATION_ID_BYTES a park.
    parks: decision.rejected.map((rejection) => ({
      fromQueue: QUEUE.orderTransactions,
      messageId: rejection.messageId,
      sessionId: state.orderId,
      body: rejection.entry,
      applicationProperties: rejection.properties,
      transactionId: rejection.transactionId,
      reason: 'rejected',
      description: rejection.description,
    })),
    startFulfillment: decision.submitted ? fulfillmentInputOf(state, correlationId) : null,
  };
  return {
    ...state,
    id: ORDER_HEADER_ID,
    kind: ORDER_KIND,
    slot: HEADER_SLOT,
    correlationId,
    outbox: outboxAfter(pending, added),
  };
}

/**
 * Does the pending effects of the order's header, each park with the order's correlationId, then
 * removes them from its outbox. Nothing is removed before it
 * is done: when an effect fails the error is thrown, the message is tried again and in the end given
 * back, and the effect stays pending for the next delivery on the order. A delivery whose effects
 * were done but not yet removed does them again, to no harm (both are idempotent).
 */
export async function dispatchOutbox(deps: OutboxDeps, header: OrderDocument | undefined): Promise<void> {
  const pending = header?.outbox ?? null;
  if (header === undefined || pending === null) return;
  await performOutbox(deps, pending, header.correlationId);
  await clearOutbox(deps, header.orderId, pending);
}

async function performOutbox(deps: OutboxDeps, outbox: Outbox, correlationId: string | null): Promise<void> {
  await park(
    deps,
    outbox.parks.map((request) => ({ correlationId: correlationId ?? undefined, ...request })),
  );
  if (outbox.startFulfillment !== null) {
    await deps.fulfillment.start(outbox.startFulfillment);
    deps.telemetry.event('OrderSubmitted', {
      orderId: outbox.startFulfillment.orderId,
      total: outbox.startFulfillment.total,
      correlationId: outbox.startFulfillment.correlationId,
    });
  }
}

async function clearOutbox(deps: OutboxDeps, orderId: string, done: Outbox): Promise<void> {
  if (done.parks.length === 0) {
    // A saga start alone is not worth a write: asked again it is a no-op (the instance id). The
    // session's cached copy forgets it, so the order's next write leaves it out.
    const cached = deps.cache.get(orderId);
    if (cached !== undefined) {
      const outbox = outboxWithout(cached.document.outbox, done);
      deps.cache.set(orderId, { document: { ...cached.document, outbox }, etag: cached.etag });
    }
    return;
  }
  // A park must not be repeated once the parked queue has forgotten its id (a late re-send): it
  // leaves the stored outbox before the message is completed.
  await updateOptimistically<OrderDocument, null>(
    {
      read: (attempt) => readOrder(deps, orderId, attempt),
      async write(document, current) {
        if (current === undefined) return { kind: 'lost' };
        const written = await deps.orders.replace(document, { ifMatch: current.etag });
        if (written.status !== 200) return { kind: 'lost' };
        deps.cache.set(orderId, { document, etag: written.etag });
        return { kind: 'written' };
      },
    },
    async (current) => {
      const outbox = current?.document.outbox ?? null;
      const left = outboxWithout(outbox, done);
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
