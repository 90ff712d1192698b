/**
 * How big a Service Bus message may be, and how big one is. The limit depends on the tier
 * (learn.microsoft.com/azure/service-bus-messaging/service-bus-quotas: "Maximum message size":
 * 256 KB on Standard, 100 MB on Premium with 1 MB the default for a queue's
 * maxMessageSizeInKilobytes), so it is a setting: the Bicep's `serviceBusSku` default (Standard,
 * bicep/main.bicep) and the embedded broker's default agree, and tests/contract holds them so.
 */
import type { OutgoingMessage } from './ports';

export const MAX_MESSAGE_BYTES_BY_TIER = { Standard: 262_144, Premium: 1_048_576 } as const;
export type ServiceBusTier = keyof typeof MAX_MESSAGE_BYTES_BY_TIER;
/** The tier the Bicep deploys by default. */
export const DEFAULT_SERVICE_BUS_TIER: ServiceBusTier = 'Standard';
export const DEFAULT_MAX_MESSAGE_BYTES = MAX_MESSAGE_BYTES_BY_TIER[DEFAULT_SERVICE_BUS_TIER];
/**
 * The limits a queue can have: Standard's fixed 256 KB, up to Premium's largest, 100 MB
 * (maxMessageSizeInKilobytes 1024 to 102400; the same quotas page, and "Large message support" in
 * learn.microsoft.com/azure/service-bus-messaging/service-bus-premium-messaging).
 */
export const MAX_MESSAGE_BYTES_RANGE = {
  min: MAX_MESSAGE_BYTES_BY_TIER.Standard,
  max: 102_400 * 1024,
} as const;

/** A message size limit given as text (app setting or flag); the problem in words when it is not one. */
export function parseMaxMessageBytes(
  raw: string,
): { ok: true; value: number } | { ok: false; problem: string } {
  const value = Number(raw);
  const { min, max } = MAX_MESSAGE_BYTES_RANGE;
  // Stryker disable next-line MethodExpression,StringLiteral: equivalent, Number('') and Number of blanks are 0, below the minimum, so value < min refuses such text anyway.
  if (raw.trim() === '' || !Number.isSafeInteger(value) || value < min || value > max) {
    return {
      ok: false,
      problem: `must be a whole number of bytes from ${min} (Standard) to ${max} (Premium's largest), got ${JSON.stringify(raw)}`,
    };
  }
  return { ok: true, value };
}

/** Headers, system properties and AMQP framing; a rough allowance, the same for every message. */
const MESSAGE_OVERHEAD_BYTES = 100;

/**
 * The size the sender accounts for a message: UTF-8 bytes of the JSON body, the ids and the JSON of
 * the application properties, plus a fixed overhead. An estimate of the embedded broker's own (and of
 * the input check in local/cli/input-file.ts, and of the ledger's too-large check); the Azure sender
 * fills each batch with the SDK's `tryAddMessage`, which measures the encoded AMQP message.
 */
export function estimateMessageBytes(message: OutgoingMessage): number {
  const bodyJson: string | undefined = JSON.stringify(message.body);
  return (
    Buffer.byteLength(bodyJson ?? '', 'utf8') +
    Buffer.byteLength(message.messageId, 'utf8') +
    Buffer.byteLength(message.sessionId ?? '', 'utf8') +
    // Stryker disable next-line StringLiteral: equivalent, JSON.stringify of an object always returns a string, so the '' is never reached ('utf8' → "" does not compile).
    Buffer.byteLength(JSON.stringify(message.applicationProperties ?? {}) ?? '', 'utf8') +
    MESSAGE_OVERHEAD_BYTES
  );
}
