/**
 * MessageOperations on `@azure/service-bus`: peek to list, receive-and-find (peek-lock) to replay,
 * the administration client for a queue's counts only. What a replay needs of a queue (session or
 * not, its duplicate-detection window) comes from the code (QUEUE_FLAGS) and the settings the Bicep
 * writes, so replay needs Listen and Send and no Manage right. Errors are classified as the sender's.
 *
 * Finding one message by receiving has a cost the caller should know: every message received on the
 * way to it is abandoned, which raises its delivery count. On `parked` (which nothing else consumes)
 * a message passed over often enough moves to parked's own dead-letter queue, where `dlq replay
 * parked` puts it back. The scan is bounded for that reason.
 */
import type { TokenCredential } from '@azure/identity';
import {
  ServiceBusAdministrationClient,
  ServiceBusClient,
  type ServiceBusMessage,
  type ServiceBusReceivedMessage,
} from '@azure/service-bus';
import { AppError, PermanentError } from '../../domain/errors';
import { parkInfoOf, replayTargetOf } from '../../services/operations/held-messages';
import type {
  DeadLetteredMessage,
  DiscardOutcome,
  HeldMessage,
  Listing,
  MessageOperations,
  OperableQueue,
  ParkedMessage,
  QueueBacklog,
  ReplayDelivery,
} from '../../services/operations/message-operations-port';
import { sessionsOf } from '../../services/operations/message-operations-port';
import type { ApplicationProperties } from '../../services/ports';
import { QUEUE, QUEUE_FLAGS } from '../../services/queues';
import { DEFAULTS, isoDurationMs } from '../settings';
import { classify, toServiceBusMessage } from './service-bus-sender';
import { setOwn } from '../../domain/own-properties';

/** The fields of a received message the operations read; `ServiceBusReceivedMessage` has them all. */
export interface ReceivedLike {
  messageId?: string | number | Buffer;
  sessionId?: string;
  body: unknown;
  correlationId?: string | number | Buffer;
  subject?: string;
  applicationProperties?: { [key: string]: number | boolean | string | Date | null };
  /** A `Long`; only its decimal text is used, as a JS number cannot hold every value. */
  sequenceNumber?: { toString(): string };
  enqueuedTimeUtc?: Date;
  deliveryCount?: number;
  deadLetterReason?: string;
  deadLetterErrorDescription?: string;
}

export interface ReceiverLike<M extends ReceivedLike> {
  peekMessages(maxMessageCount: number): Promise<M[]>;
  receiveMessages(maxMessageCount: number, options: { maxWaitTimeInMs: number }): Promise<M[]>;
  completeMessage(message: M): Promise<void>;
  abandonMessage(message: M): Promise<void>;
  close(): Promise<void>;
}

/** The slice of the SDK the operations use; `connectServiceBus` gives the real one. */
export interface ServiceBusParts<M extends ReceivedLike> {
  createReceiver(
    queue: string,
    options: { receiveMode: 'peekLock'; subQueueType?: 'deadLetter' },
  ): ReceiverLike<M>;
  createSender(queue: string): {
    sendMessages(message: ServiceBusMessage): Promise<void>;
    close(): Promise<void>;
  };
  getQueueRuntimeProperties(
    queue: string,
  ): Promise<{ activeMessageCount: number; deadLetterMessageCount: number }>;
  close(): Promise<void>;
}

export interface ServiceBusOperationsOptions {
  /** Most messages a listing (or a lookup by id) peeks; a listing beyond it says it is truncated. */
  maxListed?: number;
  /** Most messages a replay receives while looking for the one to replay. */
  maxScanned?: number;
  /** How long one receive call waits for a first message. */
  receiveWaitMs?: number;
  /** The queues' duplicate-detection window (setting SERVICE_BUS_DUPLICATE_DETECTION_WINDOW). */
  duplicateDetectionWindowMs?: number;
}

const DEFAULT_MAX_LISTED = 500;
const DEFAULT_MAX_SCANNED = 200;
const DEFAULT_RECEIVE_WAIT_MS = 3000;
/** Page size of one peek or receive call. */
const PAGE = 50;

export function connectServiceBus(
  fullyQualifiedNamespace: string,
  credential: TokenCredential,
): ServiceBusParts<ServiceBusReceivedMessage> {
  const client = new ServiceBusClient(fullyQualifiedNamespace, credential);
  // A queue's counts are a management operation: the identity needs Data Owner (Manage) on the queue,
  // which the Bicep grants on each queue for the backlog and the scale controller (modules/roles.bicep).
  const admin = new ServiceBusAdministrationClient(fullyQualifiedNamespace, credential);
  return {
    createReceiver: (queue, options) => client.createReceiver(queue, options),
    createSender: (queue) => client.createSender(queue),
    getQueueRuntimeProperties: (queue) => admin.getQueueRuntimeProperties(queue),
    close: () => client.close(),
  };
}

function idText(id: string | number | Buffer | undefined): string | null {
  if (id === undefined) return null;
  return Buffer.isBuffer(id) ? id.toString('utf8') : String(id);
}

/** The port's properties hold strings, numbers and booleans: dates become ISO text, nulls go. */
export function portProperties(properties: ReceivedLike['applicationProperties']): ApplicationProperties {
  const result: ApplicationProperties = {};
  for (const [name, value] of Object.entries(properties ?? {})) {
    if (value === null) continue;
    setOwn(result, name, value instanceof Date ? value.toISOString() : value);
  }
  return result;
}

/** A field the broker sets on every message it hands out, missing: an error, never a made-up value. */
function brokerSet<T>(value: T | undefined, field: string, messageId: string): T {
  if (value === undefined) {
    throw new PermanentError(
      'malformed-message',
      `message ${messageId} came from Service Bus without ${field}`,
    );
  }
  return value;
}

/**
 * The port's view of a received or peeked message. Service Bus assigns the sequence number and the
 * enqueued time when it accepts a message and counts deliveries on every lock
 * (https://learn.microsoft.com/en-us/azure/service-bus-messaging/message-sequencing,
 * https://learn.microsoft.com/en-us/azure/service-bus-messaging/message-transfers-locks-settlement),
 * and this app sends every message with a messageId: one without them is refused, not given
 * `''` or 0, which would make two messages the same copy (isSameCopy) or date one at 1970.
 */
export function heldOf(message: ReceivedLike): HeldMessage {
  const messageId = brokerSet(idText(message.messageId) ?? undefined, 'messageId', '(without id)');
  return {
    messageId,
    sessionId: message.sessionId ?? null,
    body: message.body,
    correlationId: idText(message.correlationId),
    subject: message.subject ?? null,
    applicationProperties: portProperties(message.applicationProperties),
    sequenceNumber: brokerSet(message.sequenceNumber, 'sequenceNumber', messageId).toString(),
    enqueuedTimeUtc: brokerSet(message.enqueuedTimeUtc, 'enqueuedTimeUtc', messageId).getTime(),
    deliveryCount: brokerSet(message.deliveryCount, 'deliveryCount', messageId),
  };
}

export function parkedOfReceived(message: ReceivedLike): ParkedMessage {
  const held = heldOf(message);
  return { ...held, kind: 'parked', park: parkInfoOf(held.applicationProperties) };
}

export function deadLetteredOfReceived(queue: OperableQueue, message: ReceivedLike): DeadLetteredMessage {
  return {
    ...heldOf(message),
    kind: 'dead-lettered',
    queue,
    deadLetterReason: message.deadLetterReason ?? null,
    deadLetterDescription: message.deadLetterErrorDescription ?? null,
  };
}

/** The same copy: the id an operator names, and the sequence number the broker gave that copy. */
export function isSameCopy(received: ReceivedLike, held: HeldMessage): boolean {
  return (
    idText(received.messageId) === held.messageId &&
    received.sequenceNumber?.toString() === held.sequenceNumber
  );
}

/** `duplicateDetectionHistoryTimeWindow` is an ISO 8601 duration such as `PT1H` or `P1DT10M`. */
export function durationMs(duration: string): number {
  const ms = isoDurationMs(duration);
  if (ms === null) {
    throw new PermanentError('bad-duration', `cannot read the ISO 8601 duration ${JSON.stringify(duration)}`);
  }
  return ms;
}

const MANAGE_RIGHT_HINT =
  '; queue counts need the Manage right: Azure Service Bus Data Owner on the queue (the Bicep grants it)';

/** As the sender classifies bus errors; the administration client's are REST errors with a status. */
function classified(error: unknown, what: string): Error {
  if (error instanceof AppError) return error;
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status !== 408 && status !== 429 && status < 500) {
    const hint = status === 401 || status === 403 ? MANAGE_RIGHT_HINT : '';
    return new PermanentError('bus-error', `${what} failed (${status}): ${(error as Error).message}${hint}`, {
      cause: error,
    });
  }
  return classify(error, what);
}

async function call<T>(what: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw classified(error, what);
  }
}

/** The copy was not found within the scan (gone, or held by another receiver). */
const NOT_THERE: unique symbol = Symbol('not there');

export function createServiceBusOperations<M extends ReceivedLike>(
  parts: ServiceBusParts<M>,
  options: ServiceBusOperationsOptions = {},
): MessageOperations & { close(): Promise<void> } {
  const maxListed = options.maxListed ?? DEFAULT_MAX_LISTED;
  const maxScanned = options.maxScanned ?? DEFAULT_MAX_SCANNED;
  const receiveWaitMs = options.receiveWaitMs ?? DEFAULT_RECEIVE_WAIT_MS;
  const duplicateWindowMs =
    options.duplicateDetectionWindowMs ?? durationMs(DEFAULTS.duplicateDetectionWindow);

  const receiverOf = (queue: OperableQueue, deadLetter: boolean): ReceiverLike<M> =>
    parts.createReceiver(queue, {
      receiveMode: 'peekLock',
      ...(deadLetter ? { subQueueType: 'deadLetter' } : {}),
    });

  const entity = (queue: OperableQueue, deadLetter: boolean): string =>
    deadLetter ? `${queue}/$deadletterqueue` : queue;

  /** Peeks from the oldest message on; one past the bound tells that there are more. */
  async function peek(queue: OperableQueue, deadLetter: boolean): Promise<Listing<M>> {
    return call(`peeking ${entity(queue, deadLetter)}`, async () => {
      const receiver = receiverOf(queue, deadLetter);
      try {
        const seen: M[] = [];
        while (seen.length <= maxListed) {
          const page = await receiver.peekMessages(Math.min(PAGE, maxListed + 1 - seen.length));
          if (page.length === 0) break;
          seen.push(...page);
        }
        return { messages: seen.slice(0, maxListed), truncated: seen.length > maxListed };
      } finally {
        await receiver.close();
      }
    });
  }

  /**
   * Receives until it holds the copy (peek-lock: no other receiver gets it meanwhile, so a replay or
   * discard of it running elsewhere does not find it), runs `work`, then completes it. Whatever it
   * passed over, or the copy itself when `work` fails, is abandoned so it is available again at once.
   */
  async function holding<T>(
    queue: OperableQueue,
    deadLetter: boolean,
    message: ParkedMessage | DeadLetteredMessage,
    work: () => Promise<T>,
  ): Promise<T | typeof NOT_THERE> {
    const where = entity(queue, deadLetter);
    const receiver = receiverOf(queue, deadLetter);
    const passed: M[] = [];
    try {
      let scanned = 0;
      while (scanned < maxScanned) {
        const batch = await call(`receiving from ${where}`, () =>
          receiver.receiveMessages(Math.min(PAGE, maxScanned - scanned), { maxWaitTimeInMs: receiveWaitMs }),
        );
        if (batch.length === 0) break;
        scanned += batch.length;
        const found = batch.find((received) => isSameCopy(received, message));
        passed.push(...batch.filter((received) => received !== found));
        if (found === undefined) continue;
        let done: T;
        try {
          done = await work();
        } catch (error) {
          passed.push(found);
          throw error;
        }
        await call(`completing ${message.messageId} in ${where}`, () => receiver.completeMessage(found));
        return done;
      }
      return NOT_THERE;
    } finally {
      await Promise.allSettled(passed.map((received) => receiver.abandonMessage(received)));
      await receiver.close().catch(() => undefined);
    }
  }

  /** Sends the copy's replay while holding it, and removes it once sent. */
  async function takeAndReplay(
    queue: OperableQueue,
    deadLetter: boolean,
    message: ParkedMessage | DeadLetteredMessage,
  ): Promise<ReplayDelivery> {
    const target = replayTargetOf(message);
    if (!target.ok) throw new PermanentError('replay-target', target.reason);
    const delivery = await holding(queue, deadLetter, message, async (): Promise<ReplayDelivery> => {
      await send(target.queue, toServiceBusMessage(target.message));
      return {
        delivered: true,
        queue: target.queue,
        sessionId: target.message.sessionId ?? null,
        messageId: target.message.messageId,
      };
    });
    return delivery === NOT_THERE ? { delivered: false } : delivery;
  }

  async function takeAndDiscard(
    queue: OperableQueue,
    deadLetter: boolean,
    message: ParkedMessage | DeadLetteredMessage,
    keep: () => Promise<void>,
  ): Promise<DiscardOutcome> {
    const kept = await holding(queue, deadLetter, message, keep);
    return { discarded: kept !== NOT_THERE };
  }

  async function send(queue: OperableQueue, message: ServiceBusMessage): Promise<void> {
    const sender = parts.createSender(queue);
    try {
      await call(`sending to ${queue}`, () => sender.sendMessages(message));
    } finally {
      await sender.close().catch(() => undefined);
    }
  }

  const listParked = async (): Promise<Listing<ParkedMessage>> => {
    const listing = await peek(QUEUE.parked, false);
    return { messages: listing.messages.map(parkedOfReceived), truncated: listing.truncated };
  };

  const listDeadLettered = async (queue: OperableQueue): Promise<Listing<DeadLetteredMessage>> => {
    const listing = await peek(queue, true);
    return {
      messages: listing.messages.map((message) => deadLetteredOfReceived(queue, message)),
      truncated: listing.truncated,
    };
  };

  return {
    listParked,
    listDeadLettered,

    async findParked(messageId) {
      return (await listParked()).messages.find((message) => message.messageId === messageId);
    },

    async findDeadLettered(queue, messageId) {
      return (await listDeadLettered(queue)).messages.find((message) => message.messageId === messageId);
    },

    replayParked: (message) => takeAndReplay(QUEUE.parked, false, message),

    replayDeadLettered: (message) => takeAndReplay(message.queue, true, message),

    discardParked: (message, keep) => takeAndDiscard(QUEUE.parked, false, message, keep),

    discardDeadLettered: (message, keep) => takeAndDiscard(message.queue, true, message, keep),

    async backlog(queue): Promise<QueueBacklog> {
      const runtime = await call(`reading the counts of ${queue}`, () =>
        parts.getQueueRuntimeProperties(queue),
      );
      const settings = QUEUE_FLAGS[queue];
      let truncated = false;
      let active: Array<{ sessionId: string | undefined; enqueuedTimeUtc: number }> = [];
      if (runtime.activeMessageCount > 0) {
        // Peeking a session queue without a session lock takes no lock from the Functions host; the
        // service gives no per-session counts nor an oldest message's age, and calls this view best
        // effort. A peek starts at the oldest message, so the queue's oldest is right even when the
        // listing stops at its bound.
        const listing = await peek(queue, false);
        truncated = settings.requiresSession && listing.truncated;
        active = listing.messages.map((message) => ({
          sessionId: message.sessionId,
          enqueuedTimeUtc: brokerSet(
            message.enqueuedTimeUtc,
            'enqueuedTimeUtc',
            String(message.messageId),
          ).getTime(),
        }));
      }
      return {
        queue,
        activeMessages: runtime.activeMessageCount,
        deadLetteredMessages: runtime.deadLetterMessageCount,
        oldestEnqueuedTimeUtc:
          active.length === 0 ? null : Math.min(...active.map((message) => message.enqueuedTimeUtc)),
        sessions: settings.requiresSession ? sessionsOf(active) : [],
        truncated,
      };
    },

    async queueInfo(queue) {
      const flags = QUEUE_FLAGS[queue];
      return {
        requiresSession: flags.requiresSession,
        duplicateDetectionWindowMs: flags.requiresDuplicateDetection ? duplicateWindowMs : null,
      };
    },

    close: () => parts.close(),
  };
}
