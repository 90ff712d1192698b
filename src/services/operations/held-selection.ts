/**
 * Which held messages a bulk action takes: by reason, by the time they were set aside, by order,
 * or by id; and the order and entry sequence each belongs to. Pure.
 */
import { ownValue } from '../../domain/own-properties';
import { QUEUE } from '../queues';
import { type DeadLetteredMessage, type OperableQueue, type ParkedMessage } from './message-operations-port';

export type Held = ParkedMessage | DeadLetteredMessage;

/** Where a bulk action looks: `parked`, or the dead-letter sub-queue of each queue named. */
export type HeldSource = { source: 'parked' } | { source: 'deadletter'; queues: OperableQueue[] };

/** The dead-letter sub-queues a bulk action may name: the two the pipeline reads from. */
export const DEAD_LETTER_QUEUES = [QUEUE.ledger, QUEUE.orderTransactions] as const;

export interface HeldFilter {
  reason?: string;
  /** Inclusive, milliseconds since the epoch, on the time the broker accepted the held copy. */
  from?: number;
  /** Inclusive, as `from`. */
  to?: number;
  orderId?: string;
  messageIds?: readonly string[];
}

function ownField(body: unknown, field: string): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  return ownValue(body as Record<string, unknown>, field);
}

/**
 * The order a held message belongs to: the entry's own `orderId`, else the session it travelled in
 * on `order-transactions` (whose sessions are orders); null for a ledger batch or anything else.
 */
export function orderIdOf(message: Held): string | null {
  const fromBody = ownField(message.body, 'orderId');
  if (typeof fromBody === 'string') return fromBody;
  if (message.kind === 'parked') {
    return message.park.fromQueue === QUEUE.orderTransactions ? message.park.fromSessionId : null;
  }
  return message.queue === QUEUE.orderTransactions ? message.sessionId : null;
}

/** The entry's place in its order (`sequence`), from the body or the ledger's property; else null. */
export function entrySequenceOf(message: Held): number | null {
  const fromBody = ownField(message.body, 'sequence');
  if (typeof fromBody === 'number' && Number.isInteger(fromBody)) return fromBody;
  const fromProperty = message.applicationProperties.sequence;
  return typeof fromProperty === 'number' && Number.isInteger(fromProperty) ? fromProperty : null;
}

/** Why it was set aside: the park's reason, or the broker's dead-letter reason. */
export function reasonOf(message: Held): string | null {
  return message.kind === 'parked' ? message.park.reason : message.deadLetterReason;
}

export function matches(message: Held, filter: HeldFilter): boolean {
  if (filter.reason !== undefined && reasonOf(message) !== filter.reason) return false;
  if (filter.from !== undefined && message.enqueuedTimeUtc < filter.from) return false;
  if (filter.to !== undefined && message.enqueuedTimeUtc > filter.to) return false;
  if (filter.orderId !== undefined && orderIdOf(message) !== filter.orderId) return false;
  if (filter.messageIds !== undefined && !filter.messageIds.includes(message.messageId)) return false;
  return true;
}

/**
 * An order's held entries (parked from `order-transactions` or dead-lettered on it) in the order the
 * consumer must see them: by sequence; then, for one sequence held twice, and for those whose
 * sequence cannot be read (last), by the time the broker accepted them.
 */
export function inSequenceOrder(messages: readonly Held[]): Held[] {
  const key = (message: Held): number => entrySequenceOf(message) ?? Number.POSITIVE_INFINITY;
  return [...messages].sort(
    (a, b) =>
      key(a) - key(b) ||
      a.enqueuedTimeUtc - b.enqueuedTimeUtc ||
      Number(BigInt(a.sequenceNumber) - BigInt(b.sequenceNumber)),
  );
}

/** Held on the way into `order-transactions`: what an order's replay takes. */
export function isOrderTransactionsEntry(message: Held): boolean {
  return message.kind === 'parked'
    ? message.park.fromQueue === QUEUE.orderTransactions
    : message.queue === QUEUE.orderTransactions;
}

export function isDeadLetterQueue(name: string): name is (typeof DEAD_LETTER_QUEUES)[number] {
  return (DEAD_LETTER_QUEUES as readonly string[]).includes(name);
}
