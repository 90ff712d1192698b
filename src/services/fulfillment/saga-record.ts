/**
 * The saga record: one document in the order's partition (`saga:<orderId>`) holding every step and
 * compensation with its status, attempts and result, and every status change. It is the audit trail
 * an operator reads, and each step's entry doubles as its two-phase record: `running` means started
 * and not known to be finished, and a later attempt that finds it so runs it again, never skips it.
 */
import type { CompensationName, OperationName, SagaStatus } from '../../domain/saga';
import { updateDocument, type Change } from '../optimistic-update';
import type { Document, DocumentContainer } from '../ports';

export type { OperationName };

export interface OperationRecord {
  status: 'running' | 'completed' | 'failed' | 'retrying';
  attempts: number;
  result: unknown;
  error: string | null;
  /** The failure's code (`out-of-stock`, ...), kept so a repeated call answers as the first did. */
  code: string | null;
  /** The compensation that undoes this step once it completed; null for compensations themselves. */
  compensation: CompensationName | null;
  startedAt: string;
  endedAt: string | null;
}

export interface CancelRequest {
  requestedAt: string;
  /** Whether the order was already confirmed: then a fee is kept from the refund. */
  afterPointOfNoReturn: boolean;
  fee: number | null;
  /** Whether the orchestration was told; a repeated cancel delivers it again until it was. */
  delivered: boolean;
  /** Who asked (src/functions/http/actor.ts): `entra:<principal>` or `admin-key`; null when unknown. */
  requestedBy: string | null;
}

/** A person's review of a saga that needed attention, as it was passed to the orchestration. */
export interface ReviewRecord {
  at: string;
  /** Who reviewed, as CancelRequest.requestedBy. */
  by: string | null;
  action: 'retry' | 'resolved';
  note: string | null;
}

/** A person's decision on a saga that needs attention, as the review event carries it. */
export interface ReviewDecision {
  action: 'retry' | 'resolved';
  note?: string;
  /** The needs-attention episode the decision was taken on; the saga ignores one meant for another. */
  episode?: string;
}

/** The needs-attention episode under way, and the one decision it takes. */
export interface ReviewRequest {
  /** `<instanceId>#<n>`: the n-th time that instance waited for a person; null on a record from before episodes. */
  episode: string | null;
  decision: (ReviewDecision & { at: string; delivered: boolean }) | null;
}

/** The most status changes a record keeps: the first, and the latest. A record stays well within a store's limits. */
export const MAX_TRANSITIONS = 100;

export interface SagaRecord extends Document {
  orderId: string;
  kind: 'saga';
  /** It holds no sequence slot; the orders container's unique key needs a value (SAGA_SLOT). */
  slot?: 'saga';
  /**
   * The orchestration in charge now: `fulfillmentInstanceId(orderId)`, or
   * `cancellationInstanceId(orderId)` after confirmation (docs/saga.md, "Instance ids"). A record from
   * before those names may hold `fulfill-<orderId>` for an order id that is not plain: the orders API
   * does not signal it.
   */
  instanceId: string;
  status: SagaStatus;
  reason: string | null;
  total: number;
  steps: Partial<Record<OperationName, OperationRecord>>;
  transitions: Array<{ at: string; status: SagaStatus; reason: string | null }>;
  alerts: number;
  /** The key of the last alert counted, so an alert raised again (its result lost) counts once. */
  lastAlert?: string;
  cancel: CancelRequest | null;
  /** Every review, oldest first; absent on records written before reviews were recorded. */
  reviews?: ReviewRecord[];
  /** When the saga reached the point of no return; a cancel recorded after it keeps the fee. */
  pointOfNoReturnAt?: string | null;
  /** Set while the saga waits for a person (and kept after, with the decision taken). */
  review?: ReviewRequest | null;
  /** How many status changes were dropped from the middle of `transitions`. */
  transitionsDropped?: number;
}

export function sagaRecordId(orderId: string): string {
  return `saga:${orderId}`;
}

export async function readSagaRecord(
  orders: DocumentContainer,
  orderId: string,
): Promise<SagaRecord | undefined> {
  return (await orders.read<SagaRecord>(orderId, sagaRecordId(orderId)))?.document;
}

/**
 * Applies `change` to the record with optimistic concurrency, creating it from `initial` when absent
 * (even when `change` writes nothing on it). Returns the change's result.
 */
export function updateSagaRecord<R>(
  orders: DocumentContainer,
  orderId: string,
  initial: () => SagaRecord,
  change: (record: SagaRecord) => Change<SagaRecord, R>,
): Promise<R> {
  return updateDocument<SagaRecord, R>(
    orders,
    () => orders.read<SagaRecord>(orderId, sagaRecordId(orderId)),
    (stored) => {
      if (stored !== undefined) return change(stored.document);
      const created = initial();
      const changed = change(created);
      return changed.next === undefined ? { next: created, result: changed.result } : changed;
    },
    { code: 'saga-record-contention', subject: `saga record of ${orderId}` },
  );
}
