/** The fulfillment saga as data (CONTRACTS 2): its steps, their compensations, and its policies. */
import { PermanentError } from './errors';

export const STEPS = ['reserveInventory', 'chargePayment', 'createShipment', 'confirmOrder'] as const;
export type StepName = (typeof STEPS)[number];

export const COMPENSATIONS = ['releaseInventory', 'refundPayment', 'cancelShipment'] as const;
export type CompensationName = (typeof COMPENSATIONS)[number];

export interface StepDefinition {
  name: StepName;
  /** The activity that undoes this step, or null for the point of no return. */
  compensation: CompensationName | null;
  /** The point of no return: once this step ran, cancelling keeps a fee instead of undoing it. */
  pointOfNoReturn: boolean;
}

export const SAGA_STEPS: readonly StepDefinition[] = [
  { name: 'reserveInventory', compensation: 'releaseInventory', pointOfNoReturn: false },
  { name: 'chargePayment', compensation: 'refundPayment', pointOfNoReturn: false },
  { name: 'createShipment', compensation: 'cancelShipment', pointOfNoReturn: false },
  { name: 'confirmOrder', compensation: null, pointOfNoReturn: true },
];

export type SagaStatus =
  'running' | 'completed' | 'compensating' | 'compensated' | 'needs-attention' | 'cancelled';

/** Business failures of the steps. Each is permanent: trying again changes nothing. */
export type StepFailureCode = 'unknown-sku' | 'out-of-stock' | 'over-credit-limit' | 'carriers-refused';

export class StepFailedError extends PermanentError {
  constructor(
    readonly step: StepName,
    code: StepFailureCode,
    message: string,
  ) {
    super(code, message);
  }
}

/**
 * The compensations to run for the steps that completed, as stages run one after the other, last
 * step first. The compensations of steps that did not depend on each other run together in a stage:
 * the shipment is cancelled first, then the refund and the stock release go in parallel.
 */
export function compensationsFor(completed: readonly StepName[]): CompensationName[][] {
  const done = new Set(completed);
  const stages: CompensationName[][] = [];
  if (done.has('createShipment')) stages.push(['cancelShipment']);
  const parallel: CompensationName[] = [];
  if (done.has('chargePayment')) parallel.push('refundPayment');
  if (done.has('reserveInventory')) parallel.push('releaseInventory');
  if (parallel.length > 0) stages.push(parallel);
  return stages;
}

/** Whether a cancel still undoes the saga, or arrives after the point of no return. */
export function isPastPointOfNoReturn(completed: readonly StepName[]): boolean {
  return SAGA_STEPS.some((step) => step.pointOfNoReturn && completed.includes(step.name));
}

/** The refund when a confirmed order is cancelled: the total less the fee, in whole minor units. */
export function refundAfterCancellationFee(
  total: number,
  feePercent: number,
): { refund: number; fee: number } {
  const fee = Math.round((total * feePercent) / 100);
  return { refund: total - fee, fee };
}

/** Idempotency key passed to every downstream operation: one effect per order and step. */
export function operationKey(orderId: string, step: StepName | CompensationName): string {
  return `${orderId}:${step}`;
}

export function fulfillmentInstanceId(orderId: string): string {
  return `fulfill-${orderId}`;
}
