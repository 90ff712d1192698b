/**
 * How a scheduled operation ended, as the orchestration sees it: an activity returns a business
 * refusal as a result and throws only what may clear, so retries that ran out arrive as a throw.
 */
import type { Task } from 'durable-functions';
import { errorMessage } from '../../domain/errors';
import { failureReason, oneLine, type OperationName } from '../../domain/saga';
import type { Flow, SagaRun } from './run';

export type TaskFailure = { ok: false; retriesRanOut: boolean; message: string; details: string | null };
export type TaskOutcome = { ok: true } | TaskFailure;

/** The outcome of a scheduled operation; retries that ran out become a failed outcome, not a throw. */
export function* outcomeOf(task: Task): Flow<TaskOutcome> {
  try {
    const outcome = (yield task) as { ok: true } | { ok: false; message: string };
    return outcome.ok
      ? { ok: true }
      : { ok: false, retriesRanOut: false, message: outcome.message, details: null };
  } catch (error) {
    return { ok: false, retriesRanOut: true, ...activityMessage(error) };
  }
}

/**
 * The worker's own message out of a failed task's error. The extension reports an activity failure
 * as "Activity function '<name>' failed: <message>", and the SDK appends the serialised exception
 * (stack traces, file paths) after a newline: that part is for the log, not for a reason.
 */
export function activityMessage(error: unknown): { message: string; details: string | null } {
  const text = errorMessage(error);
  const newline = text.indexOf('\n');
  const first = newline < 0 ? text : text.slice(0, newline);
  const details = newline < 0 ? null : text.slice(newline + 1).trim() || null;
  return { message: oneLine(first.replace(/^Activity function '[^']*' failed:\s*/, '')), details };
}

/** A failure's one-line reason; its details (the serialised exception) go to the log. */
export function reasonOf(run: SagaRun, name: OperationName, failure: TaskFailure): string {
  logDetails(run, name, failure);
  return failureReason(name, { ...failure, attempts: run.policy.retry.maxAttempts });
}

export function logDetails(run: SagaRun, name: OperationName, failure: TaskFailure): void {
  if (failure.details !== null && !run.context.df.isReplaying) {
    run.context.warn(`${run.context.df.instanceId}: ${name} failed: ${failure.details}`);
  }
}
