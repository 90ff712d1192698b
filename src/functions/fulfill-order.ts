/**
 * The fulfillment saga on Durable Functions (docs/saga.md). The flow reads top to bottom: each step
 * that completes adds its compensation; a step refused for good, or a client's cancel, runs the
 * compensations in their stages; a compensation that keeps failing waits for a person. The point
 * of no return (`SAGA` in domain/saga.ts) is never undone: it recovers forward, and a cancel that
 * comes once it was reached keeps the cancellation fee.
 * Orchestrators replay: no clock, randomness or I/O here, only `context.df`.
 */
import { errorMessage } from '../domain/errors';
import * as df from 'durable-functions';
import type { OrchestrationContext, OrchestrationHandler, Task, TimerTask } from 'durable-functions';
import {
  OPERATIONS,
  STEPS,
  compensationsFor,
  failureReason,
  isPointOfNoReturn,
  oneLine,
  refundAfterCancellationFee,
  settlementsFor,
  type CompensationName,
  type OperationName,
  type SagaStatus,
  type StepName,
} from '../domain/saga';
import type { RetrySettings } from '../adapters/settings';
import type { FulfillmentInput } from '../services/ports';
import {
  raiseSagaAlert,
  recordSagaStatus,
  runOperation,
  type AlertInput,
  type OperationInput,
  type SagaDeps,
  type RecordedStatus,
  type StatusChange,
} from '../services/fulfillment/saga-activities';
import type { ReviewDecision } from '../services/fulfillment/saga-record';
import {
  CANCEL_CONFIRMED_ORDER,
  CANCEL_EVENT,
  FULFILL_ORDER,
  REVIEW_EVENT,
} from '../services/fulfillment/starter';
import type { ActivityDefinition, OrchestrationDefinition } from './definition';

export const RECORD_SAGA_STATUS = 'recordSagaStatus';
export const RAISE_SAGA_ALERT = 'raiseSagaAlert';

/** Rounds of the retry policy a step past the point of no return gets before a person is asked. */
export const FORWARD_RECOVERY_ROUNDS = 3;

export interface SagaPolicy {
  retry: RetrySettings;
  reviewTimeoutMinutes: number;
  cancellationFeePercent: number;
}

export type { ReviewDecision };

export interface SagaOutcome {
  status: SagaStatus;
  reason: string | null;
}

export interface CancelConfirmedInput {
  order: FulfillmentInput;
  completed: StepName[];
}

type Saga = Generator<Task, SagaOutcome, unknown>;

/** How an operation ended, as the orchestration sees it. */
type Settled = { ok: true } | { ok: false; retriesRanOut: boolean; message: string; details: string | null };

function retryOptions(settings: RetrySettings): df.RetryOptions {
  const options = new df.RetryOptions(settings.firstIntervalMs, settings.maxAttempts);
  options.backoffCoefficient = settings.backoffCoefficient;
  options.maxRetryIntervalInMilliseconds = settings.maxIntervalMs;
  return options;
}

/**
 * The worker's own message out of a failed task's error. The extension reports an activity failure
 * as "Activity function '<name>' failed: <message>", and the SDK appends the serialised exception
 * (stack traces, file paths) after a newline: that part is for the log, not for a reason.
 */
function activityMessage(error: unknown): { message: string; details: string | null } {
  const text = errorMessage(error);
  const newline = text.indexOf('\n');
  const first = newline < 0 ? text : text.slice(0, newline);
  const details = newline < 0 ? null : text.slice(newline + 1).trim() || null;
  return { message: oneLine(first.replace(/^Activity function '[^']*' failed:\s*/, '')), details };
}

/** The outcome of a scheduled operation; retries that ran out become a failed outcome, not a throw. */
function* settle(task: Task): Generator<Task, Settled, unknown> {
  try {
    const outcome = (yield task) as { ok: true } | { ok: false; message: string };
    return outcome.ok
      ? { ok: true }
      : { ok: false, retriesRanOut: false, message: outcome.message, details: null };
  } catch (error) {
    return { ok: false, retriesRanOut: true, ...activityMessage(error) };
  }
}

class SagaFlow {
  private readonly retry: df.RetryOptions;
  /** Needs-attention episodes and alerts of this instance, counted so each has a stable key. */
  private episodes = 0;
  private alerts = 0;

  constructor(
    private readonly context: OrchestrationContext,
    private readonly policy: SagaPolicy,
    private readonly order: FulfillmentInput,
  ) {
    this.retry = retryOptions(policy.retry);
  }

  operation(name: OperationName, input: OperationInput): Task {
    return this.context.df.callActivityWithRetry(name, this.retry, input);
  }

  /** A failure's one-line reason; its details (the serialised exception) go to the log. */
  reasonOf(name: OperationName, failure: Extract<Settled, { ok: false }>): string {
    if (failure.details !== null && !this.context.df.isReplaying) {
      this.context.warn(`${this.context.df.instanceId}: ${name} failed: ${failure.details}`);
    }
    return failureReason(name, { ...failure, attempts: this.policy.retry.maxAttempts });
  }

  /**
   * Records a status change. The record is the saga's truth, so a change is never dropped: when the
   * write's retries run out, a person is alerted and it is tried again after a pause, until it lands.
   */
  *record(
    status: SagaStatus,
    reason: string | null,
    extra: Pick<StatusChange, 'cancellationFee' | 'pointOfNoReturn' | 'episode' | 'begin'> = {},
  ): Generator<Task, RecordedStatus, unknown> {
    const change: StatusChange = {
      order: this.order,
      instanceId: this.context.df.instanceId,
      status,
      reason,
      ...extra,
    };
    for (let round = 1; ; round++) {
      try {
        return (yield this.context.df.callActivityWithRetry(
          RECORD_SAGA_STATUS,
          this.retry,
          change,
        )) as RecordedStatus;
      } catch (error) {
        const attempts = round * this.policy.retry.maxAttempts;
        const { message } = activityMessage(error);
        yield* this.alert(
          [],
          `the saga status ${status} could not be recorded after ${attempts} attempts (${message}); trying again`,
        );
        yield* this.pause(this.policy.retry.maxIntervalMs);
      }
    }
  }

  *pause(ms: number): Generator<Task, void, unknown> {
    yield this.context.df.createTimer(new Date(this.context.df.currentUtcDateTime.getTime() + ms));
  }

  /** Tells a person. An alert that cannot be raised does not stop the saga: the record says what waits. */
  *alert(failed: OperationName[], message: string): Generator<Task, void, unknown> {
    this.alerts += 1;
    const alert: AlertInput = {
      order: this.order,
      instanceId: this.context.df.instanceId,
      key: `${this.context.df.instanceId}#${this.alerts}`,
      failed,
      message: oneLine(message),
    };
    yield* settle(this.context.df.callActivityWithRetry(RAISE_SAGA_ALERT, this.retry, alert));
  }

  /**
   * One needs-attention episode: recorded, alerted, and waited for (alerting again at each review
   * timeout) until a person decides. A decision meant for another episode is not this one's.
   */
  *awaitReview(failed: OperationName[], problem: string): Generator<Task, ReviewDecision, unknown> {
    this.episodes += 1;
    const episode = `${this.context.df.instanceId}#${this.episodes}`;
    yield* this.record('needs-attention', problem, { episode });
    yield* this.alert(failed, problem);
    for (;;) {
      const review = this.context.df.waitForExternalEvent(REVIEW_EVENT);
      for (;;) {
        const deadline = new Date(
          this.context.df.currentUtcDateTime.getTime() + this.policy.reviewTimeoutMinutes * 60_000,
        );
        const timer: TimerTask = this.context.df.createTimer(deadline);
        const first = yield this.context.df.Task.any([review, timer]);
        if (first === review) {
          timer.cancel();
          break;
        }
        yield* this.alert(
          failed,
          `still waiting for a review after ${this.policy.reviewTimeoutMinutes} min: ${problem}`,
        );
      }
      const decision = review.result as ReviewDecision;
      if (decision.episode === undefined || decision.episode === episode) return decision;
    }
  }

  /**
   * One pass over the stages. `Task.all` fails fast, so every task is settled on its own after it.
   * Returns the compensations that failed, each with its one-line reason (retries ran out, and why).
   */
  *compensate(
    stages: CompensationName[][],
    input: OperationInput,
  ): Generator<Task, Array<{ name: CompensationName; reason: string }>, unknown> {
    const failed: Array<{ name: CompensationName; reason: string }> = [];
    for (const stage of stages) {
      const tasks = stage.map((name) => this.operation(name, input));
      try {
        yield this.context.df.Task.all(tasks);
      } catch {
        // Seen below, task by task: the others still ran and must be accounted for.
      }
      for (const [index, task] of tasks.entries()) {
        const outcome = yield* settle(task);
        if (!outcome.ok) failed.push({ name: stage[index], reason: this.reasonOf(stage[index], outcome) });
      }
    }
    return failed;
  }

  /**
   * Compensates until every compensation succeeded or a person resolved it. Returns the person's
   * resolution when they closed it by hand.
   */
  *compensateUntilDone(
    stages: CompensationName[][],
    input: OperationInput,
    reason: string,
  ): Generator<Task, string | null, unknown> {
    let pending = stages;
    for (;;) {
      const failures = yield* this.compensate(pending, input);
      if (failures.length === 0) return null;
      const failed = failures.map((failure) => failure.name);
      pending = stages
        .map((stage) => stage.filter((name) => failed.includes(name)))
        .filter((stage) => stage.length > 0);
      // As a step's failure reads: which compensation, whether its retries ran out, and why.
      const problem = oneLine(
        `${reason}; ${failures.map((failure) => `compensation ${failure.reason}`).join('; ')}`,
      );
      const decision = yield* this.awaitReview(failed, problem);
      if (decision.action === 'resolved') return resolvedBy(decision);
      yield* this.record('compensating', oneLine(`${reason}; retry asked by a person`));
    }
  }

  /** The point of no return is behind: undo what was recorded, keeping the cancellation fee. */
  *cancelAfterConfirmation(completed: readonly StepName[]): Saga {
    const { fee, refund } = refundAfterCancellationFee(this.order.total, this.policy.cancellationFeePercent);
    const reason = `cancelled after confirmation: fee ${fee} kept, ${refund} refunded`;
    yield* this.record('compensating', reason, { cancellationFee: fee });
    const resolution = yield* this.compensateUntilDone(
      compensationsFor(completed),
      { order: this.order, refundAmount: refund },
      reason,
    );
    const finalReason = resolution === null ? reason : oneLine(`${reason}; ${resolution}`);
    yield* this.record('cancelled', finalReason);
    return { status: 'cancelled', reason: finalReason };
  }

  /**
   * A step past the point of no return: never undone. It keeps retrying (rounds of the retry
   * policy, a pause between), then waits for a person, who retries it or resolves it by hand.
   * Returns the person's resolution, or null when the step completed.
   */
  *recoverForward(step: StepName, input: OperationInput): Generator<Task, string | null, unknown> {
    for (;;) {
      let failure: Extract<Settled, { ok: false }> | undefined;
      for (let round = 1; round <= FORWARD_RECOVERY_ROUNDS; round++) {
        const outcome = yield* settle(this.operation(step, input));
        if (outcome.ok) return null;
        failure = outcome;
        if (!outcome.retriesRanOut) break;
        if (round < FORWARD_RECOVERY_ROUNDS) yield* this.pause(this.policy.retry.maxIntervalMs);
      }
      if (failure === undefined) return null;
      const attempts = failure.retriesRanOut ? FORWARD_RECOVERY_ROUNDS * this.policy.retry.maxAttempts : 1;
      const problem = oneLine(
        `${failureReason(step, { ...failure, attempts })}; past the point of no return it is not undone: retry it, or resolve it once done by hand`,
      );
      if (failure.details !== null) this.reasonOf(step, failure);
      const decision = yield* this.awaitReview([step], problem);
      if (decision.action === 'resolved') return resolvedBy(decision, step);
      yield* this.record('running', `${step}: retry asked by a person`);
    }
  }

  /**
   * The order is fulfilled: what its steps hold is settled (the stock's holds leave the stock
   * documents). A settlement that keeps failing is alerted, and the order is fulfilled all the same.
   */
  *settleFulfilled(completed: readonly StepName[], input: OperationInput): Generator<Task, void, unknown> {
    for (const name of settlementsFor(completed)) {
      const outcome = yield* settle(this.operation(name, input));
      if (!outcome.ok) yield* this.alert([name], this.reasonOf(name, outcome));
    }
  }

  *fulfill(): Saga {
    const input: OperationInput = { order: this.order };
    const { ended } = yield* this.record('running', null, { begin: true });
    if (ended !== undefined) return ended;
    const cancel = this.context.df.waitForExternalEvent(CANCEL_EVENT);
    const completed: StepName[] = [];
    /** Steps whose effect is unknown (retries ran out): compensated too, which is safe when nothing happened. */
    const uncertain: StepName[] = [];
    let failure: string | null = null;

    for (const step of STEPS) {
      if (cancel.isCompleted) break;
      if (isPointOfNoReturn(step)) {
        // Reaching the point is recorded on the record's etag, as a cancel is: a cancel recorded
        // before it still undoes the saga; one recorded after it keeps the fee. Never both.
        const { cancelRequested } = yield* this.record('running', null, { pointOfNoReturn: true });
        if (cancelRequested) break;
        const resolution = yield* this.recoverForward(step, input);
        completed.push(step);
        yield* this.settleFulfilled(completed, input);
        const { cancelRequested: cancelledLate } = yield* this.record('completed', resolution);
        if (cancelledLate || cancel.isCompleted) return yield* this.cancelAfterConfirmation(completed);
        return { status: 'completed', reason: resolution };
      }
      const task = this.operation(step, input);
      // A step that never ends should not make a cancel wait; the step still settles before deciding.
      const first = yield this.context.df.Task.any([task, cancel]);
      const outcome = yield* settle(task);
      if (!outcome.ok) {
        failure = this.reasonOf(step, outcome);
        if (outcome.retriesRanOut) uncertain.push(step);
        break;
      }
      completed.push(step);
      if (first === cancel) break;
    }

    const cancelled = failure === null;
    const reason = failure ?? 'cancelled by the client before confirmation';
    yield* this.record('compensating', reason);
    const resolution = yield* this.compensateUntilDone(
      compensationsFor([...completed, ...uncertain]),
      input,
      reason,
    );
    const status: SagaStatus = cancelled ? 'cancelled' : 'compensated';
    const finalReason = resolution === null ? reason : oneLine(`${reason}; ${resolution}`);
    yield* this.record(status, finalReason);
    return { status, reason: finalReason };
  }
}

function resolvedBy(decision: ReviewDecision, step?: StepName): string {
  const what = step === undefined ? 'resolved by a person' : `${step} resolved by a person`;
  return oneLine(decision.note ? `${what}: ${decision.note}` : what);
}

export function fulfillOrderOrchestrator(policy: SagaPolicy): OrchestrationHandler {
  return function* (context: OrchestrationContext): Saga {
    return yield* new SagaFlow(context, policy, context.df.getInput() as FulfillmentInput).fulfill();
  };
}

export function cancelConfirmedOrderOrchestrator(policy: SagaPolicy): OrchestrationHandler {
  return function* (context: OrchestrationContext): Saga {
    const { order, completed } = context.df.getInput() as CancelConfirmedInput;
    return yield* new SagaFlow(context, policy, order).cancelAfterConfirmation(completed);
  };
}

/** Every orchestration and activity of the saga, each defined once for Azure and the embedded driver. */
export function sagaDefinitions(
  deps: SagaDeps,
  policy: SagaPolicy,
): { orchestrations: OrchestrationDefinition[]; activities: ActivityDefinition[] } {
  return {
    orchestrations: [
      { name: FULFILL_ORDER, handler: fulfillOrderOrchestrator(policy) },
      { name: CANCEL_CONFIRMED_ORDER, handler: cancelConfirmedOrderOrchestrator(policy) },
    ],
    activities: [
      ...OPERATIONS.map((name) => ({
        name,
        handler: (input: unknown) => runOperation(deps, name, input as OperationInput),
      })),
      {
        name: RECORD_SAGA_STATUS,
        handler: (input: unknown) => recordSagaStatus(deps, input as StatusChange),
      },
      { name: RAISE_SAGA_ALERT, handler: (input: unknown) => raiseSagaAlert(deps, input as AlertInput) },
    ],
  };
}
