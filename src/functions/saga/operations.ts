/**
 * Operations the saga runs besides its steps: a stage of compensations, and the settlements once the
 * order is fulfilled. Each reports what failed rather than stopping the saga.
 */
import type { CompensationName, SettlementName } from '../../domain/saga';
import type { OperationInput } from '../../services/fulfillment/saga-activities';
import { outcomeOf, reasonOf } from './outcome';
import { callOperation, type Flow, type SagaRun } from './run';
import { raiseAlert } from './status';

export interface CompensationFailure {
  name: CompensationName;
  /** One line: which compensation, whether its retries ran out, and why. */
  reason: string;
}

/**
 * Runs the compensations of one stage together. `Task.all` fails fast, so each task's outcome is
 * read on its own after it: every one ran and every failure is seen.
 */
export function* runStage(
  run: SagaRun,
  stage: readonly CompensationName[],
  input: OperationInput,
): Flow<CompensationFailure[]> {
  const tasks = stage.map((name) => callOperation(run, name, input));
  try {
    yield run.context.df.Task.all(tasks);
  } catch {
    // Read below, task by task: the others still ran and must be accounted for.
  }
  const failures: CompensationFailure[] = [];
  for (const [index, task] of tasks.entries()) {
    const outcome = yield* outcomeOf(task);
    if (!outcome.ok) failures.push({ name: stage[index], reason: reasonOf(run, stage[index], outcome) });
  }
  return failures;
}

/**
 * The order is fulfilled: what its steps hold is settled (the stock's holds leave the stock
 * documents). A settlement that keeps failing is alerted, and the order is fulfilled all the same.
 */
export function* runSettlements(run: SagaRun, settlements: readonly SettlementName[]): Flow<void> {
  for (const name of settlements) {
    const outcome = yield* outcomeOf(callOperation(run, name));
    if (!outcome.ok) yield* raiseAlert(run, [name], reasonOf(run, name, outcome));
  }
}
