/**
 * Moving a message that can never succeed aside, so it neither burns retries nor stalls its session
 * (docs/architecture.md decision 2). The parked copy keeps body, messageId, correlation and application properties,
 * and records where it came from so an operator can replay it into the same queue and session.
 */
import { canonicalJson, sha256Hex } from '../../domain/digest';
import type { ParkReason } from '../../domain/order';
import { PARK_PROPERTY, QUEUE } from '../queues';
import type {
  ApplicationProperties,
  DeliveredMessage,
  MessageSender,
  OutgoingMessage,
  Telemetry,
} from '../ports';
import { DEFAULT_MAX_MESSAGE_BYTES, estimateMessageBytes } from '../message-size';

export interface ParkRequest {
  fromQueue: string;
  messageId: string;
  sessionId: string | undefined;
  body: unknown;
  correlationId?: string;
  applicationProperties?: ApplicationProperties;
  transactionId: string | null;
  reason: ParkReason;
  description: string;
}

/** The park of a delivered message as it came, for a reason found in it. */
export function parkRequestOf(
  fromQueue: string,
  message: DeliveredMessage,
  why: Pick<ParkRequest, 'reason' | 'description' | 'transactionId'>,
): ParkRequest {
  return {
    fromQueue,
    messageId: message.messageId,
    sessionId: message.sessionId,
    body: message.body,
    correlationId: message.correlationId,
    applicationProperties: message.applicationProperties,
    transactionId: why.transactionId,
    reason: why.reason,
    description: why.description,
  };
}

/**
 * The `messageId` a park made by the ledger gets: from what is parked, so that the same content
 * parks once (the `parked` queue's duplicate detection drops a repeat) and different content never
 * collides, whatever the batch; short whatever the input (Service Bus ids are at most 128).
 */
export function parkIdFor(reason: ParkReason, content: unknown): string {
  return `${reason}:${sha256Hex(canonicalJson(content) ?? 'undefined').slice(0, 32)}`;
}

/**
 * The parked copy of a message. It carries the original's body and properties and the park's own,
 * so a body that arrived near the queues' size limit can be over it in its parked copy: Service Bus
 * would refuse the park, and the message would dead-letter instead. Such a copy keeps what
 * identifies the body (its size and SHA-256) instead of the body, and its description says so.
 */
export function parkedMessage(
  request: ParkRequest,
  maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES,
): OutgoingMessage {
  const copy = parkedCopy(request);
  const bytes = estimateMessageBytes(copy);
  if (bytes <= maxMessageBytes) return copy;
  const bodyText = JSON.stringify(request.body) ?? '';
  return parkedCopy({
    ...request,
    body: {
      omitted: 'the parked body, over the size limit',
      bytes: Buffer.byteLength(bodyText, 'utf8'),
      sha256: sha256Hex(bodyText),
    },
    description: `${request.description}; its body is not kept: the parked copy would be about ${bytes} bytes, over the ${maxMessageBytes}-byte message limit`,
  });
}

function parkedCopy(request: ParkRequest): OutgoingMessage {
  const properties: ApplicationProperties = {
    ...request.applicationProperties,
    [PARK_PROPERTY.reason]: request.reason,
    [PARK_PROPERTY.description]: request.description,
    [PARK_PROPERTY.queue]: request.fromQueue,
  };
  if (request.sessionId !== undefined) properties[PARK_PROPERTY.sessionId] = request.sessionId;
  if (request.transactionId !== null) properties[PARK_PROPERTY.transactionId] = request.transactionId;
  return {
    messageId: request.messageId,
    body: request.body,
    correlationId: request.correlationId,
    subject: request.reason,
    applicationProperties: properties,
  };
}

/** Parks the messages in one send; the `parked` queue's duplicate detection absorbs a repeat. */
export async function park(
  deps: { sender: MessageSender; telemetry: Telemetry; maxMessageBytes?: number },
  requests: readonly ParkRequest[],
): Promise<void> {
  if (requests.length === 0) return;
  await deps.sender.send(
    QUEUE.parked,
    requests.map((request) => parkedMessage(request, deps.maxMessageBytes)),
  );
  for (const request of requests) {
    // Metric dimensions stay few (each value is a series); the ids go on the event.
    deps.telemetry.metric('messages.parked', 1, { reason: request.reason, queue: request.fromQueue });
    deps.telemetry.event('MessageParked', {
      reason: request.reason,
      queue: request.fromQueue,
      messageId: request.messageId,
      sessionId: request.sessionId,
      transactionId: request.transactionId,
      correlationId: request.correlationId,
      description: request.description,
    });
    if (request.reason === 'digest-mismatch') {
      deps.telemetry.event('Alert.DigestMismatch', {
        messageId: request.messageId,
        sessionId: request.sessionId,
        transactionId: request.transactionId,
        description: request.description,
      });
    }
  }
}
