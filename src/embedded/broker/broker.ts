/**
 * The embedded Service Bus broker: queues with sessions, duplicate detection, peek-lock delivery,
 * lock expiry and dead-lettering, with the semantics of CONTRACTS section 1. Locally and in tests the
 * app runs on it; on Azure the real Service Bus does this. Everything is in memory and synchronous
 * except `send`, which is async because the `MessageSender` port is.
 */
import { PermanentError, TransientError } from '../../domain/errors';
import type { ApplicationProperties, MessageSender, OutgoingMessage } from '../../services/ports';

/** The Standard tier's largest message batch. */
export const STANDARD_TIER_MAX_BATCH_BYTES = 262_144;

/** Service Bus refuses longer message and session ids. */
const MAX_ID_LENGTH = 128;

/** Headers, system properties and AMQP framing; a rough allowance, the same for every message. */
const MESSAGE_OVERHEAD_BYTES = 100;

const DEFAULT_DUPLICATE_DETECTION_WINDOW_MS = 10 * 60 * 1000;
const DEFAULT_MAX_DELIVERY_COUNT = 10;
const DEFAULT_LOCK_DURATION_MS = 30_000;

export const MAX_DELIVERY_COUNT_EXCEEDED = 'MaxDeliveryCountExceeded';

/** A settlement or renewal came too late: the lock is gone and the message will be delivered again. */
export class MessageLockLostError extends TransientError {
  constructor(message: string) {
    super('message-lock-lost', message);
  }
}

/** The receiver no longer holds its session (closed, or the lock expired). */
export class SessionLockLostError extends TransientError {
  constructor(message: string) {
    super('session-lock-lost', message);
  }
}

/**
 * The port's message, plus a content type: `OutgoingMessage` has none yet, and the Functions host
 * reports it in the trigger metadata.
 */
export type BrokerOutgoingMessage = OutgoingMessage & { contentType?: string };

export interface QueueOptions {
  requiresSession?: boolean;
  duplicateDetection?: boolean;
  duplicateDetectionWindowMs?: number;
  maxDeliveryCount?: number;
  lockDurationMs?: number;
}

export type QueueSettings = Required<QueueOptions>;

export interface BrokerFaults {
  /** Probability that a completed message is delivered again (at-least-once delivery). */
  duplicate?: number;
}

export interface EmbeddedBrokerOptions {
  now?: () => number;
  random?: () => number;
  faults?: BrokerFaults;
  maxBatchBytes?: number;
}

/** A message as a receiver gets it: a copy, so a handler cannot change what would be redelivered. */
export interface ReceivedMessage {
  readonly queue: string;
  readonly messageId: string;
  readonly sessionId: string | undefined;
  readonly body: unknown;
  readonly correlationId: string | undefined;
  readonly subject: string | undefined;
  readonly contentType: string | undefined;
  readonly applicationProperties: ApplicationProperties;
  readonly sequenceNumber: number;
  /** Milliseconds since the epoch, by the broker's clock. */
  readonly enqueuedTimeUtc: number;
  readonly deliveryCount: number;
  readonly lockToken: string;
  /** When the lock was taken; renewals move the real deadline, not this copy. */
  readonly lockedUntil: number;
}

export interface PeekedMessage {
  readonly messageId: string;
  readonly sessionId: string | undefined;
  readonly body: unknown;
  readonly correlationId: string | undefined;
  readonly subject: string | undefined;
  readonly applicationProperties: ApplicationProperties;
  readonly sequenceNumber: number;
  readonly enqueuedTimeUtc: number;
  readonly deliveryCount: number;
  readonly locked: boolean;
}

export interface DeadLetteredMessage {
  readonly queue: string;
  readonly messageId: string;
  readonly sessionId: string | undefined;
  readonly body: unknown;
  readonly correlationId: string | undefined;
  readonly subject: string | undefined;
  readonly contentType: string | undefined;
  readonly applicationProperties: ApplicationProperties;
  readonly sequenceNumber: number;
  readonly enqueuedTimeUtc: number;
  readonly deliveryCount: number;
  readonly deadLetterReason: string;
  readonly deadLetterErrorDescription: string;
  readonly deadLetteredAtUtc: number;
}

export interface SessionBacklog {
  readonly sessionId: string;
  /** Messages in the session, the one in flight included. */
  readonly pending: number;
  readonly locked: boolean;
}

export interface QueueStats {
  /** Messages accepted (duplicates dropped by detection are not). */
  sent: number;
  /** Batches the sender needed, packing each `send` call's messages under the batch byte limit. */
  sendCalls: number;
  duplicatesDetected: number;
  completed: number;
  abandoned: number;
  deadLettered: number;
  redeliveredByFault: number;
  lockExpired: number;
}

/** A receiver holding one session's lock: it alone receives and settles that session's messages. */
export interface SessionReceiver {
  readonly queue: string;
  readonly sessionId: string;
  readonly lockDurationMs: number;
  /** The head of the session, locked, when it is available; one message in flight at a time. */
  receive(): ReceivedMessage | undefined;
  complete(message: ReceivedMessage): void;
  /** Makes it available again at the head, or dead-letters it when its deliveries are used up. */
  abandon(message: ReceivedMessage): void;
  deadLetter(message: ReceivedMessage, reason: string, description: string): void;
  renewMessageLock(message: ReceivedMessage): number;
  renewSessionLock(): number;
  /** Releases the session; a message still locked stays locked until its lock expires. */
  close(): void;
}

export type AvailabilityListener = (queue: string) => void;

export interface EmbeddedBroker extends MessageSender {
  createQueue(name: string, options?: QueueOptions): QueueSettings;
  queueSettings(queue: string): QueueSettings;
  queueNames(): string[];
  send(queue: string, messages: readonly BrokerOutgoingMessage[]): Promise<void>;
  /** The least recently accepted session with a message available and no other receiver, if any. */
  acceptNextSession(queue: string): SessionReceiver | undefined;
  /** Next available message of a queue without sessions. */
  receive(queue: string): ReceivedMessage | undefined;
  /**
   * One chosen message of a queue without sessions, locked, when it is available: an operator
   * replaying it must settle that very copy, not whichever is next.
   */
  receiveBySequenceNumber(queue: string, sequenceNumber: number): ReceivedMessage | undefined;
  complete(message: ReceivedMessage): void;
  abandon(message: ReceivedMessage): void;
  deadLetter(message: ReceivedMessage, reason: string, description: string): void;
  renewMessageLock(message: ReceivedMessage): number;
  peek(queue: string): PeekedMessage[];
  deadLetters(queue: string): DeadLetteredMessage[];
  /** Removes one message from the dead-letter sub-queue (an operator replayed it); undefined if gone. */
  takeDeadLetter(queue: string, sequenceNumber: number): DeadLetteredMessage | undefined;
  sessions(queue: string): SessionBacklog[];
  stats(): Record<string, QueueStats>;
  /** No message waiting, in flight, or locked by a receiver that went away; only `queues` when given. */
  isIdle(queues?: readonly string[]): boolean;
  /**
   * Called (in a microtask) when messages of a queue become available (sent, abandoned, lock or
   * session lock expired) or leave it on a lock expiry; returns the unsubscribe.
   */
  onAvailable(listener: AvailabilityListener): () => void;
  /** Stops the lock-expiry wake-up timer. */
  close(): void;
}

/**
 * The size the sender accounts for a message: UTF-8 bytes of the JSON body, the ids and the JSON of
 * the application properties, plus a fixed overhead. An estimate, shared with the Azure sender adapter
 * so that both report comparable `sendCalls`.
 */
export function estimateMessageBytes(message: OutgoingMessage): number {
  // Part by part: the byte length of a concatenation would first copy it into one flat string.
  return (
    Buffer.byteLength(JSON.stringify(message.body) ?? '', 'utf8') +
    Buffer.byteLength(message.messageId, 'utf8') +
    Buffer.byteLength(message.sessionId ?? '', 'utf8') +
    Buffer.byteLength(JSON.stringify(message.applicationProperties ?? {}) ?? '', 'utf8') +
    MESSAGE_OVERHEAD_BYTES
  );
}

/** How many batches of at most `maxBatchBytes` the messages need, packed in order. */
export function countBatches(messages: readonly OutgoingMessage[], maxBatchBytes: number): number {
  let batches = 0;
  let current = 0;
  for (const message of messages) {
    const size = estimateMessageBytes(message);
    if (size > maxBatchBytes) {
      throw new PermanentError(
        'message-too-large',
        `message ${message.messageId} is about ${size} bytes, over the ${maxBatchBytes}-byte limit`,
      );
    }
    if (batches === 0 || current + size > maxBatchBytes) {
      batches += 1;
      current = 0;
    }
    current += size;
  }
  return batches;
}

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

interface MessageLock {
  token: string;
  lockedUntil: number;
}

interface StoredMessage {
  readonly messageId: string;
  readonly sessionId: string | undefined;
  readonly body: unknown;
  readonly correlationId: string | undefined;
  readonly subject: string | undefined;
  readonly contentType: string | undefined;
  readonly applicationProperties: ApplicationProperties;
  readonly sequenceNumber: number;
  readonly enqueuedTimeUtc: number;
  deliveryCount: number;
  lock: MessageLock | undefined;
  /** A copy the duplicate fault made; it is not copied again, so a probability of 1 still ends. */
  faultCopy?: true;
}

interface SessionLock {
  receiverId: number;
  lockedUntil: number;
}

interface SessionState {
  readonly id: string;
  /** FIFO by sequence number; a message comes back to the head, where it was. */
  readonly messages: StoredMessage[];
  lock: SessionLock | undefined;
  /** When a receiver last accepted it (the queue's `lastAccepted`), kept here for the acceptance scan. */
  accepted: number;
}

interface QueueState {
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
  readonly offers: SessionOffer[];
  /** Acceptance order survives a session emptying, for fairness when it fills again. */
  readonly lastAccepted: Map<string, number>;
  readonly deadLetters: DeadLetteredMessage[];
  /** messageId → first accepted at; insertion order is time order, so pruning stops early. */
  readonly seenMessageIds: Map<string, number>;
  /** Messages available or locked. */
  activeCount: number;
  readonly stats: QueueStats;
}

/** A session as it was when it became available: valid while it still is, unchanged. */
interface SessionOffer {
  readonly session: SessionState;
  readonly accepted: number;
  readonly head: number;
}

/** Least recently accepted first, then the oldest head: the broker's fairness across sessions. */
function offerPrecedes(a: SessionOffer, b: SessionOffer): boolean {
  return a.accepted < b.accepted || (a.accepted === b.accepted && a.head < b.head);
}

function pushOffer(heap: SessionOffer[], offer: SessionOffer): void {
  let index = heap.push(offer) - 1;
  while (index > 0) {
    const parent = (index - 1) >> 1;
    if (!offerPrecedes(heap[index], heap[parent])) break;
    [heap[index], heap[parent]] = [heap[parent], heap[index]];
    index = parent;
  }
}

function popOffer(heap: SessionOffer[]): SessionOffer | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (top === undefined || last === undefined || heap.length === 0) return top;
  heap[0] = last;
  let index = 0;
  for (;;) {
    const left = 2 * index + 1;
    const right = left + 1;
    let first = index;
    if (left < heap.length && offerPrecedes(heap[left], heap[first])) first = left;
    if (right < heap.length && offerPrecedes(heap[right], heap[first])) first = right;
    if (first === index) return top;
    [heap[index], heap[first]] = [heap[first], heap[index]];
    index = first;
  }
}

interface LockedEntry {
  readonly queue: QueueState;
  readonly message: StoredMessage;
}

interface HeldSession {
  readonly queue: QueueState;
  readonly session: SessionState;
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

function resolveSettings(options: QueueOptions): QueueSettings {
  return {
    requiresSession: options.requiresSession ?? false,
    duplicateDetection: options.duplicateDetection ?? false,
    duplicateDetectionWindowMs: options.duplicateDetectionWindowMs ?? DEFAULT_DUPLICATE_DETECTION_WINDOW_MS,
    maxDeliveryCount: options.maxDeliveryCount ?? DEFAULT_MAX_DELIVERY_COUNT,
    lockDurationMs: options.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS,
  };
}

/** Lock tokens look like Service Bus's GUIDs but count, so that seeded runs stay reproducible. */
function lockTokenFor(counter: number): string {
  return `00000000-0000-4000-8000-${counter.toString(16).padStart(12, '0')}`;
}

const NOT_PLAIN = Symbol('not plain');
/** Deeper than any body the app sends; deeper ones, and cycles, go to structuredClone. */
const MAX_PLAIN_DEPTH = 64;

function copyPlain(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'function' || typeof value === 'symbol' ? NOT_PLAIN : value;
  }
  if (depth >= MAX_PLAIN_DEPTH) return NOT_PLAIN;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN;
    const length = value.length;
    const copy: unknown[] = new Array<unknown>(length);
    for (let i = 0; i < length; i++) {
      const element: unknown = value[i];
      if (element === undefined && !(i in value)) return NOT_PLAIN;
      const item = copyPlain(element, depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      copy[i] = item;
    }
    return copy;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN;
  const record = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  // for...in with an own-property check: the same keys as Object.keys, without allocating them.
  for (const key in record) {
    if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
    const item = copyPlain(record[key], depth + 1);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    if (key === '__proto__') {
      Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    } else {
      copy[key] = item;
    }
  }
  return copy;
}

/**
 * A body as the queue keeps it and as each delivery gets it: structuredClone, without its
 * serialize round trip for the plain objects, arrays and primitives bodies nearly always are.
 * There, as on the wire, a value referenced twice is copied twice and an array keeps only its
 * elements; anything else (dates, bytes, maps, cycles) goes to structuredClone whole.
 */
function cloneBody(body: unknown): unknown {
  const copy = copyPlain(body, 0);
  return copy === NOT_PLAIN ? structuredClone(body) : copy;
}

function removeFrom(messages: StoredMessage[], message: StoredMessage): void {
  const index = messages.indexOf(message);
  if (index >= 0) messages.splice(index, 1);
}

function checkId(kind: string, id: string | undefined, messageId: string): void {
  if (id !== undefined && id.length > MAX_ID_LENGTH) {
    throw new PermanentError(
      'id-too-long',
      `${kind} of message ${messageId} is over ${MAX_ID_LENGTH} characters`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// The broker
// ---------------------------------------------------------------------------------------------

export function createEmbeddedBroker(options: EmbeddedBrokerOptions = {}): EmbeddedBroker {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const duplicateProbability = options.faults?.duplicate ?? 0;
  const maxBatchBytes = options.maxBatchBytes ?? STANDARD_TIER_MAX_BATCH_BYTES;

  const queues = new Map<string, QueueState>();
  const locks = new Map<string, LockedEntry>();
  const heldSessions = new Set<HeldSession>();
  const listeners = new Set<AvailabilityListener>();
  const pendingNotifications = new Set<string>();
  let notificationScheduled = false;
  let lockCounter = 0;
  let receiverCounter = 0;
  let acceptCounter = 0;
  let wakeUp: { timer: NodeJS.Timeout; at: number } | undefined;
  /**
   * No lock, of a message or a session, runs out before this (Infinity: none is held). Renewals
   * only move deadlines later, so it stays a lower bound until a scan makes it exact again, and
   * the many operations that run before it skip the scan.
   */
  let earliestLockDeadline = Infinity;

  function lockTaken(lockedUntil: number): number {
    if (lockedUntil < earliestLockDeadline) earliestLockDeadline = lockedUntil;
    return lockedUntil;
  }

  function queueOf(name: string): QueueState {
    const queue = queues.get(name);
    if (!queue) throw new PermanentError('unknown-queue', `queue ${name} does not exist`);
    return queue;
  }

  // Listeners run in a microtask so that they never see the broker halfway through an operation.
  function notify(queue: string): void {
    if (listeners.size === 0) return;
    pendingNotifications.add(queue);
    if (notificationScheduled) return;
    notificationScheduled = true;
    queueMicrotask(() => {
      notificationScheduled = false;
      const names = [...pendingNotifications];
      pendingNotifications.clear();
      for (const name of names) {
        for (const listener of [...listeners]) {
          try {
            listener(name);
          } catch {
            // A listener's failure is its own; the broker's state is already consistent.
          }
        }
      }
    });
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

  function containerOf(queue: QueueState, message: StoredMessage): StoredMessage[] {
    if (!queue.settings.requiresSession || message.sessionId === undefined) return queue.messages;
    return sessionOf(queue, message.sessionId).messages;
  }

  function pruneSession(queue: QueueState, sessionId: string | undefined): void {
    if (!queue.settings.requiresSession || sessionId === undefined) return;
    const session = queue.sessions.get(sessionId);
    if (session && session.messages.length === 0 && !session.lock) queue.sessions.delete(sessionId);
  }

  function moveToDeadLetter(
    queue: QueueState,
    message: StoredMessage,
    reason: string,
    description: string,
  ): void {
    removeFrom(containerOf(queue, message), message);
    queue.activeCount -= 1;
    queue.stats.deadLettered += 1;
    queue.deadLetters.push({
      queue: queue.name,
      messageId: message.messageId,
      sessionId: message.sessionId,
      body: message.body,
      correlationId: message.correlationId,
      subject: message.subject,
      contentType: message.contentType,
      applicationProperties: message.applicationProperties,
      sequenceNumber: message.sequenceNumber,
      enqueuedTimeUtc: message.enqueuedTimeUtc,
      deliveryCount: message.deliveryCount,
      deadLetterReason: reason,
      deadLetterErrorDescription: description,
      deadLetteredAtUtc: now(),
    });
    pruneSession(queue, message.sessionId);
  }

  /** Back at its place in the queue, or to the dead-letter queue when its deliveries are used up. */
  function release(queue: QueueState, message: StoredMessage): void {
    message.lock = undefined;
    if (message.deliveryCount >= queue.settings.maxDeliveryCount) {
      moveToDeadLetter(
        queue,
        message,
        MAX_DELIVERY_COUNT_EXCEEDED,
        `Message could not be consumed after ${queue.settings.maxDeliveryCount} delivery attempts.`,
      );
    }
    offerSession(queue, message.sessionId);
    // Also when dead-lettered: a lock that expires into the dead-letter queue may leave the queue
    // idle, and whoever waits for that hears of it only this way.
    notify(queue.name);
  }

  // Expiry is lazy: every operation first settles what the clock has already decided.
  function expireLocks(): void {
    const t = now();
    if (t < earliestLockDeadline) return;
    let earliest = Infinity;
    for (const [token, entry] of locks) {
      const lock = entry.message.lock;
      if (lock && lock.lockedUntil > t) {
        earliest = Math.min(earliest, lock.lockedUntil);
        continue;
      }
      locks.delete(token);
      entry.queue.stats.lockExpired += 1;
      release(entry.queue, entry.message);
    }
    for (const held of heldSessions) {
      const lock = held.session.lock;
      if (lock && lock.lockedUntil > t) {
        earliest = Math.min(earliest, lock.lockedUntil);
        continue;
      }
      heldSessions.delete(held);
      held.session.lock = undefined;
      pruneSession(held.queue, held.session.id);
      offerSession(held.queue, held.session.id);
      if (isSessionAvailable(held.session)) notify(held.queue.name);
    }
    earliestLockDeadline = earliest;
  }

  function clearWakeUp(): void {
    if (wakeUp) clearTimeout(wakeUp.timer);
    wakeUp = undefined;
  }

  // Pumps wait for notifications; an expiring lock notifies nobody unless the broker wakes itself.
  // Only while someone listens, so that a broker driven by a test clock runs no timers at all.
  function scheduleWakeUp(): void {
    if (listeners.size === 0) return;
    // A bound that a renewal or settlement made stale wakes the broker early, to no harm: the
    // wake-up's scan makes it exact and schedules the next.
    const at = earliestLockDeadline === Infinity ? undefined : earliestLockDeadline;
    if (at === undefined) {
      clearWakeUp();
      return;
    }
    if (wakeUp && wakeUp.at <= at) return;
    clearWakeUp();
    const timer = setTimeout(
      () => {
        wakeUp = undefined;
        expireLocks();
        scheduleWakeUp();
      },
      Math.max(1, at - now()),
    );
    wakeUp = { timer, at };
  }

  function isSessionAvailable(session: SessionState): boolean {
    const head = session.messages[0];
    return session.lock === undefined && head !== undefined && head.lock === undefined;
  }

  /** An available session's place in acceptance order. */
  function offerOf(session: SessionState): SessionOffer {
    return { session, accepted: session.accepted, head: session.messages[0].sequenceNumber };
  }

  /** Records that a session may have become available; a no-op when it has not. */
  function offerSession(queue: QueueState, sessionId: string | undefined): void {
    if (!queue.settings.requiresSession || sessionId === undefined) return;
    const session = queue.sessions.get(sessionId);
    if (session !== undefined && isSessionAvailable(session)) pushOffer(queue.offers, offerOf(session));
  }

  function isOfferCurrent(queue: QueueState, offer: SessionOffer): boolean {
    const { session } = offer;
    return (
      queue.sessions.get(session.id) === session &&
      isSessionAvailable(session) &&
      session.accepted === offer.accepted &&
      session.messages[0].sequenceNumber === offer.head
    );
  }

  /** The available session that comes first in acceptance order. */
  function nextAvailableSession(queue: QueueState): SessionState | undefined {
    for (let offer = popOffer(queue.offers); offer !== undefined; offer = popOffer(queue.offers)) {
      if (isOfferCurrent(queue, offer)) return offer.session;
    }
    // Every way a session becomes available offers it, so this finds nothing; it is the guarantee
    // that a path that did not would still never strand a session. Only unavailable sessions (the
    // locked ones, a few) are left to look at here.
    let chosen: SessionOffer | undefined;
    for (const session of queue.sessions.values()) {
      if (!isSessionAvailable(session)) continue;
      const offer = offerOf(session);
      if (chosen === undefined || offerPrecedes(offer, chosen)) chosen = offer;
    }
    return chosen?.session;
  }

  function lockMessage(queue: QueueState, message: StoredMessage): ReceivedMessage {
    lockCounter += 1;
    const lock = {
      token: lockTokenFor(lockCounter),
      lockedUntil: lockTaken(now() + queue.settings.lockDurationMs),
    };
    message.lock = lock;
    message.deliveryCount += 1;
    locks.set(lock.token, { queue, message });
    return {
      queue: queue.name,
      messageId: message.messageId,
      sessionId: message.sessionId,
      body: cloneBody(message.body),
      correlationId: message.correlationId,
      subject: message.subject,
      contentType: message.contentType,
      applicationProperties: { ...message.applicationProperties },
      sequenceNumber: message.sequenceNumber,
      enqueuedTimeUtc: message.enqueuedTimeUtc,
      deliveryCount: message.deliveryCount,
      lockToken: lock.token,
      lockedUntil: lock.lockedUntil,
    };
  }

  /** The live lock of a received message, checked to belong where the caller says it does. */
  function lockedEntryOf(received: ReceivedMessage): LockedEntry {
    const entry = locks.get(received.lockToken);
    if (!entry) {
      throw new MessageLockLostError(
        `the lock on message ${received.messageId} in ${received.queue} expired or was already settled`,
      );
    }
    return entry;
  }

  function takeLock(entry: LockedEntry, received: ReceivedMessage): void {
    locks.delete(received.lockToken);
    entry.message.lock = undefined;
  }

  function completeLocked(entry: LockedEntry): void {
    const { queue, message } = entry;
    const container = containerOf(queue, message);
    removeFrom(container, message);
    queue.activeCount -= 1;
    queue.stats.completed += 1;
    if (duplicateProbability > 0 && message.faultCopy !== true && random() < duplicateProbability) {
      // At-least-once delivery: the completion did not stick, so the same message comes again,
      // straight from the queue, not through the sender's duplicate detection.
      container.unshift({ ...message, lock: undefined, faultCopy: true });
      queue.activeCount += 1;
      queue.stats.redeliveredByFault += 1;
      notify(queue.name);
    }
    pruneSession(queue, message.sessionId);
  }

  function settleAbandon(entry: LockedEntry): void {
    entry.queue.stats.abandoned += 1;
    release(entry.queue, entry.message);
  }

  function settleDeadLetter(entry: LockedEntry, reason: string, description: string): void {
    moveToDeadLetter(entry.queue, entry.message, reason, description);
  }

  function renewLocked(entry: LockedEntry): number {
    const lock = entry.message.lock;
    if (!lock) throw new MessageLockLostError(`message ${entry.message.messageId} is not locked`);
    lock.lockedUntil = lockTaken(now() + entry.queue.settings.lockDurationMs);
    scheduleWakeUp();
    return lock.lockedUntil;
  }

  /** Locks the session for a new receiver. */
  function createSessionReceiver(queue: QueueState, session: SessionState): SessionReceiver {
    receiverCounter += 1;
    const receiverId = receiverCounter;
    const held: HeldSession = { queue, session };
    let closed = false;
    session.lock = { receiverId, lockedUntil: lockTaken(now() + queue.settings.lockDurationMs) };
    heldSessions.add(held);
    scheduleWakeUp();

    function assertHeld(): SessionLock {
      expireLocks();
      const lock = session.lock;
      if (closed || !lock || lock.receiverId !== receiverId) {
        throw new SessionLockLostError(`the lock on session ${session.id} of ${queue.name} was lost`);
      }
      return lock;
    }

    function renew(lock: SessionLock): number {
      lock.lockedUntil = lockTaken(now() + queue.settings.lockDurationMs);
      scheduleWakeUp();
      return lock.lockedUntil;
    }

    function entryInSession(received: ReceivedMessage): LockedEntry {
      const entry = lockedEntryOf(received);
      if (entry.queue !== queue || entry.message.sessionId !== session.id) {
        throw new PermanentError(
          'wrong-session',
          `message ${received.messageId} does not belong to session ${session.id} of ${queue.name}`,
        );
      }
      return entry;
    }

    /** Settles under the session lock, which each settlement renews. */
    function settle(received: ReceivedMessage, action: (entry: LockedEntry) => void): void {
      const lock = assertHeld();
      const entry = entryInSession(received);
      takeLock(entry, received);
      action(entry);
      renew(lock);
    }

    return {
      queue: queue.name,
      sessionId: session.id,
      lockDurationMs: queue.settings.lockDurationMs,
      receive(): ReceivedMessage | undefined {
        const lock = assertHeld();
        renew(lock);
        const head = session.messages[0];
        if (!head || head.lock) return undefined;
        const received = lockMessage(queue, head);
        scheduleWakeUp();
        return received;
      },
      complete(received: ReceivedMessage): void {
        settle(received, completeLocked);
      },
      abandon(received: ReceivedMessage): void {
        settle(received, settleAbandon);
      },
      deadLetter(received: ReceivedMessage, reason: string, description: string): void {
        settle(received, (entry) => settleDeadLetter(entry, reason, description));
      },
      renewMessageLock(received: ReceivedMessage): number {
        const lock = assertHeld();
        renew(lock);
        return renewLocked(entryInSession(received));
      },
      renewSessionLock(): number {
        return renew(assertHeld());
      },
      close(): void {
        if (closed) return;
        closed = true;
        expireLocks();
        if (session.lock?.receiverId !== receiverId) return;
        session.lock = undefined;
        heldSessions.delete(held);
        pruneSession(queue, session.id);
        offerSession(queue, session.id);
        if (isSessionAvailable(session)) notify(queue.name);
        scheduleWakeUp();
      },
    };
  }

  function withoutSessions(name: string): QueueState {
    const queue = queueOf(name);
    if (queue.settings.requiresSession) {
      throw new PermanentError('session-required', `queue ${name} requires sessions: accept a session first`);
    }
    return queue;
  }

  function nonSessionEntry(received: ReceivedMessage): LockedEntry {
    withoutSessions(received.queue);
    expireLocks();
    return lockedEntryOf(received);
  }

  function accept(queue: QueueState, message: BrokerOutgoingMessage, at: number): void {
    if (queue.settings.duplicateDetection) {
      const windowStart = at - queue.settings.duplicateDetectionWindowMs;
      for (const [id, seenAt] of queue.seenMessageIds) {
        if (seenAt > windowStart) break;
        queue.seenMessageIds.delete(id);
      }
      if (queue.seenMessageIds.has(message.messageId)) {
        queue.stats.duplicatesDetected += 1;
        return;
      }
      queue.seenMessageIds.set(message.messageId, at);
    }
    queue.nextSequenceNumber += 1;
    const stored: StoredMessage = {
      messageId: message.messageId,
      sessionId: message.sessionId,
      body: cloneBody(message.body),
      correlationId: message.correlationId,
      subject: message.subject,
      contentType: message.contentType,
      applicationProperties: { ...(message.applicationProperties ?? {}) },
      sequenceNumber: queue.nextSequenceNumber,
      enqueuedTimeUtc: at,
      deliveryCount: 0,
      lock: undefined,
    };
    // A session that already had messages was offered when its first one came.
    if (containerOf(queue, stored).push(stored) === 1) offerSession(queue, stored.sessionId);
    queue.activeCount += 1;
    queue.stats.sent += 1;
  }

  function allActive(queue: QueueState): StoredMessage[] {
    if (!queue.settings.requiresSession) return [...queue.messages];
    const all: StoredMessage[] = [];
    for (const session of queue.sessions.values()) all.push(...session.messages);
    return all.sort((a, b) => a.sequenceNumber - b.sequenceNumber);
  }

  return {
    createQueue(name: string, queueOptions: QueueOptions = {}): QueueSettings {
      if (queues.has(name)) throw new PermanentError('queue-exists', `queue ${name} already exists`);
      const settings = resolveSettings(queueOptions);
      queues.set(name, {
        name,
        settings,
        nextSequenceNumber: 0,
        messages: [],
        sessions: new Map(),
        offers: [],
        lastAccepted: new Map(),
        deadLetters: [],
        seenMessageIds: new Map(),
        activeCount: 0,
        stats: emptyStats(),
      });
      return { ...settings };
    },

    queueSettings(name: string): QueueSettings {
      return { ...queueOf(name).settings };
    },

    queueNames(): string[] {
      return [...queues.keys()];
    },

    async send(name: string, messages: readonly BrokerOutgoingMessage[]): Promise<void> {
      expireLocks();
      const queue = queueOf(name);
      // Checked before anything is accepted: a refused call leaves the queue as it was.
      for (const message of messages) {
        checkId('messageId', message.messageId, message.messageId);
        checkId('sessionId', message.sessionId, message.messageId);
        if (queue.settings.requiresSession && message.sessionId === undefined) {
          throw new PermanentError(
            'session-id-required',
            `queue ${name} requires sessions; message ${message.messageId} has no sessionId`,
          );
        }
      }
      const batches = countBatches(messages, maxBatchBytes);
      queue.stats.sendCalls += batches;
      const at = now();
      const sentBefore = queue.stats.sent;
      for (const message of messages) accept(queue, message, at);
      if (queue.stats.sent > sentBefore) notify(name);
    },

    acceptNextSession(name: string): SessionReceiver | undefined {
      expireLocks();
      const queue = queueOf(name);
      if (!queue.settings.requiresSession) {
        throw new PermanentError('not-a-session-queue', `queue ${name} has no sessions`);
      }
      const chosen = nextAvailableSession(queue);
      if (!chosen) return undefined;
      acceptCounter += 1;
      chosen.accepted = acceptCounter;
      queue.lastAccepted.set(chosen.id, acceptCounter);
      return createSessionReceiver(queue, chosen);
    },

    receive(name: string): ReceivedMessage | undefined {
      expireLocks();
      const queue = withoutSessions(name);
      const next = queue.messages.find((message) => message.lock === undefined);
      if (!next) return undefined;
      const received = lockMessage(queue, next);
      scheduleWakeUp();
      return received;
    },

    receiveBySequenceNumber(name: string, sequenceNumber: number): ReceivedMessage | undefined {
      expireLocks();
      const queue = withoutSessions(name);
      const chosen = queue.messages.find(
        (message) => message.sequenceNumber === sequenceNumber && message.lock === undefined,
      );
      if (!chosen) return undefined;
      const received = lockMessage(queue, chosen);
      scheduleWakeUp();
      return received;
    },

    complete(received: ReceivedMessage): void {
      const entry = nonSessionEntry(received);
      takeLock(entry, received);
      completeLocked(entry);
    },

    abandon(received: ReceivedMessage): void {
      const entry = nonSessionEntry(received);
      takeLock(entry, received);
      settleAbandon(entry);
    },

    deadLetter(received: ReceivedMessage, reason: string, description: string): void {
      const entry = nonSessionEntry(received);
      takeLock(entry, received);
      settleDeadLetter(entry, reason, description);
    },

    renewMessageLock(received: ReceivedMessage): number {
      return renewLocked(nonSessionEntry(received));
    },

    peek(name: string): PeekedMessage[] {
      expireLocks();
      return allActive(queueOf(name)).map((message) => ({
        messageId: message.messageId,
        sessionId: message.sessionId,
        body: structuredClone(message.body),
        correlationId: message.correlationId,
        subject: message.subject,
        applicationProperties: { ...message.applicationProperties },
        sequenceNumber: message.sequenceNumber,
        enqueuedTimeUtc: message.enqueuedTimeUtc,
        deliveryCount: message.deliveryCount,
        locked: message.lock !== undefined,
      }));
    },

    deadLetters(name: string): DeadLetteredMessage[] {
      expireLocks();
      return queueOf(name).deadLetters.map((message) => ({
        ...message,
        body: structuredClone(message.body),
        applicationProperties: { ...message.applicationProperties },
      }));
    },

    takeDeadLetter(name: string, sequenceNumber: number): DeadLetteredMessage | undefined {
      const deadLetters = queueOf(name).deadLetters;
      const index = deadLetters.findIndex((message) => message.sequenceNumber === sequenceNumber);
      if (index < 0) return undefined;
      const [taken] = deadLetters.splice(index, 1);
      return {
        ...taken,
        body: structuredClone(taken.body),
        applicationProperties: { ...taken.applicationProperties },
      };
    },

    sessions(name: string): SessionBacklog[] {
      expireLocks();
      return [...queueOf(name).sessions.values()].map((session) => ({
        sessionId: session.id,
        pending: session.messages.length,
        locked: session.lock !== undefined,
      }));
    },

    stats(): Record<string, QueueStats> {
      expireLocks();
      const result: Record<string, QueueStats> = {};
      for (const queue of queues.values()) result[queue.name] = { ...queue.stats };
      return result;
    },

    isIdle(names?: readonly string[]): boolean {
      expireLocks();
      const selected = names ? names.map(queueOf) : [...queues.values()];
      return selected.every((queue) => queue.activeCount === 0);
    },

    onAvailable(listener: AvailabilityListener): () => void {
      listeners.add(listener);
      scheduleWakeUp();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) clearWakeUp();
      };
    },

    close(): void {
      listeners.clear();
      clearWakeUp();
    },
  };
}
