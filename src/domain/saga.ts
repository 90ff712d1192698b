/**
 * The fulfillment saga as data (docs/saga.md), written once: `SAGA` below is the only place that
 * says which steps there are and in what order, what undoes each, which failures of each are
 * permanent, the order compensations run in, and where the point of no return is. Everything else
 * here, and every caller (the orchestration, the activities, the API), derives from it.
 */
import { hash } from 'node:crypto';
import { PermanentError } from './errors';

/**
 * One row per step, in the order they run.
 * - `compensation`: the activity that undoes the step, and the stage it runs in when the saga is
 *   undone. Stages run one after the other, lowest first; the compensations of one stage run
 *   together (they do not depend on each other). null: nothing undoes it.
 * - `failsForGood`: the business refusals of the step; each is permanent, trying again changes nothing.
 * - `pointOfNoReturn`: once this step has started (the customer may have been told), the saga is
 *   never undone: the step recovers forward, and a cancel keeps the cancellation fee.
 * - `settlement`: the activity that settles what the step holds once the order is fulfilled (the
 *   stock's holds leave the stock documents); a compensation after it still undoes the step.
 */
export const SAGA = [
  {
    step: 'reserveInventory',
    compensation: { name: 'releaseInventory', stage: 2 },
    failsForGood: ['unknown-sku', 'out-of-stock'],
    pointOfNoReturn: false,
    settlement: 'commitInventory',
  },
  {
    step: 'chargePayment',
    compensation: { name: 'refundPayment', stage: 2 },
    failsForGood: ['over-credit-limit'],
    pointOfNoReturn: false,
    settlement: null,
  },
  {
    step: 'createShipment',
    compensation: { name: 'cancelShipment', stage: 1 },
    failsForGood: ['carriers-refused'],
    pointOfNoReturn: false,
    settlement: null,
  },
  { step: 'confirmOrder', compensation: null, failsForGood: [], pointOfNoReturn: true, settlement: null },
] as const;

type Row = (typeof SAGA)[number];
export type StepName = Row['step'];
export type CompensationName = NonNullable<Row['compensation']>['name'];
export type SettlementName = NonNullable<Row['settlement']>;
export type OperationName = StepName | CompensationName | SettlementName;
/** Business failures of the steps. Each is permanent: trying again changes nothing. */
export type StepFailureCode = Row['failsForGood'][number];
/** The business failures of one step, as its row in `SAGA` lists them. */
export type FailureCodeOf<S extends StepName> = Extract<Row, { step: S }>['failsForGood'][number];

export const STEPS: readonly StepName[] = SAGA.map((row) => row.step);
export const COMPENSATIONS: readonly CompensationName[] = SAGA.flatMap((row) =>
  row.compensation === null ? [] : [row.compensation.name],
);
export const SETTLEMENTS: readonly SettlementName[] = SAGA.flatMap((row) =>
  row.settlement === null ? [] : [row.settlement],
);
/** Every activity that does, undoes or settles a step. */
export const OPERATIONS: readonly OperationName[] = [...STEPS, ...COMPENSATIONS, ...SETTLEMENTS];

/** What an operation is: a step (with the compensation that undoes it, if any), or a compensation (with the step it undoes). */
export type OperationKind =
  | { kind: 'step'; step: StepName; compensation: CompensationName | null; pointOfNoReturn: boolean }
  | { kind: 'compensation'; compensation: CompensationName; undoes: StepName; stage: number }
  | { kind: 'settlement'; settlement: SettlementName; settles: StepName };

const KINDS = new Map<OperationName, OperationKind>(
  SAGA.flatMap((row): Array<[OperationName, OperationKind]> => {
    const step: [OperationName, OperationKind] = [
      row.step,
      {
        kind: 'step',
        step: row.step,
        compensation: row.compensation?.name ?? null,
        pointOfNoReturn: row.pointOfNoReturn,
      },
    ];
    const entries: Array<[OperationName, OperationKind]> = [step];
    if (row.compensation !== null) {
      const { name, stage } = row.compensation;
      entries.push([name, { kind: 'compensation', compensation: name, undoes: row.step, stage }]);
    }
    if (row.settlement !== null) {
      entries.push([row.settlement, { kind: 'settlement', settlement: row.settlement, settles: row.step }]);
    }
    return entries;
  }),
);

export function operationKind(name: OperationName): OperationKind {
  const kind = KINDS.get(name);
  if (kind === undefined) throw new Error(`${String(name)} is no operation of the saga`);
  return kind;
}

export function isCompensation(name: OperationName): name is CompensationName {
  return operationKind(name).kind === 'compensation';
}

/** The compensation that undoes a step, or null when nothing does. */
export function compensationOf(step: StepName): CompensationName | null {
  const kind = operationKind(step);
  return kind.kind === 'step' ? kind.compensation : null;
}

/** Whether `step` is the point of no return: once started it is never undone, only recovered forward. */
export function isPointOfNoReturn(step: StepName): boolean {
  const kind = operationKind(step);
  return kind.kind === 'step' && kind.pointOfNoReturn;
}

export type SagaStatus =
  'running' | 'completed' | 'compensating' | 'compensated' | 'needs-attention' | 'cancelled';

/** A step refused for good, with one of the codes its row in `SAGA` lists for it. */
export class StepFailedError<S extends StepName = StepName> extends PermanentError {
  constructor(
    readonly step: S,
    code: FailureCodeOf<S>,
    message: string,
  ) {
    super(code, message);
  }
}

/** A compensation as the saga registers it when its step completes: what undoes the step, and its stage. */
export interface Compensation {
  name: CompensationName;
  stage: number;
}

/** The compensations of `steps`, in the order of `SAGA`; a step nothing undoes has none. */
export function compensationsOf(steps: readonly StepName[]): Compensation[] {
  return SAGA.flatMap((row) =>
    row.compensation !== null && steps.includes(row.step) ? [{ ...row.compensation }] : [],
  );
}

/**
 * Compensations as the stages they run in, one after the other, lowest stage first; the
 * compensations of one stage run together, in the order they were registered.
 */
export function inStages(compensations: readonly Compensation[]): CompensationName[][] {
  const byStage = new Map<number, CompensationName[]>();
  for (const { name, stage } of compensations) byStage.set(stage, [...(byStage.get(stage) ?? []), name]);
  return [...byStage.entries()].sort(([a], [b]) => a - b).map(([, names]) => names);
}

/** The settlements to run once the order is fulfilled, for the steps that completed. */
export function settlementsFor(completed: readonly StepName[]): SettlementName[] {
  return SAGA.flatMap((row) =>
    row.settlement !== null && completed.includes(row.step) ? [row.settlement] : [],
  );
}

/** Whether a cancel still undoes the saga, or arrives once the point of no return was reached. */
export function isPastPointOfNoReturn(reached: readonly StepName[]): boolean {
  return reached.some((step) => isPointOfNoReturn(step));
}

/** The refund when a confirmed order is cancelled: the total less the fee, in whole minor units. */
export function refundAfterCancellationFee(
  total: number,
  feePercent: number,
): { refund: number; fee: number } {
  const fee = Math.round((total * feePercent) / 100);
  return { refund: total - fee, fee };
}

/** The longest a saga reason or a step's error may be: one line a person reads in a table. */
export const MAX_SAGA_REASON_LENGTH = 300;

/**
 * Text as one line of at most `max` characters: runs of whitespace (newlines included) become one
 * space, and what is cut is marked with an ellipsis. Details belong in the log, not in a reason.
 */
export function oneLine(text: string, max: number = MAX_SAGA_REASON_LENGTH): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

/** How a step's failure reads in the saga's reason: permanent, or its retries ran out (docs/cli.md). */
export function failureReason(
  step: OperationName,
  failure: { retriesRanOut: boolean; attempts: number; message: string },
): string {
  const how = failure.retriesRanOut ? `failed after ${failure.attempts} attempts` : 'failed';
  return oneLine(`${step} ${how}: ${failure.message}`);
}

/**
 * The order ids a saga's instance id holds as they are: RFC 3986's unreserved characters (letters,
 * digits, `-`, `.`, `_`, `~`), not starting with `HASHED_ORDER_ID`. Nothing on the way to the Durable
 * extension changes them. The durable client puts an instance id into a URL as it stands
 * (`instances/<id>`): the URL parser strips trailing spaces and controls, removes TAB, LF and CR
 * anywhere and turns a lone surrogate into U+FFFD; the extension decodes `%XX` in what arrives, twice
 * (Kestrel, then `WebUtility.UrlDecode`, which reads `+` as a space), and refuses control characters.
 */
const PLAIN_ORDER_ID = /^[A-Za-z0-9._~-]+$/;

/** What a saga's instance id holds in place of an order id that is not plain: `sha256-` and 64 hex digits. */
export const HASHED_ORDER_ID = 'sha256-';

/**
 * The order id as the saga's instance ids hold it: itself when plain (`PLAIN_ORDER_ID`), else
 * `sha256-` and the SHA-256 of its UTF-16 code units (little-endian), in hex. The code units are
 * hashed, not UTF-8, so that lone surrogates, which UTF-8 would turn into U+FFFD, stay apart: two
 * order ids never share an instance, and none can name another order's. An order id is at most 100
 * characters, so an instance id stays within Durable Functions' 256 (docs/saga.md, "Instance ids").
 * Running instances are named so: the scheme never changes.
 */
export function orderIdInInstanceId(orderId: string): string {
  if (PLAIN_ORDER_ID.test(orderId) && !orderId.startsWith(HASHED_ORDER_ID)) return orderId;
  return `${HASHED_ORDER_ID}${hash('sha256', Buffer.from(orderId, 'utf16le'), 'hex')}`;
}

/** `fulfill-<orderId>` for a plain order id, else `fulfill-sha256-<hex>` (`orderIdInInstanceId`). */
export function fulfillmentInstanceId(orderId: string): string {
  return `fulfill-${orderIdInInstanceId(orderId)}`;
}
