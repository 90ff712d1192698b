/**
 * What the embedded Service Bus broker shows the outside: its options, the messages receivers get,
 * the settlement errors, and the broker and session-receiver interfaces (docs/messages.md).
 */
import { TransientError } from '../../src/domain/errors';
import type { ApplicationProperties, MessageSender, OutgoingMessage } from '../../src/services/ports';

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
  /**
   * The duplicate fault's draw for one message, from its queue and messageId; when given it is used
   * instead of `random`, so which messages come again does not depend on the order completions happen
   * in across concurrent sessions, and one seed gives one run.
   */
  draw?: (key: string) => number;
  faults?: BrokerFaults;
  maxBatchBytes?: number;
}

/** A message as a receiver gets it: a copy, so a handler cannot change what would be redelivered. */
/** What every view of a message in the broker carries: what was sent, and what the broker added. */
export interface BrokerMessageFields {
  readonly messageId: string;
  readonly sessionId: string | undefined;
  readonly body: unknown;
  readonly correlationId: string | undefined;
  readonly subject: string | undefined;
  readonly applicationProperties: ApplicationProperties;
  readonly sequenceNumber: number;
  /** Milliseconds since the epoch, by the broker's clock. */
  readonly enqueuedTimeUtc: number;
  readonly deliveryCount: number;
}

export interface ReceivedMessage extends BrokerMessageFields {
  readonly queue: string;
  readonly contentType: string | undefined;
  readonly lockToken: string;
  /** When the lock was taken; renewals move the real deadline, not this copy. */
  readonly lockedUntil: number;
}

export interface PeekedMessage extends BrokerMessageFields {
  readonly locked: boolean;
}

export interface BrokerDeadLetter extends BrokerMessageFields {
  readonly queue: string;
  readonly contentType: string | undefined;
  readonly deadLetterReason: string;
  readonly deadLetterErrorDescription: string;
  readonly deadLetteredAtUtc: number;
}

export interface BrokerSessionBacklog {
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
  /**
   * The host's auto lock renewal: from now until `maxDurationMs` has passed, the session lock and
   * the lock of the message in flight hold without explicit renewals, however busy the worker's
   * event loop is. On Azure the Functions host (a .NET process, not the Node worker) renews them
   * through ServiceBusSessionProcessor, for at most `maxAutoLockRenewalDuration` (host.json;
   * default 5 minutes: learn.microsoft.com/dotnet/api/azure.messaging.servicebus.
   * servicebussessionprocessoroptions.maxautolockrenewalduration). Past it the lock runs out and
   * the messages come back. The returned stop ends the renewal: what is still locked then holds
   * one more lock duration, as after the host's last renewal.
   */
  autoRenew(maxDurationMs: number): () => void;
  /** Releases the session; a message still locked stays locked until its lock expires. */
  close(): void;
}

export type AvailabilityListener = (queue: string) => void;

/**
 * What one `send` did with each of its messages, in order. Service Bus answers a send whose
 * messageId its duplicate detection remembers as a success and drops the message
 * (https://learn.microsoft.com/azure/service-bus-messaging/duplicate-detection), so a sender on
 * Azure cannot tell; the embedded broker says so per message, for whoever must decide by its own
 * message's fate (an operator's replay, the run report's account).
 */
export interface SentMessage {
  messageId: string;
  droppedAsDuplicate: boolean;
}

export interface EmbeddedBroker extends MessageSender {
  createQueue(name: string, options?: QueueOptions): QueueSettings;
  queueSettings(queue: string): QueueSettings;
  queueNames(): string[];
  send(queue: string, messages: readonly BrokerOutgoingMessage[]): Promise<void>;
  /** `send`, saying of each message whether duplicate detection dropped it. */
  sendAndReport(queue: string, messages: readonly BrokerOutgoingMessage[]): Promise<SentMessage[]>;
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
  /** The host's auto lock renewal of one message of a queue without sessions; see SessionReceiver. */
  autoRenewMessageLock(message: ReceivedMessage, maxDurationMs: number): () => void;
  peek(queue: string): PeekedMessage[];
  deadLetters(queue: string): BrokerDeadLetter[];
  /** Removes one message from the dead-letter sub-queue (an operator replayed it); undefined if gone. */
  takeDeadLetter(queue: string, sequenceNumber: number): BrokerDeadLetter | undefined;
  sessions(queue: string): BrokerSessionBacklog[];
  stats(): Record<string, QueueStats>;
  /**
   * Messages waiting or locked in a queue: Service Bus's active message count (@azure/service-bus
   * `ServiceBusAdministrationClient.getQueueRuntimeProperties`, `activeMessageCount`; Learn,
   * "Service Bus message count"), dead letters not included.
   */
  activeMessageCount(queue: string): number;
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
