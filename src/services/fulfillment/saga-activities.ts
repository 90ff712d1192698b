/**
 * The saga's activities as use cases. Each step and compensation runs through `runOperation`, which
 * records it in the saga record before and after, skips it when the record says it completed, and
 * turns business refusals into a returned failure: only transient errors are thrown, so the
 * orchestration's retry policy never retries what cannot succeed.
 */
import { AppError, failureKindOf, errorMessage } from '../../domain/errors';
import {
  StepFailedError,
  oneLine,
  compensationOf,
  fulfillmentInstanceId,
  operationKind,
  type OperationName,
  type SagaStatus,
} from '../../domain/saga';
import type { Downstream } from './downstream-ports';
import type { Change } from '../optimistic-update';
import type { DocumentContainer, FulfillmentInput, Telemetry } from '../ports';
import { readOrderLines, SAGA_SLOT } from '../order-documents';
import { MAX_TRANSITIONS, sagaRecordId, updateSagaRecord, type SagaRecord } from './saga-record';

export interface SagaDeps {
  orders: DocumentContainer;
  downstream: Downstream;
  telemetry: Telemetry;
  now: () => number;
}

export type OperationOutcome = { ok: true; result: unknown } | { ok: false; code: string; message: string };

export interface OperationInput {
  order: FulfillmentInput;
  /** For refundPayment after the point of no return: the total less the cancellation fee. */
  refundAmount?: number;
}

function initialRecord(order: FulfillmentInput, now: string): SagaRecord {
  return {
    id: sagaRecordId(order.orderId),
    orderId: order.orderId,
    kind: 'saga',
    slot: SAGA_SLOT,
    instanceId: fulfillmentInstanceId(order.orderId),
    status: 'running',
    reason: null,
    total: order.total,
    steps: {},
    transitions: [{ at: now, status: 'running', reason: null }],
    alerts: 0,
    cancel: null,
  };
}

/** Changes the order's saga record, creating it on first use. */
function changeRecord<R>(
  deps: SagaDeps,
  order: FulfillmentInput,
  change: (record: SagaRecord) => Change<SagaRecord, R>,
): Promise<R> {
  return updateSagaRecord(
    deps.orders,
    order.orderId,
    () => initialRecord(order, new Date(deps.now()).toISOString()),
    change,
  );
}

async function perform(deps: SagaDeps, name: OperationName, input: OperationInput): Promise<unknown> {
  const { order } = input;
  const { inventory, payments, shipping, confirmations } = deps.downstream;
  // The order's lines, from its transaction records: one query in its partition, for the steps that
  // need them. A submitted order's lines never change (every later entry is rejected).
  const lines = () => readOrderLines(deps.orders, order.orderId);
  switch (name) {
    case 'reserveInventory':
      return inventory.reserve(order.orderId, await lines());
    case 'releaseInventory':
      return inventory.release(order.orderId, await lines());
    case 'commitInventory':
      return inventory.commit(order.orderId, await lines());
    case 'chargePayment':
      return payments.charge(order.orderId, order.customerId, order.total, order.currency);
    case 'refundPayment':
      return payments.refund(order.orderId, input.refundAmount ?? order.total);
    case 'createShipment': {
      const shipped = await lines();
      try {
        return await shipping.book(order.orderId, 'primary', shipped);
      } catch (error) {
        // Forward recovery: a permanent refusal of the primary carrier is not the end of the step.
        if (!(error instanceof StepFailedError)) throw error;
        try {
          return await shipping.book(order.orderId, 'alternate', shipped);
        } catch (alternate) {
          if (!(alternate instanceof StepFailedError)) throw alternate;
          throw new StepFailedError(
            'createShipment',
            'carriers-refused',
            `${error.message}; ${alternate.message}`,
          );
        }
      }
    }
    case 'cancelShipment':
      return shipping.cancel(order.orderId);
    case 'confirmOrder':
      return confirmations.send(order.orderId, order.customerId, order.total, order.currency);
  }
}

export async function runOperation(
  deps: SagaDeps,
  name: OperationName,
  input: OperationInput,
): Promise<OperationOutcome> {
  const at = () => new Date(deps.now()).toISOString();
  const kind = operationKind(name);
  // A compensation or a settlement is tried again whenever asked; a step refused for good stays refused.
  const isCompensation = kind.kind !== 'step';
  const previous = await changeRecord<OperationOutcome | undefined>(deps, input.order, (record) => {
    const entry = record.steps[name];
    if (entry?.status === 'completed') return { next: undefined, result: { ok: true, result: entry.result } };
    // A step refused for good stays refused; a compensation is tried again whenever asked.
    if (entry?.status === 'failed' && !isCompensation) {
      return {
        next: undefined,
        result: { ok: false, code: entry.code ?? 'failed', message: entry.error ?? 'failed' },
      };
    }
    const next: SagaRecord = {
      ...record,
      steps: {
        ...record.steps,
        [name]: {
          status: 'running',
          attempts: (entry?.attempts ?? 0) + 1,
          result: null,
          error: null,
          code: null,
          compensation: kind.kind === 'step' ? compensationOf(kind.step) : null,
          startedAt: at(),
          endedAt: null,
        },
      },
    };
    return { next, result: undefined };
  });
  if (previous !== undefined) return previous;

  let outcome: OperationOutcome;
  let thrown: unknown;
  try {
    outcome = { ok: true, result: await perform(deps, name, input) };
  } catch (error) {
    if (failureKindOf(error) === 'transient') thrown = error;
    const message = oneLine(errorMessage(error));
    const code = error instanceof AppError ? error.code : 'error';
    if (error instanceof Error && message !== error.message) {
      deps.telemetry.trace(
        'warning',
        `saga of order ${input.order.orderId}: ${name} failed: ${error.message}`,
        {
          orderId: input.order.orderId,
          correlationId: input.order.correlationId,
        },
      );
    }
    outcome = { ok: false, code, message };
  }
  await changeRecord(deps, input.order, (record) => {
    const entry = record.steps[name];
    if (entry === undefined) return { next: undefined, result: undefined };
    const status = outcome.ok ? 'completed' : thrown !== undefined ? 'retrying' : 'failed';
    const next: SagaRecord = {
      ...record,
      steps: {
        ...record.steps,
        [name]: {
          ...entry,
          status,
          result: outcome.ok ? outcome.result : null,
          error: outcome.ok ? null : outcome.message,
          code: outcome.ok ? null : outcome.code,
          endedAt: at(),
        },
      },
    };
    return { next, result: undefined };
  });
  deps.telemetry.metric(
    `saga.operation.${outcome.ok ? 'completed' : thrown !== undefined ? 'retrying' : 'failed'}`,
    1,
    { operation: name },
  );
  if (thrown !== undefined) throw thrown;
  return outcome;
}

export interface StatusChange {
  order: FulfillmentInput;
  instanceId: string;
  status: SagaStatus;
  reason: string | null;
  /** Set when the saga finds a cancel past the point of no return: the fee it keeps. */
  cancellationFee?: number;
  /** The saga is about to run its point of no return: recorded unless a cancel came first. */
  pointOfNoReturn?: boolean;
  /** With `needs-attention`: the episode that starts, which takes one decision. */
  episode?: string;
  /**
   * The orchestration is starting: a record that already ended, or that another orchestration is
   * in charge of, is left alone and answered with its outcome, so a saga started again (a late
   * redelivery after its instance was purged, or the extension starting over a finished instance)
   * decides nothing twice.
   */
  begin?: boolean;
}

/** What recording a status change found. */
export interface RecordedStatus {
  cancelRequested: boolean;
  /** With `begin`: the outcome of a saga that had already ended, or is another instance's. */
  ended?: { status: SagaStatus; reason: string | null };
}

const ENDED: ReadonlySet<SagaStatus> = new Set<SagaStatus>(['completed', 'compensated', 'cancelled']);

/** Keeps the first status change and the latest ones, counting those dropped between. */
function appendTransition(
  record: SagaRecord,
  transition: SagaRecord['transitions'][number],
): Pick<SagaRecord, 'transitions' | 'transitionsDropped'> {
  const all = [...record.transitions, transition];
  if (all.length <= MAX_TRANSITIONS)
    return { transitions: all, transitionsDropped: record.transitionsDropped ?? 0 };
  const dropped = all.length - MAX_TRANSITIONS;
  return {
    transitions: [all[0], ...all.slice(1 + dropped)],
    transitionsDropped: (record.transitionsDropped ?? 0) + dropped,
  };
}

/**
 * Records a status change. Returns whether a client asked to cancel, so that an orchestration
 * reaching or passing the point of no return learns of a cancel that raced with it.
 */
export async function recordSagaStatus(deps: SagaDeps, change: StatusChange): Promise<RecordedStatus> {
  const at = new Date(deps.now()).toISOString();
  const reason = change.reason === null ? null : oneLine(change.reason);
  const { cancelRequested, markOnly, ended } = await changeRecord<{
    cancelRequested: boolean;
    markOnly: boolean;
    ended: RecordedStatus['ended'];
  }>(deps, change.order, (current) => {
    if (change.begin === true && (ENDED.has(current.status) || current.instanceId !== change.instanceId)) {
      const outcome = { status: current.status, reason: current.reason };
      return {
        next: undefined,
        result: { cancelRequested: current.cancel !== null, markOnly: true, ended: outcome },
      };
    }
    // A cancel recorded before the point of no return wins: the point is not recorded as reached.
    if (change.pointOfNoReturn === true && current.cancel !== null)
      return { next: undefined, result: { cancelRequested: true, markOnly: true, ended: undefined } };
    const markPoint = change.pointOfNoReturn === true && (current.pointOfNoReturnAt ?? null) === null;
    const startsEpisode =
      change.status === 'needs-attention' &&
      change.episode !== undefined &&
      current.review?.episode !== change.episode;
    const sameStatus =
      current.status === change.status &&
      current.reason === reason &&
      current.instanceId === change.instanceId;
    const markOnly = change.pointOfNoReturn === true && sameStatus;
    if (sameStatus && !markPoint && !startsEpisode)
      return {
        next: undefined,
        result: { cancelRequested: current.cancel !== null, markOnly, ended: undefined },
      };
    const next: SagaRecord = {
      ...current,
      instanceId: change.instanceId,
      status: change.status,
      reason,
      ...(sameStatus ? {} : appendTransition(current, { at, status: change.status, reason })),
      ...(markPoint ? { pointOfNoReturnAt: at } : {}),
      ...(startsEpisode ? { review: { episode: change.episode as string, decision: null } } : {}),
    };
    return { next, result: { cancelRequested: next.cancel !== null, markOnly, ended: undefined } };
  });
  // Marking the point of no return records no new status: the saga was running and still is.
  if (!markOnly)
    deps.telemetry.event(`Saga.${change.status}`, {
      orderId: change.order.orderId,
      instanceId: change.instanceId,
      reason,
      correlationId: change.order.correlationId,
    });
  return ended === undefined ? { cancelRequested } : { cancelRequested, ended };
}

export interface AlertInput {
  order: FulfillmentInput;
  instanceId: string;
  /** Stable per alert of an instance: an alert raised again after its result was lost counts once. */
  key: string;
  /** The operations that keep failing; empty when what failed is recording the saga itself. */
  failed: OperationName[];
  message: string;
}

/** A compensation keeps failing: a person must look. Log-worthy event, metric, and a count on the record. */
export async function raiseSagaAlert(deps: SagaDeps, alert: AlertInput): Promise<void> {
  const counted = await changeRecord(deps, alert.order, (current) =>
    current.lastAlert === alert.key
      ? { next: undefined, result: undefined }
      : {
          next: { ...current, alerts: current.alerts + 1, lastAlert: alert.key },
          result: current.alerts + 1,
        },
  );
  if (counted === undefined) return;
  const alerts = counted;
  deps.telemetry.trace('error', `saga of order ${alert.order.orderId} needs attention: ${alert.message}`, {
    orderId: alert.order.orderId,
    instanceId: alert.instanceId,
    correlationId: alert.order.correlationId,
  });
  deps.telemetry.event('Alert.SagaNeedsAttention', {
    orderId: alert.order.orderId,
    instanceId: alert.instanceId,
    failed: alert.failed.join(','),
    message: alert.message,
    alerts,
    correlationId: alert.order.correlationId,
  });
  deps.telemetry.metric('saga.alerts', 1);
}
