/**
 * Forward recovery: a step past the point of no return is never undone (the customer may have been
 * told). It keeps retrying, then a person retries it or resolves it once done by hand.
 */
import { failureReason, oneLine, type StepName } from '../../domain/saga';
import { logDetails, outcomeOf, type TaskFailure } from './outcome';
import { awaitReview, resolvedBy } from './review';
import { callOperation, pause, type Flow, type SagaRun } from './run';
import { recordStatus } from './status';

/** Rounds of the retry policy a step past the point of no return gets before a person is asked. */
export const FORWARD_RECOVERY_ROUNDS = 3;

/**
 * Runs `step` until it completes: rounds of the retry policy, a pause between, then a person.
 * Returns the person's resolution, or null when the step completed.
 */
export function* recoverForward(run: SagaRun, step: StepName): Flow<string | null> {
  for (;;) {
    let failure: TaskFailure | undefined;
    for (let round = 1; round <= FORWARD_RECOVERY_ROUNDS; round++) {
      const outcome = yield* outcomeOf(callOperation(run, step));
      if (outcome.ok) return null;
      failure = outcome;
      if (!outcome.retriesRanOut) break;
      if (round < FORWARD_RECOVERY_ROUNDS) yield* pause(run, run.policy.retry.maxIntervalMs);
    }
    if (failure === undefined) return null;
    const attempts = failure.retriesRanOut ? FORWARD_RECOVERY_ROUNDS * run.policy.retry.maxAttempts : 1;
    const problem = oneLine(
      `${failureReason(step, { ...failure, attempts })}; past the point of no return it is not undone: retry it, or resolve it once done by hand`,
    );
    logDetails(run, step, failure);
    const decision = yield* awaitReview(run, [step], problem);
    if (decision.action === 'resolved') return resolvedBy(decision, step);
    yield* recordStatus(run, 'running', `${step}: retry asked by a person`);
  }
}
