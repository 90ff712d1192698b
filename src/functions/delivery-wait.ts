import type { InvocationContext } from '@azure/functions';
import type { Telemetry } from '../services/ports';

/**
 * When the message was enqueued, from the trigger metadata: `EnqueuedTimeUtc`, which the Service Bus
 * extension writes from a DateTime of unspecified kind, with no offset and no `Z` (Newtonsoft; the
 * binding data of `ServiceBusTriggerBindingStrategy`, local/worker/service-bus.ts), and which is UTC.
 */
export function enqueuedAt(context: InvocationContext): number | undefined {
  const value = context.triggerMetadata?.enqueuedTimeUtc;
  if (typeof value !== 'string' || value === '') return undefined;
  const hasOffset = /(?:Z|[+-]\d\d:\d\d)$/i.test(value);
  const time = Date.parse(hasOffset ? value : `${value}Z`);
  return Number.isNaN(time) ? undefined : time;
}

/**
 * How long the message waited in its queue before this delivery: `messages.waitMs`, a distribution
 * per queue (src/adapters/telemetry.ts `DISTRIBUTION_METRICS`), recorded for every delivery whatever
 * the sampling, so the queue-wait alert reads its maximum (bicep/modules/alerts.bicep). A
 * redelivery's wait counts from the first enqueue.
 */
export function recordDeliveryWait(
  telemetry: Telemetry,
  queue: string,
  context: InvocationContext,
  now: number = Date.now(),
): void {
  const enqueued = enqueuedAt(context);
  if (enqueued === undefined) return;
  telemetry.metric('messages.waitMs', Math.max(0, now - enqueued), { queue });
}
