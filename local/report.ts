/** The run report of docs/cli.md, built from what the embedded store and broker hold at the end. */
import type { TelemetryStats } from './telemetry-bytes';
import { compareText } from '../src/domain/compare';
import { linesOf, waitingFor, type OrderLine, type TransactionRecord } from '../src/domain/order';
import type { SagaStatus } from '../src/domain/saga';
import type { OrderDocument } from '../src/services/order-documents';
import { parkInfoOf } from '../src/services/operations/held-messages';
import type { ApplicationProperties } from '../src/services/ports';
import type { EntryAccount } from './entry-account';
import type { RecordConflicts } from './record-conflicts';

export interface ReportOrder {
  orderId: string;
  status: OrderDocument['status'];
  customerId: string | null;
  currency: string | null;
  lines: OrderLine[];
  total: number;
  appliedSequence: number;
  waitingFor: number | null;
  saga: { status: SagaStatus; reason: string | null } | null;
}

export interface ReportParked {
  queue: string;
  messageId: string;
  sessionId: string | null;
  transactionId: string | null;
  reason: string;
  description: string;
}

export interface ReportDeadLettered {
  queue: string;
  messageId: string;
  sessionId: string | null;
  reason: string;
  description: string;
  deliveryCount: number;
}

export interface ReportStats {
  messages: number;
  applied: number;
  duplicates: number;
  parked: number;
  deadLettered: number;
  /** Entries still waiting for a gap at the end (the account's `buffered`). */
  buffered: number;
  /** Ledger messages the input sent, and of those the ones parked whole. */
  ledgerMessages: number;
  ledgerMessagesParkedWhole: number;
  /** Deliveries past the first, on every queue: abandoned, lock expired, redelivered by a fault. */
  redeliveries: number;
  /** Every entry of the input once (docs/cli.md); the six outcomes add up to `entries`. */
  account: EntryAccount;
  /**
   * Entries the account counts by an outcome they had reached (applied, buffered, parked) whose
   * message is in the dead-letter queue of `order-transactions` as well: redundant dead letters.
   */
  deadLetteredAfterOutcome: number;
  /**
   * Deliveries the store refused as their transaction record exists (409), by what the stored
   * record's digest told: the same entry again, or its transactionId reused with other content.
   * A redelivery the consumer's cache remembers is answered before any write and counted in neither.
   */
  recordConflicts: RecordConflicts;
  /** What the app would export to Application Insights (`npm start`; ./telemetry-bytes.ts). */
  telemetry?: TelemetryStats;
}

export interface Report {
  orders: ReportOrder[];
  parked: ReportParked[];
  deadLettered: ReportDeadLettered[];
  stats: ReportStats;
}

export interface ParkedMessageView {
  messageId: string;
  applicationProperties: ApplicationProperties;
}

export function reportOrder(
  document: OrderDocument,
  records: Iterable<TransactionRecord>,
  saga: { status: SagaStatus; reason: string | null } | null,
): ReportOrder {
  return {
    orderId: document.orderId,
    status: document.status,
    customerId: document.customerId,
    currency: document.currency,
    lines: linesOf(records),
    total: document.total,
    appliedSequence: document.appliedSequence,
    waitingFor: waitingFor(document),
    saga,
  };
}

/** A parked message as the report lists it, read by the one decoder of park records (held-messages). */
export function reportParked(message: ParkedMessageView): ReportParked {
  const park = parkInfoOf(message.applicationProperties);
  return {
    queue: park.fromQueue ?? 'unknown',
    messageId: message.messageId,
    sessionId: park.fromSessionId,
    transactionId: park.transactionId,
    reason: park.reason,
    description: park.description,
  };
}

const byOrderId = (a: { orderId: string }, b: { orderId: string }): number =>
  compareText(a.orderId, b.orderId);

const byMessageId = (
  a: { queue: string; messageId: string },
  b: { queue: string; messageId: string },
): number => compareText(a.queue, b.queue) || compareText(a.messageId, b.messageId);

/**
 * A parked message once, however often it was parked: a park's id is made of its content, so a
 * second copy (sent again after the parked queue's detection window) is the same park.
 */
function onceEach(parked: ReportParked[]): ReportParked[] {
  return parked.filter(
    (message, index) =>
      index === 0 ||
      message.queue !== parked[index - 1].queue ||
      message.messageId !== parked[index - 1].messageId,
  );
}

/** Sorted so that two runs of the same input compare equal whatever the arrival order was. */
export function buildReport(parts: {
  orders: ReportOrder[];
  parked: ReportParked[];
  deadLettered: ReportDeadLettered[];
  stats: ReportStats;
}): Report {
  return {
    orders: [...parts.orders].sort(byOrderId),
    parked: onceEach([...parts.parked].sort(byMessageId)),
    deadLettered: [...parts.deadLettered].sort(byMessageId),
    stats: parts.stats,
  };
}
