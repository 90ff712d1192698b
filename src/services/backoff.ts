/**
 * Riding out a dependency outage inside the handler, before the message is given back.
 *
 * Without it a transient failure throws at once, the host abandons the message and the broker
 * delivers it again at once: `maxDeliveryCount` (10) deliveries are spent in milliseconds and an
 * outage of any length dead-letters every message in flight. So the handler tries again with
 * exponential backoff for up to `budgetMs`, and only then throws.
 *
 * While the handler waits, the Functions host keeps the message's lock (the session's lock, on a
 * session queue) alive: the Service Bus extension's processors renew it automatically for up to
 * `maxAutoLockRenewalDuration` (host.json `extensions.serviceBus`, default and here 00:05:00;
 * Microsoft Learn, "ServiceBusProcessorOptions.MaxAutoLockRenewalDuration" and
 * "ServiceBusSessionProcessorOptions.MaxAutoLockRenewalDuration": "the maximum duration within which
 * the lock will be renewed automatically", default 5 minutes; the extension passes its
 * `ServiceBusOptions.MaxAutoLockRenewalDuration` to both, sdk/servicebus/
 * Microsoft.Azure.WebJobs.Extensions.ServiceBus/src/Config/ServiceBusOptions.cs). A delivery's
 * deadline (`deadlineMs`) bounds the whole handler inside that: src/adapters/handler-time.ts adds it
 * up and tests/contract/lock-bound.test.ts holds it to host.json.
 */
import { failureKindOf } from '../domain/errors';
import { DeliveryDeadlineError, deliveryDeadline, type Deadline } from './delivery-deadline';

export interface BackoffPolicy {
  /** The first wait after a transient failure. */
  firstDelayMs: number;
  /** Each wait is this many times the one before... */
  factor: number;
  /** ...up to this. */
  maxDelayMs: number;
  /** The most one delivery waits in all; then the failure is thrown and the message given back. */
  budgetMs: number;
  /**
   * No attempt, wait or call to a dependency starts later than this after the delivery began (by
   * the backoff's clock, when it has one): slow attempts shorten the waits, never the other way.
   */
  deadlineMs?: number;
}

/**
 * 1, 2, 4, 8, 16, 30, 30... seconds, 3 minutes in all: an outage of up to 3 minutes is ridden out
 * within one delivery, and with `maxDeliveryCount` 10 one of 30 minutes before anything
 * dead-letters, as long as a new role assignment may take to apply (AuthorizationPendingError).
 * The deadline leaves 20 s for the attempts between the waits; src/adapters/handler-time.ts adds the
 * bound of the call under way at the deadline and holds the sum below the lock's renewal.
 */
export const HANDLER_BACKOFF: BackoffPolicy = {
  firstDelayMs: 1_000,
  factor: 2,
  maxDelayMs: 30_000,
  budgetMs: 180_000,
  deadlineMs: 200_000,
};

export interface Backoff {
  policy: BackoffPolicy;
  /** Waits `ms` by the app's clock (real time on Azure; the embedded runtime may run it faster). */
  sleep(ms: number): Promise<void>;
  /**
   * The app's clock, which holds a delivery to the policy's deadline. Without one (the embedded
   * runtime, whose calls take no time of the app's clock) a delivery's time is its waits alone, which
   * the budget bounds: no deadline is kept, and a run does not depend on how fast the machine is.
   */
  now?(): number;
}

export function realTimeBackoff(policy: BackoffPolicy = HANDLER_BACKOFF): Backoff {
  return { policy, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)), now: Date.now };
}

export interface RetryNotice {
  error: unknown;
  /** Attempts failed so far. */
  attempt: number;
  delayMs: number;
  /** Waited so far in this delivery, this wait included. */
  waitedMs: number;
}

/** The waits the policy allows, in order: what `rideOut` sleeps between attempts. */
export function backoffDelays(policy: BackoffPolicy): number[] {
  const delays: number[] = [];
  let waited = 0;
  let next = policy.firstDelayMs;
  while (waited < policy.budgetMs && next > 0) {
    const delay = Math.min(next, policy.maxDelayMs, policy.budgetMs - waited);
    delays.push(delay);
    waited += delay;
    next = Math.min(next * policy.factor, policy.maxDelayMs);
  }
  return delays;
}

/**
 * Runs `attempt` until it succeeds, fails for good (a permanent failure is thrown at once), or the
 * policy's budget or deadline is spent (the last transient failure is thrown). `attempt` must be
 * safe to run again: the consumers are idempotent by design. It gets the delivery's deadline, to
 * hold its calls to (src/services/delivery-deadline.ts, `withinDeadline`).
 */
export async function rideOut<T>(
  backoff: Backoff,
  attempt: (deadline: Deadline) => Promise<T>,
  onRetry?: (notice: RetryNotice) => void,
): Promise<T> {
  const clock = backoff.now?.bind(backoff);
  const started = clock?.();
  const deadline = deliveryDeadline(
    clock === undefined ? undefined : backoff.policy.deadlineMs,
    () => (clock?.() ?? 0) - (started ?? 0),
  );
  // Worked out at the first failure: nearly every delivery succeeds at once.
  let delays: number[] | undefined;
  let waitedMs = 0;
  let lastFailure: unknown;
  for (let failed = 0; ; failed++) {
    try {
      return await attempt(deadline);
    } catch (error) {
      if (failureKindOf(error) !== 'transient') throw error;
      // The deadline passed inside an attempt: what failed before it is the reason to give.
      if (error instanceof DeliveryDeadlineError) throw lastFailure ?? error;
      lastFailure = error;
      delays ??= backoffDelays(backoff.policy);
      if (failed >= delays.length) throw error;
      const delayMs = delays[failed];
      // A wait that would end past the deadline could be followed by no attempt.
      if (delayMs >= deadline.remainingMs()) throw error;
      waitedMs += delayMs;
      onRetry?.({ error, attempt: failed + 1, delayMs, waitedMs });
      await backoff.sleep(delayMs);
    }
  }
}
