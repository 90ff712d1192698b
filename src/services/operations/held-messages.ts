/**
 * Reading a held message's park record and building the message its replay sends. Pure, and
 * shared by every MessageOperations implementation, so that the embedded and the Azure replay send
 * exactly the same thing.
 */
import { PARK_PROPERTY, QUEUE } from '../queues';
import type { ApplicationProperties, OutgoingMessage } from '../ports';
import {
  isOperableQueue,
  type DeadLetteredMessage,
  type OperableQueue,
  type ParkInfo,
  type ParkedMessage,
} from './message-operations-port';
import { setOwn } from '../../domain/own-properties';

/** The properties `parkedMessage` adds that belong to the park, not to the message. */
const PARK_ONLY_PROPERTIES: readonly string[] = [
  PARK_PROPERTY.reason,
  PARK_PROPERTY.description,
  PARK_PROPERTY.queue,
  PARK_PROPERTY.sessionId,
];

/** Queues whose messages must carry a sessionId (docs/messages.md). */
const SESSION_QUEUES: readonly string[] = [QUEUE.ledger, QUEUE.orderTransactions];

function text(value: string | number | boolean | undefined): string | null {
  return value === undefined ? null : String(value);
}

export function parkInfoOf(properties: ApplicationProperties): ParkInfo {
  return {
    reason: text(properties[PARK_PROPERTY.reason]) ?? 'unknown',
    description: text(properties[PARK_PROPERTY.description]) ?? '',
    fromQueue: text(properties[PARK_PROPERTY.queue]),
    fromSessionId: text(properties[PARK_PROPERTY.sessionId]),
    transactionId: text(properties[PARK_PROPERTY.transactionId]),
  };
}

/**
 * The message's own application properties. `transactionId` stays: a message on
 * `order-transactions` carried it before it was parked, and for one that did not it is harmless.
 */
export function withoutParkProperties(properties: ApplicationProperties): ApplicationProperties {
  const kept: ApplicationProperties = {};
  for (const [name, value] of Object.entries(properties)) {
    if (!PARK_ONLY_PROPERTIES.includes(name)) setOwn(kept, name, value);
  }
  return kept;
}

/**
 * A ledger entry parked on its own (`ledger.ts` parks it as `<batchId>#<index>` with `batchId` and
 * `entryIndex`): its body is an excerpt of a batch, not a message of any queue.
 */
export function parkedLedgerEntry(message: ParkedMessage): { batchId: string; entryIndex: number } | null {
  const { batchId, entryIndex } = message.applicationProperties;
  if (message.park.fromQueue !== QUEUE.ledger) return null;
  if (typeof batchId !== 'string' || typeof entryIndex !== 'number') return null;
  return { batchId, entryIndex };
}

/** Service Bus's longest messageId (Microsoft Learn, "Service Bus quotas": 128 characters). */
const MAX_MESSAGE_ID_LENGTH = 128;

/**
 * The messageId an entry's replay travels under on `order-transactions`: fresh, so that the queue's
 * duplicate detection (docs/messages.md: 1 hour in the Bicep) does not drop it as the copy it is, and a
 * replay works at once. The consumer still knows the entry, by its business identity (transactionId
 * and digest, which its transaction record holds). One id per held copy (`d` dead-lettered, `p` parked, and its
 * sequence number), so a replay sent twice is still one message.
 */
export function replayMessageId(message: ParkedMessage | DeadLetteredMessage): string {
  const prefix = `replay-${message.kind === 'parked' ? 'p' : 'd'}${message.sequenceNumber}:`;
  return (prefix + message.messageId).slice(0, MAX_MESSAGE_ID_LENGTH);
}

export type ReplayTarget =
  { ok: true; queue: OperableQueue; message: OutgoingMessage } | { ok: false; reason: string };

export function replayTargetOf(message: ParkedMessage | DeadLetteredMessage): ReplayTarget {
  return message.kind === 'parked' ? parkedReplayTarget(message) : deadLetteredReplayTarget(message);
}

function parkedReplayTarget(message: ParkedMessage): ReplayTarget {
  const { fromQueue, fromSessionId } = message.park;
  if (fromQueue === null || !isOperableQueue(fromQueue) || fromQueue === QUEUE.parked) {
    return {
      ok: false,
      reason: `parked message ${message.messageId} records no queue it came from (parkedFromQueue is ${fromQueue ?? 'missing'})`,
    };
  }
  if (SESSION_QUEUES.includes(fromQueue) && fromSessionId === null) {
    return {
      ok: false,
      reason: `parked message ${message.messageId} came from session queue ${fromQueue} but records no parkedFromSessionId`,
    };
  }
  const entry = parkedLedgerEntry(message);
  return {
    ok: true,
    queue: fromQueue,
    message: {
      messageId: fromQueue === QUEUE.orderTransactions ? replayMessageId(message) : message.messageId,
      ...(fromSessionId === null ? {} : { sessionId: fromSessionId }),
      // Sent as the batch of that one entry it was cut from, so the ledger processor handles it
      // as it would have; the entry verbatim would only be parked whole as "not a batch".
      body: entry === null ? message.body : { batchId: entry.batchId, entries: [message.body] },
      ...(message.correlationId === null ? {} : { correlationId: message.correlationId }),
      // The subject is left out: the park replaced the original one with the reason.
      applicationProperties: withoutParkProperties(message.applicationProperties),
    },
  };
}

function deadLetteredReplayTarget(message: DeadLetteredMessage): ReplayTarget {
  if (SESSION_QUEUES.includes(message.queue) && message.sessionId === null) {
    return {
      ok: false,
      reason: `dead-lettered message ${message.messageId} of session queue ${message.queue} has no sessionId`,
    };
  }
  return {
    ok: true,
    queue: message.queue,
    message: {
      messageId: message.queue === QUEUE.orderTransactions ? replayMessageId(message) : message.messageId,
      ...(message.sessionId === null ? {} : { sessionId: message.sessionId }),
      body: message.body,
      ...(message.correlationId === null ? {} : { correlationId: message.correlationId }),
      ...(message.subject === null ? {} : { subject: message.subject }),
      applicationProperties: { ...message.applicationProperties },
    },
  };
}

/** How an operator sees a held message in a listing: everything but the body, times as ISO text. */
export function summaryOf(message: ParkedMessage | DeadLetteredMessage): Record<string, unknown> {
  const common = {
    messageId: message.messageId,
    sessionId: message.sessionId,
    sequenceNumber: message.sequenceNumber,
    enqueuedTimeUtc: new Date(message.enqueuedTimeUtc).toISOString(),
    deliveryCount: message.deliveryCount,
  };
  return message.kind === 'parked'
    ? { ...common, park: message.park }
    : {
        ...common,
        queue: message.queue,
        deadLetterReason: message.deadLetterReason,
        deadLetterDescription: message.deadLetterDescription,
      };
}

/** One held message in full: the summary plus what a replay would send. */
export function detailOf(message: ParkedMessage | DeadLetteredMessage): Record<string, unknown> {
  return {
    ...summaryOf(message),
    correlationId: message.correlationId,
    subject: message.subject,
    applicationProperties: message.applicationProperties,
    body: message.body,
  };
}
