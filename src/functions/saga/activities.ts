/**
 * The saga's activities, each defined once for Azure and the embedded driver: every operation of
 * `SAGA` (steps, compensations, settlements), recording the saga's status, and raising an alert.
 */
import { OPERATIONS } from '../../domain/saga';
import {
  raiseSagaAlert,
  recordSagaStatus,
  runOperation,
  type AlertInput,
  type OperationInput,
  type SagaDeps,
  type StatusChange,
} from '../../services/fulfillment/saga-activities';
import type { FulfillmentInput } from '../../services/ports';
import type { ActivityDefinition, OrderWork } from '../definition';

export const RECORD_SAGA_STATUS = 'recordSagaStatus';
export const RAISE_SAGA_ALERT = 'raiseSagaAlert';

/** Every activity's input carries the saga's order, with the trace context the saga started in. */
function orderOf(input: unknown): OrderWork {
  const { orderId, traceparent } = (input as { order: FulfillmentInput }).order;
  return { orderId, traceparent };
}

export function sagaActivities(deps: SagaDeps): ActivityDefinition[] {
  return [
    ...OPERATIONS.map((name) => ({
      name,
      handler: (input: unknown) => runOperation(deps, name, input as OperationInput),
      orderOf,
    })),
    {
      name: RECORD_SAGA_STATUS,
      handler: (input: unknown) => recordSagaStatus(deps, input as StatusChange),
      orderOf,
    },
    {
      name: RAISE_SAGA_ALERT,
      handler: (input: unknown) => raiseSagaAlert(deps, input as AlertInput),
      orderOf,
    },
  ];
}
