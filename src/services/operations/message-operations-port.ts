/**
 * What an operator does with the messages the pipeline set aside (docs/messages.md): list and inspect
 * parked and dead-lettered messages, replay one into its queue and session, and see each queue's
 * backlog. Implemented on the embedded broker and on `@azure/service-bus`.
 */
import { compareText } from '../../domain/compare';
import { QUEUE } from '../queues';
import type { ApplicationProperties } from '../ports';

/** The queues an operator may look into; each also has a dead-letter sub-queue. */
export const OPERABLE_QUEUES = [QUEUE.ledger, QUEUE.orderTransactions, QUEUE.parked] as const;
export type OperableQueue = (typeof OPERABLE_QUEUES)[number];

export function isOperableQueue(name: string): name is OperableQueue {
  return (OPERABLE_QUEUES as readonly string[]).includes(name);
}

/** A message held aside, parked or dead-lettered, with everything a replay needs. */
export interface HeldMessage {
  messageId: string;
  sessionId: string | null;
  body: unknown;
  correlationId: string | null;
  subject: string | null;
  applicationProperties: ApplicationProperties;
  /**
   * The broker's identity of this very copy, as decimal text: Service Bus sequence numbers are
   * 64-bit, past what a JS number holds exactly.
   */
  sequenceNumber: string;
  /** When the broker accepted it, milliseconds since the epoch by the broker's clock. */
  enqueuedTimeUtc: number;
  deliveryCount: number;
}

/** Where a parked message came from and why, read from its PARK_PROPERTY application properties. */
export interface ParkInfo {
  reason: string;
  description: string;
  fromQueue: string | null;
  fromSessionId: string | null;
  transactionId: string | null;
}

export interface ParkedMessage extends HeldMessage {
  kind: 'parked';
  park: ParkInfo;
}

export interface DeadLetteredMessage extends HeldMessage {
  kind: 'dead-lettered';
  /** The queue whose dead-letter sub-queue holds it: the queue it died in. */
  queue: OperableQueue;
  deadLetterReason: string | null;
  deadLetterDescription: string | null;
}

export interface Listing<T> {
  messages: T[];
  /** True when the listing stopped at its bound and more messages exist. */
  truncated: boolean;
}

export interface SessionBacklog {
  sessionId: string;
  /** Messages waiting in the session, one in flight included. */
  pending: number;
  /** When the oldest of them was enqueued, milliseconds since the epoch by the broker's clock. */
  oldestEnqueuedTimeUtc: number;
}

/**
 * A session queue's sessions from its active messages (each with its session and enqueue time):
 * how many each holds and when its oldest was enqueued, most pending first. The broker gives no
 * per-session counts, so Azure's adapter and the embedded one both count what they peek.
 */
export function sessionsOf(
  messages: Iterable<{ sessionId: string | null | undefined; enqueuedTimeUtc: number }>,
): SessionBacklog[] {
  const bySession = new Map<string, SessionBacklog>();
  for (const { sessionId, enqueuedTimeUtc } of messages) {
    const id = sessionId ?? '';
    const seen = bySession.get(id);
    bySession.set(id, {
      sessionId: id,
      pending: (seen?.pending ?? 0) + 1,
      oldestEnqueuedTimeUtc: Math.min(enqueuedTimeUtc, seen?.oldestEnqueuedTimeUtc ?? Infinity),
    });
  }
  return [...bySession.values()].sort(
    (a, b) => b.pending - a.pending || compareText(a.sessionId, b.sessionId),
  );
}

export interface QueueBacklog {
  queue: OperableQueue;
  activeMessages: number;
  deadLetteredMessages: number;
  /**
   * When the oldest active message was enqueued (ms since the epoch), null when none is active: how
   * long the queue has been behind.
   */
  oldestEnqueuedTimeUtc: number | null;
  /** Sessions with messages, most pending first; empty for a queue without sessions. */
  sessions: SessionBacklog[];
  /** True when the per-session counts stopped at a bound: they are then a lower bound. */
  truncated: boolean;
}

export interface QueueInfo {
  requiresSession: boolean;
  /**
   * How long the queue remembers a messageId to drop a second send of it without a word, or null
   * when it does not detect duplicates. A replay inside that window would vanish.
   */
  duplicateDetectionWindowMs: number | null;
}

export type ReplayDelivery =
  | { delivered: true; queue: OperableQueue; sessionId: string | null; messageId: string }
  /** The copy is no longer where it was (replayed or removed meanwhile): nothing was sent. */
  | { delivered: false };

/** Whether this call removed the copy; false when it was no longer there (replayed or removed). */
export interface DiscardOutcome {
  discarded: boolean;
}

export interface MessageOperations {
  listParked(): Promise<Listing<ParkedMessage>>;
  listDeadLettered(queue: OperableQueue): Promise<Listing<DeadLetteredMessage>>;
  findParked(messageId: string): Promise<ParkedMessage | undefined>;
  findDeadLettered(queue: OperableQueue, messageId: string): Promise<DeadLetteredMessage | undefined>;
  /**
   * Sends `replayTargetOf(message)` and only then removes this copy (same sequence number) from
   * `parked`; when the send fails the copy stays where it was and the error is thrown.
   */
  replayParked(message: ParkedMessage): Promise<ReplayDelivery>;
  /** As `replayParked`, from the dead-letter sub-queue of `message.queue`. */
  replayDeadLettered(message: DeadLetteredMessage): Promise<ReplayDelivery>;
  /**
   * Takes this very copy from `parked` (as a replay does, so that a replay or discard of it under
   * way elsewhere has it and this one does nothing), calls `keep` (the archive), and only once
   * that resolved removes the copy. When `keep` throws, the copy stays and the error is thrown.
   */
  discardParked(message: ParkedMessage, keep: () => Promise<void>): Promise<DiscardOutcome>;
  /** As `discardParked`, from the dead-letter sub-queue of `message.queue`. */
  discardDeadLettered(message: DeadLetteredMessage, keep: () => Promise<void>): Promise<DiscardOutcome>;
  backlog(queue: OperableQueue): Promise<QueueBacklog>;
  queueInfo(queue: OperableQueue): Promise<QueueInfo>;
}
