/** A parked message exactly as `park` writes it, read back as the operations see it. */
import { parkedMessage } from '../../src/services/convoy/parking';
import { parkInfoOf } from '../../src/services/operations/held-messages';
import type { ParkedMessage } from '../../src/services/operations/message-operations-port';

export function parkedAsRead(
  request: Parameters<typeof parkedMessage>[0],
  enqueuedTimeUtc = 1_700_000_000_000,
): ParkedMessage {
  const written = parkedMessage(request);
  const properties = written.applicationProperties ?? {};
  return {
    kind: 'parked',
    messageId: written.messageId,
    sessionId: null,
    body: written.body,
    correlationId: written.correlationId ?? null,
    subject: written.subject ?? null,
    applicationProperties: properties,
    sequenceNumber: '7',
    enqueuedTimeUtc,
    deliveryCount: 0,
    park: parkInfoOf(properties),
  };
}
