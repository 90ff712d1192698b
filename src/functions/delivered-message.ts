/** What the Functions host passes with a Service Bus message, as the services' DeliveredMessage. */
import type { InvocationContext } from '@azure/functions';
import type { ApplicationProperties, DeliveredMessage } from '../services/ports';

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return undefined;
}

function properties(value: unknown): ApplicationProperties {
  if (typeof value !== 'object' || value === null) return {};
  const result: ApplicationProperties = {};
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
    const item = record[key];
    if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') result[key] = item;
  }
  return result;
}

export function deliveredMessage(body: unknown, context: InvocationContext): DeliveredMessage {
  const metadata = context.triggerMetadata ?? {};
  const sequenceNumber = Number(metadata.sequenceNumber);
  return {
    body,
    messageId: text(metadata.messageId) ?? context.invocationId,
    sessionId: text(metadata.sessionId),
    deliveryCount: Number(metadata.deliveryCount ?? 1),
    sequenceNumber: Number.isFinite(sequenceNumber) ? sequenceNumber : undefined,
    enqueuedTimeUtc: text(metadata.enqueuedTimeUtc),
    correlationId: text(metadata.correlationId),
    // The isolated worker names them applicationProperties; older extensions userProperties.
    applicationProperties: properties(metadata.applicationProperties ?? metadata.userProperties),
  };
}
