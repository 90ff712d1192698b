/**
 * Needs-attention episodes: the saga asks a person, who retries what keeps failing or resolves it
 * by hand. Each episode takes one decision (`<instanceId>#<n>`).
 */
import type { TimerTask } from 'durable-functions';
import { oneLine, type OperationName, type StepName } from '../../domain/saga';
import type { ReviewDecision } from '../../services/fulfillment/saga-record';
import { REVIEW_EVENT } from '../../services/fulfillment/starter';
import type { Flow, SagaRun } from './run';
import { raiseAlert, recordStatus } from './status';

/**
 * One needs-attention episode: recorded, alerted, and waited for (alerting again at each review
 * timeout) until a person decides. A decision meant for another episode is not this one's.
 */
export function* awaitReview(run: SagaRun, failed: OperationName[], problem: string): Flow<ReviewDecision> {
  const { df } = run.context;
  run.counts.episodes += 1;
  const episode = `${df.instanceId}#${run.counts.episodes}`;
  yield* recordStatus(run, 'needs-attention', problem, { episode });
  yield* raiseAlert(run, failed, problem);
  for (;;) {
    const review = df.waitForExternalEvent(REVIEW_EVENT);
    for (;;) {
      const deadline = new Date(df.currentUtcDateTime.getTime() + run.policy.reviewTimeoutMinutes * 60_000);
      const timer: TimerTask = df.createTimer(deadline);
      const first = yield df.Task.any([review, timer]);
      if (first === review) {
        timer.cancel();
        break;
      }
      yield* raiseAlert(
        run,
        failed,
        `still waiting for a review after ${run.policy.reviewTimeoutMinutes} min: ${problem}`,
      );
    }
    const decision = review.result as ReviewDecision;
    if (decision.episode === undefined || decision.episode === episode) return decision;
  }
}

/** The reason a person's resolution adds: who resolved what, with their note. */
export function resolvedBy(decision: ReviewDecision, step?: StepName): string {
  const what = step === undefined ? 'resolved by a person' : `${step} resolved by a person`;
  return oneLine(decision.note ? `${what}: ${decision.note}` : what);
}
