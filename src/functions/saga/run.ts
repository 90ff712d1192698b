/**
 * One run of the saga as its helpers see it: the orchestration context, the policy, the order, and
 * the counts that give each needs-attention episode and alert of the instance a stable key.
 * Orchestrators replay: no clock, randomness or I/O here, only `context.df`.
 */
import * as df from 'durable-functions';
import type { OrchestrationContext, Task } from 'durable-functions';
import type { OperationName } from '../../domain/saga';
import type { RetrySettings } from '../../adapters/settings';
import type { FulfillmentInput } from '../../services/ports';
import type { OperationInput } from '../../services/fulfillment/saga-activities';

export interface SagaPolicy {
  retry: RetrySettings;
  reviewTimeoutMinutes: number;
  cancellationFeePercent: number;
}

/** An orchestrator's generator: it yields durable tasks and ends with a `T`. */
export type Flow<T> = Generator<Task, T, unknown>;

export interface SagaRun {
  readonly context: OrchestrationContext;
  readonly policy: SagaPolicy;
  readonly order: FulfillmentInput;
  readonly retry: df.RetryOptions;
  /** Needs-attention episodes and alerts so far, counted so each has a stable key. */
  readonly counts: { episodes: number; alerts: number };
}

export function sagaRun(context: OrchestrationContext, policy: SagaPolicy, order: FulfillmentInput): SagaRun {
  const retry = new df.RetryOptions(policy.retry.firstIntervalMs, policy.retry.maxAttempts);
  retry.backoffCoefficient = policy.retry.backoffCoefficient;
  retry.maxRetryIntervalInMilliseconds = policy.retry.maxIntervalMs;
  return { context, policy, order, retry, counts: { episodes: 0, alerts: 0 } };
}

/** Schedules a step, compensation or settlement under the retry policy. */
export function callOperation(
  run: SagaRun,
  name: OperationName,
  input: OperationInput = { order: run.order },
): Task {
  return run.context.df.callActivityWithRetry(name, run.retry, input);
}

export function* pause(run: SagaRun, ms: number): Flow<void> {
  yield run.context.df.createTimer(new Date(run.context.df.currentUtcDateTime.getTime() + ms));
}
