/**
 * MessageOperations on the embedded broker: what an operator does on Azure, done to the broker that
 * runs inside the embedded app (and the tests).
 */
import { PermanentError } from '../../src/domain/errors';
import { parkInfoOf, replayTargetOf } from '../../src/services/operations/held-messages';
import type {
  DeadLetteredMessage,
  HeldMessage,
  Listing,
  MessageOperations,
  OperableQueue,
  ParkedMessage,
  QueueBacklog,
  ReplayDelivery,
} from '../../src/services/operations/message-operations-port';
import { sessionsOf } from '../../src/services/operations/message-operations-port';
import { QUEUE } from '../../src/services/queues';
import type { BrokerDeadLetter, EmbeddedBroker, PeekedMessage, ReceivedMessage } from '../broker/broker';

function held(message: PeekedMessage | BrokerDeadLetter): HeldMessage {
  return {
    messageId: message.messageId,
    sessionId: message.sessionId ?? null,
    body: message.body,
    correlationId: message.correlationId ?? null,
    subject: message.subject ?? null,
    applicationProperties: { ...message.applicationProperties },
    sequenceNumber: String(message.sequenceNumber),
    enqueuedTimeUtc: message.enqueuedTimeUtc,
    deliveryCount: message.deliveryCount,
  };
}

export function parkedOf(message: PeekedMessage): ParkedMessage {
  return { ...held(message), kind: 'parked', park: parkInfoOf(message.applicationProperties) };
}

export function deadLetteredOf(queue: OperableQueue, message: BrokerDeadLetter): DeadLetteredMessage {
  return {
    ...held(message),
    kind: 'dead-lettered',
    queue,
    deadLetterReason: message.deadLetterReason,
    deadLetterDescription: message.deadLetterErrorDescription,
  };
}

/**
 * The dead letters each broker has a replay under way for, as `<queue>\0<sequence number>`. On
 * Azure a replay receives the copy in peek-lock mode, which hides it from every other receiver until
 * it is completed or abandoned (src/adapters/azure/service-bus-operations.ts); the embedded
 * dead-letter queue has no locks, so a replay claims its copy here. Per broker, not per operations
 * object: the HTTP functions make one of those per call.
 */
const replaying = new WeakMap<EmbeddedBroker, Set<string>>();

function replayingOf(broker: EmbeddedBroker): Set<string> {
  let claims = replaying.get(broker);
  if (claims === undefined) {
    claims = new Set();
    replaying.set(broker, claims);
  }
  return claims;
}

/** The copy was no longer there to take. */
const NOT_THERE: unique symbol = Symbol('not there');

export function createEmbeddedOperations(broker: EmbeddedBroker): MessageOperations {
  const listParked = (): ParkedMessage[] => broker.peek(QUEUE.parked).map(parkedOf);
  const listDeadLettered = (queue: OperableQueue): DeadLetteredMessage[] =>
    broker.deadLetters(queue).map((message) => deadLetteredOf(queue, message));

  /**
   * Sends the replay and says whether the broker took it. Duplicate detection drops a known id
   * without an error, here as on Azure; the embedded broker says which message it dropped, and the
   * held copy must then stay where it is. Judged by this message alone: other sends to the queue
   * meanwhile (the app's own, a concurrent replay's) have their own fate.
   */
  async function send(message: ParkedMessage | DeadLetteredMessage): Promise<ReplayDelivery> {
    const target = replayTargetOf(message);
    if (!target.ok) throw new PermanentError('replay-target', target.reason);
    const [sent] = await broker.sendAndReport(target.queue, [target.message]);
    if (sent.droppedAsDuplicate) {
      throw new PermanentError(
        'replay-dropped',
        `${target.queue} dropped the replay of ${message.messageId} as a duplicate; it stays where it was`,
      );
    }
    return {
      delivered: true,
      queue: target.queue,
      sessionId: target.message.sessionId ?? null,
      messageId: target.message.messageId,
    };
  }

  /**
   * Locks this very copy in `parked` (by its sequence number), runs `work`, and removes the copy only
   * once `work` resolved; when it throws, the copy is given back. NOT_THERE: the copy is gone or
   * another replay or discard holds it.
   */
  async function holdingParked<T>(
    message: ParkedMessage,
    work: () => Promise<T>,
  ): Promise<T | typeof NOT_THERE> {
    const locked: ReceivedMessage | undefined = broker.receiveBySequenceNumber(
      QUEUE.parked,
      Number(message.sequenceNumber),
    );
    if (locked === undefined || locked.messageId !== message.messageId) {
      if (locked !== undefined) broker.abandon(locked);
      return NOT_THERE;
    }
    let done: T;
    try {
      done = await work();
    } catch (error) {
      broker.abandon(locked);
      throw error;
    }
    broker.complete(locked);
    return done;
  }

  /** As `holdingParked`, for a dead letter, claimed as the embedded dead-letter queue has no locks. */
  async function holdingDeadLetter<T>(
    message: DeadLetteredMessage,
    work: () => Promise<T>,
  ): Promise<T | typeof NOT_THERE> {
    const sequenceNumber = Number(message.sequenceNumber);
    const claims = replayingOf(broker);
    const copy = `${message.queue}\u0000${sequenceNumber}`;
    // Checked and claimed at once, before anything is awaited: a replay or discard of this copy
    // already under way has it, as a peek-lock receive on Azure would, and this one does nothing.
    const stillThere = broker
      .deadLetters(message.queue)
      .some((letter) => letter.sequenceNumber === sequenceNumber && letter.messageId === message.messageId);
    if (!stillThere || claims.has(copy)) return NOT_THERE;
    claims.add(copy);
    try {
      const done = await work();
      broker.takeDeadLetter(message.queue, sequenceNumber);
      return done;
    } finally {
      claims.delete(copy);
    }
  }

  return {
    async listParked(): Promise<Listing<ParkedMessage>> {
      return { messages: listParked(), truncated: false };
    },

    async listDeadLettered(queue): Promise<Listing<DeadLetteredMessage>> {
      return { messages: listDeadLettered(queue), truncated: false };
    },

    async findParked(messageId) {
      return listParked().find((message) => message.messageId === messageId);
    },

    async findDeadLettered(queue, messageId) {
      return listDeadLettered(queue).find((message) => message.messageId === messageId);
    },

    async replayParked(message) {
      const delivery = await holdingParked(message, () => send(message));
      return delivery === NOT_THERE ? { delivered: false } : delivery;
    },

    async replayDeadLettered(message) {
      const delivery = await holdingDeadLetter(message, () => send(message));
      return delivery === NOT_THERE ? { delivered: false } : delivery;
    },

    async discardParked(message, keep) {
      const discarded = await holdingParked(message, keep);
      return { discarded: discarded !== NOT_THERE };
    },

    async discardDeadLettered(message, keep) {
      const discarded = await holdingDeadLetter(message, keep);
      return { discarded: discarded !== NOT_THERE };
    },

    async backlog(queue): Promise<QueueBacklog> {
      // Every message of every session: the sessions' counts and oldest come from it.
      const active = broker.peek(queue);
      return {
        queue,
        activeMessages: active.length,
        deadLetteredMessages: broker.deadLetters(queue).length,
        oldestEnqueuedTimeUtc:
          active.length === 0 ? null : Math.min(...active.map((message) => message.enqueuedTimeUtc)),
        sessions: broker.queueSettings(queue).requiresSession ? sessionsOf(active) : [],
        truncated: false,
      };
    },

    async queueInfo(queue) {
      const settings = broker.queueSettings(queue);
      return {
        requiresSession: settings.requiresSession,
        duplicateDetectionWindowMs: settings.duplicateDetection ? settings.duplicateDetectionWindowMs : null,
      };
    },
  };
}
