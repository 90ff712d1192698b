/**
 * Message sizes and ids as the embedded broker measures them before it accepts a send.
 */
import { PermanentError } from '../../domain/errors';
import type { OutgoingMessage } from '../../services/ports';

/** The Standard tier's largest message batch. */
export const STANDARD_TIER_MAX_BATCH_BYTES = 262_144;

/** Service Bus refuses longer message and session ids. */
export const MAX_SERVICE_BUS_ID_LENGTH = 128;

/** Headers, system properties and AMQP framing; a rough allowance, the same for every message. */
const MESSAGE_OVERHEAD_BYTES = 100;

/**
 * The size the sender accounts for a message: UTF-8 bytes of the JSON body, the ids and the JSON of
 * the application properties, plus a fixed overhead. An estimate of the embedded broker's own (and of
 * the input check in src/cli/input-file.ts); the Azure sender does not use it, it fills each batch with
 * the SDK's `tryAddMessage`, which measures the encoded AMQP message.
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

export function checkServiceBusId(kind: string, id: string | undefined, messageId: string): void {
  if (id !== undefined && id.length > MAX_SERVICE_BUS_ID_LENGTH) {
    throw new PermanentError(
      'id-too-long',
      `${kind} of message ${messageId} is over ${MAX_SERVICE_BUS_ID_LENGTH} characters`,
    );
  }
}
