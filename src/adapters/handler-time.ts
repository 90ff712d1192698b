/**
 * How long one Service Bus handler can run, from the figures the code runs with, all here or
 * imported here: the Azure clients' retry options (the adapters pass these very objects), the
 * handlers' backoff (src/services/backoff.ts) and the bound every call to Azure is held to.
 *
 * Why it matters: the Functions host renews a session's lock for `maxAutoLockRenewalDuration`
 * (host.json; the Service Bus extension hands it to the session processor, sdk/servicebus/
 * Microsoft.Azure.WebJobs.Extensions.ServiceBus/src/Config/ServiceBusOptions.cs,
 * `ToSessionProcessorOptions`). A handler still running past it may lose the lock, and another
 * instance may take the order's session while this one still writes: the order's entries are no
 * longer handled one at a time. So a handler must end before that:
 *
 *   slowest handler = delivery deadline + call bound < maxAutoLockRenewalDuration
 *
 * - delivery deadline (`HANDLER_BACKOFF.deadlineMs`): no attempt, wait or call to a dependency
 *   starts later than this after the handler started (src/services/delivery-deadline.ts);
 * - call bound (`CALL_BOUND_MS`): one call to Azure that started before the deadline ends within
 *   it, the adapters abort it and give up on it then (src/adapters/azure/call-bound.ts). It is the
 *   worst case of one call under the clients' retry options below, so a call those options let
 *   finish is never cut; what they do not bound (Cosmos DB's fail-over and endpoint discovery
 *   retries, the Service Bus link's opening) the bound cuts.
 *
 * And host.json's `functionTimeout` is not above `maxAutoLockRenewalDuration`: should a handler
 * somehow run on, the host ends it (on an out-of-process worker by restarting the worker,
 * Azure/azure-functions-host#8720) before its lock can lapse. tests/contract/lock-bound.test.ts
 * reads host.json and holds these figures to both.
 */
import type { RetryOptions } from '@azure/service-bus';
import type { RetryOptions as CosmosRetryOptions } from '@azure/cosmos';
import { HANDLER_BACKOFF, type BackoffPolicy } from '../services/backoff';

/**
 * The app's Service Bus client (its sender). The retry mode is left unset: Fixed, the SDK's default
 * (@azure/core-amqp `retry`). An operation is tried `maxRetries` + 1 times, each try bounded by
 * `timeoutInMs`, with `retryDelayInMs` between tries. A send normally takes milliseconds; 15 s a try
 * leaves room for opening the link and getting a token.
 */
export const SERVICE_BUS_RETRY_OPTIONS: Readonly<
  Required<Pick<RetryOptions, 'maxRetries' | 'retryDelayInMs' | 'timeoutInMs'>>
> = {
  maxRetries: 2,
  retryDelayInMs: 2_000,
  timeoutInMs: 15_000,
};

/** Each HTTP request of the Cosmos DB client (`connectionPolicy.requestTimeout`, default 60 s). */
export const COSMOS_REQUEST_TIMEOUT_MS = 10_000;

/**
 * The Cosmos DB client's retries of a throttled request (429, `ResourceThrottleRetryPolicy`): at most
 * `maxRetryAttemptCount`, a fixed wait between them, and no new wait once `maxWaitTimeInSeconds` of
 * waits are spent. A fixed wait rather than the service's retry-after keeps the worst case known;
 * throttling that outlasts it is ridden out by the handler's backoff.
 */
export const COSMOS_RETRY_OPTIONS: Readonly<Required<CosmosRetryOptions>> = {
  maxRetryAttemptCount: 4,
  fixedRetryIntervalInMilliseconds: 1_000,
  maxWaitTimeInSeconds: 10,
};

/** The longest one Service Bus operation takes under Fixed retry options: every try times out. */
export function serviceBusCallWorstMs(options: typeof SERVICE_BUS_RETRY_OPTIONS): number {
  return (options.maxRetries + 1) * options.timeoutInMs + options.maxRetries * options.retryDelayInMs;
}

/**
 * The longest one Cosmos DB request takes under its throttling retries: every request times out, and
 * the waits between them are as many as the count and the wait budget allow (the policy starts a wait
 * while the waits so far are under the budget).
 */
export function cosmosCallWorstMs(requestTimeoutMs: number, retry: typeof COSMOS_RETRY_OPTIONS): number {
  const wait = retry.fixedRetryIntervalInMilliseconds;
  const waits = Math.min(retry.maxRetryAttemptCount, Math.ceil((retry.maxWaitTimeInSeconds * 1000) / wait));
  return (retry.maxRetryAttemptCount + 1) * requestTimeoutMs + waits * wait;
}

/**
 * The most one call to Azure (a Cosmos DB request, a send, a start of an orchestration) may take: the
 * worst case of the slower client. The adapters give up on a call at this bound.
 */
export const CALL_BOUND_MS = Math.max(
  serviceBusCallWorstMs(SERVICE_BUS_RETRY_OPTIONS),
  cosmosCallWorstMs(COSMOS_REQUEST_TIMEOUT_MS, COSMOS_RETRY_OPTIONS),
);

export interface HandlerTime {
  /** The waits of one delivery's backoff, in all. */
  rideOutBudgetMs: number;
  /** No attempt, wait or call starts later than this after the handler started. */
  deliveryDeadlineMs: number;
  /** One call started before the deadline ends within this. */
  callBoundMs: number;
}

export function handlerTimeOf(policy: BackoffPolicy, callBoundMs: number): HandlerTime {
  return {
    rideOutBudgetMs: policy.budgetMs,
    deliveryDeadlineMs: policy.deadlineMs ?? Number.POSITIVE_INFINITY,
    callBoundMs,
  };
}

/** The figures the deployed handlers run with. */
export const HANDLER_TIME: HandlerTime = handlerTimeOf(HANDLER_BACKOFF, CALL_BOUND_MS);

/** The longest a handler can run: a call started just before the deadline, then its bound. */
export function slowestHandlerMs(time: HandlerTime): number {
  return time.deliveryDeadlineMs + time.callBoundMs;
}

/** The host.json figures the bound is held to, in ms. */
export interface HostTime {
  functionTimeoutMs: number;
  maxAutoLockRenewalMs: number;
}

/**
 * What is wrong with the figures, one line each; none when a handler ends before its lock can
 * lapse, the host's timeout ends a handler before that too, and never cuts a handler that keeps to
 * its own deadline (a timeout restarts the whole worker).
 */
export function lockBoundProblems(host: HostTime, time: HandlerTime = HANDLER_TIME): string[] {
  const problems: string[] = [];
  const slowest = slowestHandlerMs(time);
  const seconds = (ms: number): string => `${ms / 1000} s`;
  if (!(time.rideOutBudgetMs <= time.deliveryDeadlineMs)) {
    problems.push(
      `the ride-out budget (${seconds(time.rideOutBudgetMs)}) is past the delivery deadline (${seconds(time.deliveryDeadlineMs)})`,
    );
  }
  if (!(slowest < host.maxAutoLockRenewalMs)) {
    problems.push(
      `the slowest handler (deadline ${seconds(time.deliveryDeadlineMs)} + call bound ${seconds(time.callBoundMs)} = ${seconds(slowest)}) is not below maxAutoLockRenewalDuration (${seconds(host.maxAutoLockRenewalMs)})`,
    );
  }
  if (!(host.functionTimeoutMs <= host.maxAutoLockRenewalMs)) {
    problems.push(
      `functionTimeout (${seconds(host.functionTimeoutMs)}) is above maxAutoLockRenewalDuration (${seconds(host.maxAutoLockRenewalMs)})`,
    );
  }
  if (!(slowest <= host.functionTimeoutMs)) {
    problems.push(
      `the slowest handler (${seconds(slowest)}) is above functionTimeout (${seconds(host.functionTimeoutMs)}), which would restart the worker`,
    );
  }
  return problems;
}

/**
 * How long a role not yet in effect is waited out before a message is dead-lettered: each of its
 * `maxDeliveryCount` deliveries waits the ride-out budget.
 */
export function authorizationWaitMs(maxDeliveryCount: number, time: HandlerTime = HANDLER_TIME): number {
  return maxDeliveryCount * time.rideOutBudgetMs;
}
