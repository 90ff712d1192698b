/**
 * The embedded broker's state and the moves every receiver shares: accepting a sent message,
 * locking one for delivery, settling it (complete, abandon, dead-letter), renewing its lock, and
 * what happens when a lock runs out. The broker and its session receivers are views on this.
 */
import { PermanentError } from '../../src/domain/errors';
import { releaseBody, withLazyBody, type HeldBody } from './clone-body';
import { LockTable, type HeldSession, type LockedEntry } from './locks';
import { Notifier } from './notifier';
import {
  containerOf,
  isSessionAvailable,
  offerSession,
  pruneSession,
  removeFrom,
  seenElseRemember,
  type QueueState,
  type StoredMessage,
} from './queue-state';
import {
  MAX_DELIVERY_COUNT_EXCEEDED,
  MessageLockLostError,
  type BrokerOutgoingMessage,
  type EmbeddedBrokerOptions,
  type ReceivedMessage,
} from './types';
import { STANDARD_TIER_MAX_BATCH_BYTES } from './message-size';

export class BrokerCore {
  readonly now: () => number;
  private readonly random: () => number;
  private readonly draw: ((key: string) => number) | undefined;
  private readonly duplicateProbability: number;
  readonly maxBatchBytes: number;
  readonly queues = new Map<string, QueueState>();
  readonly notifier = new Notifier();
  readonly locks: LockTable;
  private receiverCounter = 0;
  private acceptCounter = 0;

  constructor(options: EmbeddedBrokerOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.draw = options.draw;
    this.duplicateProbability = options.faults?.duplicate ?? 0;
    this.maxBatchBytes = options.maxBatchBytes ?? STANDARD_TIER_MAX_BATCH_BYTES;
    this.locks = new LockTable(
      this.now,
      () => this.notifier.listening,
      () => this.expireLocks(),
    );
  }

  nextReceiverId(): number {
    this.receiverCounter += 1;
    return this.receiverCounter;
  }

  nextAcceptance(): number {
    this.acceptCounter += 1;
    return this.acceptCounter;
  }

  queueOf(name: string): QueueState {
    const queue = this.queues.get(name);
    if (!queue) throw new PermanentError('unknown-queue', `queue ${name} does not exist`);
    return queue;
  }

  withoutSessions(name: string): QueueState {
    const queue = this.queueOf(name);
    if (queue.settings.requiresSession) {
      throw new PermanentError('session-required', `queue ${name} requires sessions: accept a session first`);
    }
    return queue;
  }

  // Expiry is lazy: every operation first settles what the clock has already decided.
  expireLocks(): void {
    this.locks.expire({
      message: (entry) => {
        entry.queue.stats.lockExpired += 1;
        this.release(entry.queue, entry.message);
      },
      session: (held) => this.sessionReleased(held),
    });
  }

  /** A session lock is gone (expired or closed): the session is offered again. */
  sessionReleased(held: HeldSession): void {
    pruneSession(held.queue, held.session.id);
    offerSession(held.queue, held.session.id);
    if (isSessionAvailable(held.session)) this.notifier.notify(held.queue.name);
  }

  moveToDeadLetter(queue: QueueState, message: StoredMessage, reason: string, description: string): void {
    removeFrom(containerOf(queue, message), message);
    queue.activeCount -= 1;
    queue.stats.deadLettered += 1;
    queue.deadLetters.push({
      queue: queue.name,
      messageId: message.messageId,
      sessionId: message.sessionId,
      body: releaseBody(message.body),
      correlationId: message.correlationId,
      subject: message.subject,
      contentType: message.contentType,
      applicationProperties: message.applicationProperties,
      sequenceNumber: message.sequenceNumber,
      enqueuedTimeUtc: message.enqueuedTimeUtc,
      deliveryCount: message.deliveryCount,
      deadLetterReason: reason,
      deadLetterErrorDescription: description,
      deadLetteredAtUtc: this.now(),
    });
    pruneSession(queue, message.sessionId);
  }

  /** Back at its place in the queue, or to the dead-letter queue when its deliveries are used up. */
  release(queue: QueueState, message: StoredMessage): void {
    message.lock = undefined;
    if (message.deliveryCount >= queue.settings.maxDeliveryCount) {
      this.moveToDeadLetter(
        queue,
        message,
        MAX_DELIVERY_COUNT_EXCEEDED,
        `Message could not be consumed after ${queue.settings.maxDeliveryCount} delivery attempts.`,
      );
    }
    offerSession(queue, message.sessionId);
    // Also when dead-lettered: a lock that expires into the dead-letter queue may leave the queue
    // idle, and whoever waits for that hears of it only this way.
    this.notifier.notify(queue.name);
  }

  lockMessage(queue: QueueState, message: StoredMessage): ReceivedMessage {
    const lock = {
      token: this.locks.nextToken(),
      lockedUntil: this.locks.taken(this.now() + queue.settings.lockDurationMs),
    };
    message.lock = lock;
    message.deliveryCount += 1;
    this.locks.addMessage(lock.token, { queue, message });
    const received = {
      queue: queue.name,
      messageId: message.messageId,
      sessionId: message.sessionId,
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
    return withLazyBody(received, message.body);
  }

  /** The live lock of a received message, checked to belong where the caller says it does. */
  lockedEntryOf(received: ReceivedMessage): LockedEntry {
    const entry = this.locks.message(received.lockToken);
    if (!entry) {
      throw new MessageLockLostError(
        `the lock on message ${received.messageId} in ${received.queue} expired or was already settled`,
      );
    }
    return entry;
  }

  /** The lock of a received message of a queue without sessions. */
  nonSessionEntry(received: ReceivedMessage): LockedEntry {
    this.withoutSessions(received.queue);
    this.expireLocks();
    return this.lockedEntryOf(received);
  }

  takeLock(entry: LockedEntry, received: ReceivedMessage): void {
    this.locks.deleteMessage(received.lockToken);
    entry.message.lock = undefined;
  }

  completeLocked(entry: LockedEntry): void {
    const { queue, message } = entry;
    const container = containerOf(queue, message);
    removeFrom(container, message);
    queue.activeCount -= 1;
    queue.stats.completed += 1;
    if (
      this.duplicateProbability > 0 &&
      message.faultCopy !== true &&
      (this.draw ? this.draw(`${queue.name}\u0000${message.messageId}`) : this.random()) <
        this.duplicateProbability
    ) {
      // At-least-once delivery: the completion did not stick, so the same message comes again,
      // straight from the queue, not through the sender's duplicate detection.
      container.unshift({ ...message, lock: undefined, faultCopy: true });
      queue.activeCount += 1;
      queue.stats.redeliveredByFault += 1;
      this.notifier.notify(queue.name);
    }
    pruneSession(queue, message.sessionId);
  }

  settleAbandon(entry: LockedEntry): void {
    entry.queue.stats.abandoned += 1;
    this.release(entry.queue, entry.message);
  }

  settleDeadLetter(entry: LockedEntry, reason: string, description: string): void {
    this.moveToDeadLetter(entry.queue, entry.message, reason, description);
  }

  renewLocked(entry: LockedEntry): number {
    const lock = entry.message.lock;
    if (!lock) throw new MessageLockLostError(`message ${entry.message.messageId} is not locked`);
    lock.lockedUntil = this.locks.taken(this.now() + entry.queue.settings.lockDurationMs);
    this.locks.scheduleWakeUp();
    return lock.lockedUntil;
  }

  /**
   * Holds a message's lock until `until` (auto renewal); `undefined` ends that, leaving the lock
   * one lock duration from now, as after a last renewal. A no-op once the lock is gone.
   */
  holdLock(entry: LockedEntry, token: string, until: number | undefined): void {
    const lock = entry.message.lock;
    if (!lock || lock.token !== token) return;
    const afterLastRenewal = this.now() + entry.queue.settings.lockDurationMs;
    lock.lockedUntil = this.locks.taken(
      until === undefined ? Math.min(lock.lockedUntil, afterLastRenewal) : Math.max(lock.lockedUntil, until),
    );
    this.locks.scheduleWakeUp();
  }

  /** Stores a sent message, unless duplicate detection has seen its id within the window: whether it did. */
  accept(queue: QueueState, message: BrokerOutgoingMessage, body: HeldBody, at: number): boolean {
    if (queue.settings.duplicateDetection && seenElseRemember(queue, message.messageId, at)) {
      queue.stats.duplicatesDetected += 1;
      return false;
    }
    queue.nextSequenceNumber += 1;
    const stored: StoredMessage = {
      messageId: message.messageId,
      sessionId: message.sessionId,
      body,
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
    return true;
  }
}
