/**
 * The saga record's status, written from the orchestration, and the alerts that tell a person.
 * The record is the saga's truth, so a status change is never dropped; an alert that cannot be
 * raised does not stop the saga, since the record says what waits.
 */
import { oneLine, type OperationName, type SagaStatus } from '../../domain/saga';
import type { AlertInput, RecordedStatus, StatusChange } from '../../services/fulfillment/saga-activities';
import { RAISE_SAGA_ALERT, RECORD_SAGA_STATUS } from './activities';
import { activityMessage, outcomeOf } from './outcome';
import { pause, type Flow, type SagaRun } from './run';

export interface SagaOutcome {
  status: SagaStatus;
  reason: string | null;
}

/**
 * Records a status change. When the write's retries run out, a person is alerted and it is tried
 * again after a pause, until it lands.
 */
export function* recordStatus(
  run: SagaRun,
  status: SagaStatus,
  reason: string | null,
  extra: Pick<StatusChange, 'cancellationFee' | 'pointOfNoReturn' | 'episode' | 'begin'> = {},
): Flow<RecordedStatus> {
  const change: StatusChange = {
    order: run.order,
    instanceId: run.context.df.instanceId,
    status,
    reason,
    ...extra,
  };
  for (let round = 1; ; round++) {
    try {
      return (yield run.context.df.callActivityWithRetry(
        RECORD_SAGA_STATUS,
        run.retry,
        change,
      )) as RecordedStatus;
    } catch (error) {
      const attempts = round * run.policy.retry.maxAttempts;
      const { message } = activityMessage(error);
      yield* raiseAlert(
        run,
        [],
        `the saga status ${status} could not be recorded after ${attempts} attempts (${message}); trying again`,
      );
      yield* pause(run, run.policy.retry.maxIntervalMs);
    }
  }
}

/** Records how the saga ended: its reason, and what a person did when one resolved it. */
export function* recordEnd(
  run: SagaRun,
  status: SagaStatus,
  reason: string,
  resolution: string | null,
): Flow<SagaOutcome> {
  const finalReason = resolution === null ? reason : oneLine(`${reason}; ${resolution}`);
  yield* recordStatus(run, status, finalReason);
  return { status, reason: finalReason };
}

/** Tells a person what keeps failing (`failed` is empty when it is recording the saga itself). */
export function* raiseAlert(run: SagaRun, failed: OperationName[], message: string): Flow<void> {
  run.counts.alerts += 1;
  const alert: AlertInput = {
    order: run.order,
    instanceId: run.context.df.instanceId,
    key: `${run.context.df.instanceId}#${run.counts.alerts}`,
    failed,
    message: oneLine(message),
  };
  yield* outcomeOf(run.context.df.callActivityWithRetry(RAISE_SAGA_ALERT, run.retry, alert));
}
