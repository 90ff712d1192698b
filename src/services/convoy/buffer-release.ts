/**
 * Buffered entries a change could not release in one batch (src/domain/order-slots.ts,
 * MAX_RECORD_WRITES), or that a crash between two batches left releasable: any delivery on the
 * order goes on releasing them, batch by batch, from the session's cached header.
 */
import { decideRelease, releasable, releaseNeeded, type Release } from '../../domain/order';
import { updateOptimistically } from '../optimistic-update';
import type { OrderDocument } from '../order-documents';
import type { TelemetryProperties } from '../ports';
import { dispatchOutbox, orderDocument, type OutboxDeps } from './outbox';
import { knownRecords, readOrder, writeOrderBatch } from './order-store';

/** Releases the order's buffered entries whose gap is filled, until none is left releasable. */
export async function releaseBuffered(
  deps: OutboxDeps,
  orderId: string,
  properties: TelemetryProperties,
): Promise<void> {
  while (hasReleasable(deps, orderId)) {
    const released = await updateOptimistically<OrderDocument, Release | null>(
      {
        read: (attempt) => readOrder(deps, orderId, attempt),
        async write(document, current, release) {
          if (release === null) return { kind: 'written' };
          const written = await writeOrderBatch(deps, document, current, release);
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
    await dispatchOutbox(deps, deps.cache.get(orderId)?.document);
    if (released.applied.length > 0)
      deps.telemetry.metric('entries.applied', released.applied.length, properties);
  }
}

/** Whether the order's cached header has buffered entries a change may release now. */
function hasReleasable(deps: OutboxDeps, orderId: string): boolean {
  const cached = deps.cache.get(orderId);
  return cached !== undefined && releasable(cached.document);
}
