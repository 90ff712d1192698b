/**
 * The fulfillment saga on Durable Functions (docs/saga.md), top to bottom. Each step runs in the
 * order of `SAGA` (domain/saga.ts), and as it completes its compensation is registered. A step
 * refused for good, or a client's cancel, runs the registered compensations in their stages; one
 * that keeps failing waits for a person. The point of no return is never undone: it recovers
 * forward, and a cancel once it was reached keeps the cancellation fee. The details (status
 * records, alerts, review episodes, forward recovery) are the helpers in ./saga/.
 * Orchestrators replay: no clock, randomness or I/O here, only `context.df`.
 */
import type { OrchestrationContext } from 'durable-functions';
import {
  STEPS,
  compensationsOf,
  inStages,
  isPointOfNoReturn,
  oneLine,
  refundAfterCancellationFee,
  settlementsFor,
  type Compensation,
  type StepName,
} from '../domain/saga';
import type { FulfillmentInput } from '../services/ports';
import type { OperationInput, SagaDeps } from '../services/fulfillment/saga-activities';
import { CANCEL_CONFIRMED_ORDER, CANCEL_EVENT, FULFILL_ORDER } from '../services/fulfillment/starter';
import type { ActivityDefinition, OrchestrationDefinition } from './definition';
import { sagaActivities } from './saga/activities';
import { recoverForward } from './saga/forward-recovery';
import { runSettlements, runStage, type CompensationFailure } from './saga/operations';
import { outcomeOf, reasonOf } from './saga/outcome';
import { awaitReview, resolvedBy } from './saga/review';
import { callOperation, sagaRun, type Flow, type SagaPolicy, type SagaRun } from './saga/run';
import { recordEnd, recordStatus, type SagaOutcome } from './saga/status';

export type { SagaPolicy, SagaOutcome };

/** The saga of one submitted order, instance `fulfillmentInstanceId(orderId)` (docs/saga.md, "Instance ids"). */
export function* fulfillOrder(context: OrchestrationContext, policy: SagaPolicy): Flow<SagaOutcome> {
  const run = sagaRun(context, policy, context.df.getInput() as FulfillmentInput);
  const { ended } = yield* recordStatus(run, 'running', null, { begin: true });
  if (ended !== undefined) return ended;
  const cancel = context.df.waitForExternalEvent(CANCEL_EVENT);
  const completed: StepName[] = []; // their settlements run once the order is fulfilled
  const compensations: Compensation[] = []; // registered as the steps complete
  let failure: string | null = null;

  for (const step of STEPS) {
    if (cancel.isCompleted) break;
    if (isPointOfNoReturn(step)) {
      // Reaching the point is recorded on the record's etag, as a cancel is: a cancel recorded
      // before it still undoes the saga; one recorded after it keeps the fee. Never both.
      const { cancelRequested } = yield* recordStatus(run, 'running', null, { pointOfNoReturn: true });
      if (cancelRequested) break;
      const resolution = yield* recoverForward(run, step);
      completed.push(step);
      yield* runSettlements(run, settlementsFor(completed));
      const { cancelRequested: cancelledLate } = yield* recordStatus(run, 'completed', resolution);
      if (cancelledLate || cancel.isCompleted) return yield* cancelAfterConfirmation(run, compensations);
      return { status: 'completed', reason: resolution };
    }
    const task = callOperation(run, step);
    // A step that never ends should not make a cancel wait; its outcome is still read before deciding.
    const first = yield context.df.Task.any([task, cancel]);
    const outcome = yield* outcomeOf(task);
    // The step's compensation is registered as it completes, and when its retries ran out: its
    // effect is unknown then, and undoing what did not happen is safe.
    if (outcome.ok || outcome.retriesRanOut) compensations.push(...compensationsOf([step]));
    if (!outcome.ok) {
      failure = reasonOf(run, step, outcome);
      break;
    }
    completed.push(step);
    if (first === cancel) break;
  }

  const reason = failure ?? 'cancelled by the client before confirmation';
  yield* recordStatus(run, 'compensating', reason);
  const resolution = yield* compensate(run, compensations, reason);
  return yield* recordEnd(run, failure === null ? 'cancelled' : 'compensated', reason, resolution);
}

/** Past the point of no return, a cancel runs the compensations and keeps the cancellation fee. */
export function* cancelAfterConfirmation(
  run: SagaRun,
  compensations: readonly Compensation[],
): Flow<SagaOutcome> {
  const { fee, refund } = refundAfterCancellationFee(run.order.total, run.policy.cancellationFeePercent);
  const reason = `cancelled after confirmation: fee ${fee} kept, ${refund} refunded`;
  yield* recordStatus(run, 'compensating', reason, { cancellationFee: fee });
  const resolution = yield* compensate(run, compensations, reason, {
    order: run.order,
    refundAmount: refund,
  });
  return yield* recordEnd(run, 'cancelled', reason, resolution);
}

/**
 * The compensation loop: the registered compensations, stage by stage, until every one succeeded
 * or a person resolved what kept failing. Returns the person's resolution, or null.
 */
function* compensate(
  run: SagaRun,
  compensations: readonly Compensation[],
  reason: string,
  input: OperationInput = { order: run.order },
): Flow<string | null> {
  let pending = inStages(compensations);
  for (;;) {
    const failures: CompensationFailure[] = [];
    for (const stage of pending) failures.push(...(yield* runStage(run, stage, input)));
    if (failures.length === 0) return null;
    const failed = failures.map((failure) => failure.name);
    pending = pending
      .map((stage) => stage.filter((name) => failed.includes(name)))
      .filter((stage) => stage.length > 0);
    // As a step's failure reads: which compensation, whether its retries ran out, and why.
    const problem = oneLine(`${reason}; ${failures.map((f) => `compensation ${f.reason}`).join('; ')}`);
    const decision = yield* awaitReview(run, failed, problem);
    if (decision.action === 'resolved') return resolvedBy(decision);
    yield* recordStatus(run, 'compensating', oneLine(`${reason}; retry asked by a person`));
  }
}

/** Every orchestration and activity of the saga, each defined once for Azure and the embedded driver. */
export function sagaDefinitions(
  deps: SagaDeps,
  policy: SagaPolicy,
): { orchestrations: OrchestrationDefinition[]; activities: ActivityDefinition[] } {
  return {
    orchestrations: [
      { name: FULFILL_ORDER, handler: (context) => fulfillOrder(context, policy) },
      {
        name: CANCEL_CONFIRMED_ORDER,
        handler: (context) => {
          const { order, completed } = context.df.getInput() as {
            order: FulfillmentInput;
            completed: StepName[];
          };
          return cancelAfterConfirmation(sagaRun(context, policy, order), compensationsOf(completed));
        },
      },
    ],
    activities: sagaActivities(deps),
  };
}
