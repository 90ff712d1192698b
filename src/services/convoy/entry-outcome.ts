/** What a change to the order came to for its entry: the outcome, and the metrics that count it. */
import type { ChangeDecision } from '../../domain/order';
import type { TransactionOutcome } from '../idempotent-consumer';
import type { Telemetry, TelemetryProperties } from '../ports';

export function changeOutcome(
  telemetry: Telemetry,
  decision: ChangeDecision,
  properties: TelemetryProperties,
): TransactionOutcome {
  if (decision.applied.length > 0) telemetry.metric('entries.applied', decision.applied.length, properties);
  if (decision.outcome === 'buffered') {
    telemetry.metric('entries.buffered', 1, {
      ...properties,
      waitingFor: decision.state.appliedSequence + 1,
    });
  }
  return {
    kind: decision.outcome,
    orderId: decision.state.orderId,
    applied: decision.applied.length,
    rejected: decision.rejected.length,
    submitted: decision.submitted,
  };
}
