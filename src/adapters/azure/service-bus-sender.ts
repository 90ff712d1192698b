/**
 * The MessageSender port on `@azure/service-bus` (docs/architecture.md decision 1): the Functions output binding
 * cannot set messageId or sessionId. Messages are packed in order into as few batches as the
 * namespace's size limit allows. Mixed session ids in one batch are fine on the non-partitioned
 * queues the Bicep creates; a partitioned queue would need one batch per session.
 */
import type { TokenCredential } from '@azure/identity';
import {
  isServiceBusError,
  ServiceBusClient,
  type ServiceBusMessage,
  type ServiceBusMessageBatch,
  type ServiceBusSender,
} from '@azure/service-bus';
import { PermanentError, TransientError } from '../../domain/errors';
import type { MessageSender, OutgoingMessage } from '../../services/ports';

export interface ServiceBusSenderStats {
  sendCalls: number;
  messages: number;
}

export function toServiceBusMessage(message: OutgoingMessage): ServiceBusMessage {
  return {
    messageId: message.messageId,
    sessionId: message.sessionId,
    body: message.body,
    contentType: 'application/json',
    correlationId: message.correlationId,
    subject: message.subject,
    applicationProperties: message.applicationProperties,
  };
}

/**
 * Transient when Service Bus says so (or is busy, or timed out), or when the error is not one of
 * its own; permanent otherwise. `action` names what failed, e.g. `sending to parked`.
 */
export function classify(error: unknown, action: string): Error {
  if (isServiceBusError(error)) {
    if (error.retryable || error.code === 'ServiceBusy' || error.code === 'ServiceTimeout') {
      return new TransientError('bus-unavailable', `${action} failed: ${error.message}`, {
        cause: error,
      });
    }
    return new PermanentError('bus-error', `${action} failed (${error.code}): ${error.message}`, {
      cause: error,
    });
  }
  return new TransientError('bus-unavailable', `${action} failed: ${String(error)}`, {
    cause: error,
  });
}

export function createServiceBusSender(
  fullyQualifiedNamespace: string,
  credential: TokenCredential,
): MessageSender & { stats: ServiceBusSenderStats; close(): Promise<void> } {
  const client = new ServiceBusClient(fullyQualifiedNamespace, credential);
  const senders = new Map<string, ServiceBusSender>();
  const stats: ServiceBusSenderStats = { sendCalls: 0, messages: 0 };

  const senderFor = (queue: string): ServiceBusSender => {
    let sender = senders.get(queue);
    if (sender === undefined) {
      sender = client.createSender(queue);
      senders.set(queue, sender);
    }
    return sender;
  };

  const flush = async (sender: ServiceBusSender, batch: ServiceBusMessageBatch): Promise<void> => {
    await sender.sendMessages(batch);
    stats.sendCalls += 1;
    stats.messages += batch.count;
  };

  return {
    stats,
    async send(queue, messages) {
      if (messages.length === 0) return;
      const sender = senderFor(queue);
      try {
        let batch = await sender.createMessageBatch();
        for (const message of messages) {
          const converted = toServiceBusMessage(message);
          if (batch.tryAddMessage(converted)) continue;
          if (batch.count === 0) {
            throw new PermanentError(
              'message-too-large',
              `message ${message.messageId} does not fit in a batch of ${batch.maxSizeInBytes} bytes`,
            );
          }
          await flush(sender, batch);
          batch = await sender.createMessageBatch();
          if (!batch.tryAddMessage(converted)) {
            throw new PermanentError(
              'message-too-large',
              `message ${message.messageId} does not fit in a batch of ${batch.maxSizeInBytes} bytes`,
            );
          }
        }
        if (batch.count > 0) await flush(sender, batch);
      } catch (error) {
        if (error instanceof PermanentError) throw error;
        throw classify(error, `sending to ${queue}`);
      }
    },
    async close() {
      await Promise.all([...senders.values()].map((sender) => sender.close()));
      await client.close();
    },
  };
}
