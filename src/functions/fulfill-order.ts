/**
 * The fulfillment saga on Durable Functions (CONTRACTS 2). The flow reads top to bottom: each step
 * that completes adds its compensation; a step refused for good, or a client's cancel, runs the
 * compensations last step first; a compensation that keeps failing waits for a person.
 * Orchestrators replay: no clock, randomness or I/O here, only `context.df`.
 */
import { errorMessage } from '../domain/errors';
import * as df from 'durable-functions';
import type { OrchestrationContext, OrchestrationHandler, Task, TimerTask } from 'durable-functions';
import {
  OPERATIONS,
  STEPS,
  compensationsFor,
  isPointOfNoReturn,
  refundAfterCancellationFee,
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
  type OperationOutcome,
  type SagaDeps,
  type StatusChange,
} from '../services/fulfillment/saga-activities';
import {
  CANCEL_CONFIRMED_ORDER,
  CANCEL_EVENT,
  FULFILL_ORDER,
  REVIEW_EVENT,
} from '../services/fulfillment/starter';
import type { ActivityDefinition, OrchestrationDefinition } from './definition';

export const RECORD_SAGA_STATUS = 'recordSagaStatus';
export const RAISE_SAGA_ALERT = 'raiseSagaAlert';

export interface SagaPolicy {
  retry: RetrySettings;
  reviewTimeoutMinutes: number;
  cancellationFeePercent: number;
}

export interface ReviewDecision {
  action: 'retry' | 'resolved';
  note?: string;
}

export interface SagaOutcome {
  status: SagaStatus;
  reason: string | null;
}

export interface CancelConfirmedInput {
  order: FulfillmentInput;
  completed: StepName[];
}

type Saga = Generator<Task, SagaOutcome, unknown>;

function retryOptions(settings: RetrySettings): df.RetryOptions {
  const options = new df.RetryOptions(settings.firstIntervalMs, settings.maxAttempts);
  options.backoffCoefficient = settings.backoffCoefficient;
  options.maxRetryIntervalInMilliseconds = settings.maxIntervalMs;
  return options;
}

/** The outcome of a scheduled activity; retries exhausted become a failed outcome, not a throw. */
function* settle(task: Task): Generator<Task, OperationOutcome, unknown> {
  try {
    return (yield task) as OperationOutcome;
  } catch (error) {
    return { ok: false, code: 'retries-exhausted', message: errorMessage(error) };
  }
}

class SagaFlow {
  private readonly retry: df.RetryOptions;

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

  /**
   * Records a status change. The record is the saga's truth, so a change is never dropped: when the
   * write's retries run out, a person is alerted and it is tried again after a pause, until it lands.
   */
  *record(
    status: SagaStatus,
    reason: string | null,
    cancellationFee?: number,
  ): Generator<Task, { cancelRequested: boolean }, unknown> {
    const change: StatusChange = {
      order: this.order,
      instanceId: this.context.df.instanceId,
      status,
      reason,
    };
    if (cancellationFee !== undefined) change.cancellationFee = cancellationFee;
    for (let round = 1; ; round++) {
      try {
        return (yield this.context.df.callActivityWithRetry(RECORD_SAGA_STATUS, this.retry, change)) as {
          cancelRequested: boolean;
        };
      } catch (error) {
        const attempts = round * this.policy.retry.maxAttempts;
        yield* this.alert(
          [],
          `the saga status ${status} could not be recorded after ${attempts} attempts (${errorMessage(error)}); trying again`,
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
    const alert: AlertInput = { order: this.order, instanceId: this.context.df.instanceId, failed, message };
    yield* settle(this.context.df.callActivityWithRetry(RAISE_SAGA_ALERT, this.retry, alert));
  }

  /** One pass over the stages. `Task.all` fails fast, so every task is settled on its own after it. */
  *compensate(
    stages: CompensationName[][],
    input: OperationInput,
  ): Generator<Task, CompensationName[], unknown> {
    const failed: CompensationName[] = [];
    for (const stage of stages) {
      const tasks = stage.map((name) => this.operation(name, input));
      try {
        yield this.context.df.Task.all(tasks);
      } catch {
        // Seen below, task by task: the others still ran and must be accounted for.
      }
      for (const [index, task] of tasks.entries()) {
        const outcome = yield* settle(task);
        if (!outcome.ok) failed.push(stage[index]);
      }
    }
    return failed;
  }

  /**
   * Compensates until every compensation succeeded or a person resolved it. Returns the person's
   * note when they closed it by hand.
   */
  *compensateUntilDone(
    stages: CompensationName[][],
    input: OperationInput,
    reason: string,
  ): Generator<Task, string | null, unknown> {
    let pending = stages;
    for (;;) {
      const failed = yield* this.compensate(pending, input);
      if (failed.length === 0) return null;
      pending = stages
        .map((stage) => stage.filter((name) => failed.includes(name)))
        .filter((stage) => stage.length > 0);
      const problem = `${reason}; compensation failed: ${failed.join(', ')}`;
      yield* this.record('needs-attention', problem);
      yield* this.alert(failed, problem);
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
      if (decision.action === 'resolved')
        return `resolved by a person${decision.note ? `: ${decision.note}` : ''}`;
      yield* this.record('compensating', `${reason}; retry asked by a person`);
    }
  }

  /** The point of no return is behind: undo what was recorded, keeping the cancellation fee. */
  *cancelAfterConfirmation(completed: readonly StepName[]): Saga {
    const { fee, refund } = refundAfterCancellationFee(this.order.total, this.policy.cancellationFeePercent);
    const reason = `cancelled after confirmation: fee ${fee} kept, ${refund} refunded`;
    yield* this.record('compensating', reason, fee);
    const resolution = yield* this.compensateUntilDone(
      compensationsFor(completed),
      { order: this.order, refundAmount: refund },
      reason,
    );
    const finalReason = resolution === null ? reason : `${reason}; ${resolution}`;
    yield* this.record('cancelled', finalReason);
    return { status: 'cancelled', reason: finalReason };
  }

  *fulfill(): Saga {
    const input: OperationInput = { order: this.order };
    yield* this.record('running', null);
    const cancel = this.context.df.waitForExternalEvent(CANCEL_EVENT);
    const completed: StepName[] = [];
    /** Steps whose effect is unknown (retries ran out): compensated too, which is safe when nothing happened. */
    const uncertain: StepName[] = [];
    let failure: string | null = null;

    for (const step of STEPS) {
      if (cancel.isCompleted) break;
      const task = this.operation(step, input);
      // A step that never ends should not make a cancel wait; the step still settles before deciding.
      const first = isPointOfNoReturn(step) ? task : yield this.context.df.Task.any([task, cancel]);
      const outcome = yield* settle(task);
      if (!outcome.ok) {
        failure = `${step} failed: ${outcome.message}`;
        if (outcome.code === 'retries-exhausted') uncertain.push(step);
        break;
      }
      completed.push(step);
      if (isPointOfNoReturn(step)) {
        const { cancelRequested } = yield* this.record('completed', null);
        // A cancel that raced with the last step finds the order confirmed: it keeps the fee.
        if (cancelRequested || cancel.isCompleted) return yield* this.cancelAfterConfirmation(completed);
        return { status: 'completed', reason: null };
      }
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
    const finalReason = resolution === null ? reason : `${reason}; ${resolution}`;
    yield* this.record(status, finalReason);
    return { status, reason: finalReason };
  }
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
