/**
 * What the embedded broker keeps per queue (messages, sessions, dead letters, duplicate-detection
 * ids, counters) and the pure questions about it: where a message lives, which session is available
 * and which comes next in acceptance order.
 */
import type { HeldBody } from './clone-body';
import { offerPrecedes, popOffer, pushOffer, type SessionOffer } from './session-offers';
import type { BrokerDeadLetter, BrokerMessageFields, QueueOptions, QueueSettings, QueueStats } from './types';

const DEFAULT_DUPLICATE_DETECTION_WINDOW_MS = 10 * 60 * 1000;
const DEFAULT_MAX_DELIVERY_COUNT = 10;
const DEFAULT_LOCK_DURATION_MS = 30_000;

export interface MessageLock {
  token: string;
  lockedUntil: number;
}

/**
 * A message as a queue holds it: its body as ./clone-body holds it (JSON text where that gives it
 * back exactly, copied on every delivery), and its delivery count, the one field changed in place.
 */
export interface StoredMessage extends Omit<BrokerMessageFields, 'deliveryCount' | 'body'> {
  readonly body: HeldBody;
  readonly contentType: string | undefined;
  deliveryCount: number;
  lock: MessageLock | undefined;
  /** A copy the duplicate fault made; it is not copied again, so a probability of 1 still ends. */
  faultCopy?: true;
}

export interface SessionLock {
  receiverId: number;
  lockedUntil: number;
}

export interface SessionState {
  readonly id: string;
  /** FIFO by sequence number; a message comes back to the head, where it was. */
  readonly messages: StoredMessage[];
  lock: SessionLock | undefined;
  /** When a receiver last accepted it (the queue's `lastAccepted`), kept here for the acceptance scan. */
  accepted: number;
}

export interface QueueState {
  readonly name: string;
  readonly settings: QueueSettings;
  nextSequenceNumber: number;
  /** Queues without sessions. */
  readonly messages: StoredMessage[];
  /** Session queues: only sessions with messages or a lock, so that accepting scans no dead ones. */
  readonly sessions: Map<string, SessionState>;
  /**
   * Sessions that became available, as a min-heap in acceptance order, so that accepting one costs
   * O(log n), not a scan of every session (a backlog of 2,000 orders made that a tenth of the
   * consumer's CPU). Entries go stale when their session is taken or changes; accepting skips those.
   */
  readonly offers: SessionOffer<SessionState>[];
  /**
   * When a receiver last accepted each session, for every session ever accepted: acceptance order
   * survives a session emptying, for fairness when it fills again.
   */
  readonly lastAccepted: Map<string, number>;
  readonly deadLetters: BrokerDeadLetter[];
  /**
   * The messageIds accepted within the duplicate-detection window, with when, oldest first (a Map
   * keeps insertion order, which is time order): see `seenElseRemember`.
   */
  readonly detectedIds: Map<string, number>;
  /** Messages available or locked. */
  activeCount: number;
  readonly stats: QueueStats;
}

function emptyStats(): QueueStats {
  return {
    sent: 0,
    sendCalls: 0,
    duplicatesDetected: 0,
    completed: 0,
    abandoned: 0,
    deadLettered: 0,
    redeliveredByFault: 0,
    lockExpired: 0,
  };
}

export function resolveSettings(options: QueueOptions): QueueSettings {
  return {
    requiresSession: options.requiresSession ?? false,
    duplicateDetection: options.duplicateDetection ?? false,
    duplicateDetectionWindowMs: options.duplicateDetectionWindowMs ?? DEFAULT_DUPLICATE_DETECTION_WINDOW_MS,
    maxDeliveryCount: options.maxDeliveryCount ?? DEFAULT_MAX_DELIVERY_COUNT,
    lockDurationMs: options.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS,
  };
}

export function createQueueState(name: string, settings: QueueSettings): QueueState {
  return {
    name,
    settings,
    nextSequenceNumber: 0,
    messages: [],
    sessions: new Map(),
    offers: [],
    lastAccepted: new Map(),
    deadLetters: [],
    detectedIds: new Map(),
    activeCount: 0,
    stats: emptyStats(),
  };
}

/**
 * Duplicate detection, as Service Bus does it (Microsoft Learn, "Duplicate detection",
 * https://learn.microsoft.com/azure/service-bus-messaging/duplicate-detection): the queue keeps track
 * of the application-controlled MessageId of all messages sent into it during the time window; a
 * message sent with a MessageId logged in that window is reported as accepted and dropped, and no part
 * of the message but its MessageId is considered. So the comparison is exact, character for character
 * (case included); only the time window forgets an id.
 *
 * Whether `messageId` was accepted within the window ending `at`; when it was not, it is remembered
 * as accepted `at`. Ids accepted at or before the window's start are forgotten first.
 */
export function seenElseRemember(queue: QueueState, messageId: string, at: number): boolean {
  const windowStart = at - queue.settings.duplicateDetectionWindowMs;
  for (const [id, accepted] of queue.detectedIds) {
    if (accepted > windowStart) break;
    queue.detectedIds.delete(id);
  }
  if (queue.detectedIds.has(messageId)) return true;
  queue.detectedIds.set(messageId, at);
  return false;
}

export function removeFrom(messages: StoredMessage[], message: StoredMessage): void {
  const index = messages.indexOf(message);
  if (index >= 0) messages.splice(index, 1);
}

function sessionOf(queue: QueueState, sessionId: string): SessionState {
  let session = queue.sessions.get(sessionId);
  if (!session) {
    session = {
      id: sessionId,
      messages: [],
      lock: undefined,
      accepted: queue.lastAccepted.get(sessionId) ?? 0,
    };
    queue.sessions.set(sessionId, session);
  }
  return session;
}

/** The list a message lives in: its session's, or the queue's when the queue has no sessions. */
export function containerOf(queue: QueueState, message: StoredMessage): StoredMessage[] {
  if (!queue.settings.requiresSession || message.sessionId === undefined) return queue.messages;
  return sessionOf(queue, message.sessionId).messages;
}

/** Forgets a session with no message and no lock. */
export function pruneSession(queue: QueueState, sessionId: string | undefined): void {
  if (!queue.settings.requiresSession || sessionId === undefined) return;
  const session = queue.sessions.get(sessionId);
  if (session && session.messages.length === 0 && !session.lock) queue.sessions.delete(sessionId);
}

export function isSessionAvailable(session: SessionState): boolean {
  const head = session.messages[0];
  return session.lock === undefined && head !== undefined && head.lock === undefined;
}

/** An available session's place in acceptance order. */
function offerOf(session: SessionState): SessionOffer<SessionState> {
  return { session, accepted: session.accepted, head: session.messages[0].sequenceNumber };
}

/** Records that a session may have become available; a no-op when it has not. */
export function offerSession(queue: QueueState, sessionId: string | undefined): void {
  if (!queue.settings.requiresSession || sessionId === undefined) return;
  const session = queue.sessions.get(sessionId);
  if (session !== undefined && isSessionAvailable(session)) pushOffer(queue.offers, offerOf(session));
}

function isOfferCurrent(queue: QueueState, offer: SessionOffer<SessionState>): boolean {
  const { session } = offer;
  return (
    queue.sessions.get(session.id) === session &&
    isSessionAvailable(session) &&
    session.accepted === offer.accepted &&
    session.messages[0].sequenceNumber === offer.head
  );
}

/** The available session that comes first in acceptance order. */
export function nextAvailableSession(queue: QueueState): SessionState | undefined {
  for (let offer = popOffer(queue.offers); offer !== undefined; offer = popOffer(queue.offers)) {
    if (isOfferCurrent(queue, offer)) return offer.session;
  }
  // Every way a session becomes available offers it, so this finds nothing; it is the guarantee
  // that a path that did not would still never strand a session. Only unavailable sessions (the
  // locked ones, a few) are left to look at here.
  let chosen: SessionOffer<SessionState> | undefined;
  for (const session of queue.sessions.values()) {
    if (!isSessionAvailable(session)) continue;
    const offer = offerOf(session);
    if (chosen === undefined || offerPrecedes(offer, chosen)) chosen = offer;
  }
  return chosen?.session;
}

/** Every message available or locked, in sequence order. */
export function allActive(queue: QueueState): StoredMessage[] {
  if (!queue.settings.requiresSession) return [...queue.messages];
  const all: StoredMessage[] = [];
  for (const session of queue.sessions.values()) all.push(...session.messages);
  return all.sort((a, b) => a.sequenceNumber - b.sequenceNumber);
}
