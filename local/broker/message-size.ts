/**
 * Message sizes and ids as the embedded broker measures them before it accepts a send.
 */
import { PermanentError } from '../../src/domain/errors';
import type { OutgoingMessage } from '../../src/services/ports';
import { estimateMessageBytes, MAX_MESSAGE_BYTES_BY_TIER } from '../../src/services/message-size';

export { estimateMessageBytes };

/** The Standard tier's largest message batch. */
export const STANDARD_TIER_MAX_BATCH_BYTES = MAX_MESSAGE_BYTES_BY_TIER.Standard;

/**
 * A message over the queue's size limit, as @azure/service-bus refuses it: a ServiceBusError with
 * code `MessageSizeExceeded` (sdk/servicebus/service-bus/src/sender.ts, sendMessages; the service's
 * amqp:link:message-size-exceeded maps to the same code in serviceBusError.ts).
 */
export class MessageSizeExceededError extends PermanentError {
  readonly serviceBusCode = 'MessageSizeExceeded';
  constructor(
    readonly messageId: string,
    readonly bytes: number,
    readonly limitBytes: number,
  ) {
    // The app's code, the same the Azure sender adapter gives; Service Bus's beside it.
    super(
      'message-too-large',
      `message ${messageId} is about ${bytes} bytes, over the queue's ${limitBytes}-byte limit (MessageSizeExceeded)`,
    );
  }
}

/**
 * An id over 128 characters, refused before sending as @azure/service-bus does
 * (sdk/servicebus/service-bus/src/serviceBusMessage.ts, toRheaMessage: "Length of 'messageId'
 * property on the message cannot be greater than 128 characters.", likewise `sessionId`).
 */
export class ServiceBusIdTooLongError extends PermanentError {
  readonly serviceBusCode = 'GeneralError';
  constructor(
    readonly field: 'messageId' | 'sessionId',
    readonly messageId: string,
  ) {
    super(
      'id-too-long',
      `Length of '${field}' property on the message cannot be greater than ${MAX_SERVICE_BUS_ID_LENGTH} characters (message ${messageId.length > 40 ? `${messageId.slice(0, 40)}...` : messageId}).`,
    );
  }
}

/** Service Bus refuses longer message and session ids. */
export const MAX_SERVICE_BUS_ID_LENGTH = 128;

/** How many batches of at most `maxBatchBytes` the messages need, packed in order. */
export function countBatches(
  messages: readonly OutgoingMessage[],
  maxBatchBytes: number,
  sizeOf: (message: OutgoingMessage, index: number) => number = estimateMessageBytes,
): number {
  let batches = 0;
  let current = 0;
  for (const [index, message] of messages.entries()) {
    const size = sizeOf(message, index);
    if (size > maxBatchBytes) {
      throw new MessageSizeExceededError(message.messageId, size, maxBatchBytes);
    }
    if (batches === 0 || current + size > maxBatchBytes) {
      batches += 1;
      current = 0;
    }
    current += size;
  }
  return batches;
}

export function checkServiceBusId(
  kind: 'messageId' | 'sessionId',
  id: string | undefined,
  messageId: string,
): void {
  if (id !== undefined && id.length > MAX_SERVICE_BUS_ID_LENGTH)
    throw new ServiceBusIdTooLongError(kind, messageId);
}
