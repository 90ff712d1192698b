/**
 * The MessageSender port on `@azure/service-bus` (docs/architecture.md decision 1): the Functions output binding
 * cannot set messageId or sessionId. Messages are packed in order into as few batches as the
 * namespace's size limit allows. Mixed session ids in one batch are fine on the non-partitioned
 * queues the Bicep creates; a partitioned queue would need one batch per session. One send, however
 * many batches it takes, is held to the call bound (src/adapters/handler-time.ts).
 */
import type { TokenCredential } from '@azure/identity';
import {
  ServiceBusClient,
  type ServiceBusMessage,
  type ServiceBusMessageBatch,
  type ServiceBusSender,
} from '@azure/service-bus';
import { AppError, PermanentError } from '../../domain/errors';
import type { MessageSender, OutgoingMessage } from '../../services/ports';
import { CALL_BOUND_MS, SERVICE_BUS_RETRY_OPTIONS } from '../handler-time';
import { withinCallBound } from './call-bound';
import { classify, senderRoleOn } from './service-bus-failures';

export { classify };

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

/** What the sender uses of a `ServiceBusClient`; a test hands in its own. */
export type SenderClient = Pick<ServiceBusClient, 'createSender' | 'close'>;

export interface ServiceBusSenderOptions {
  /** The most one send may take; `CALL_BOUND_MS` unless a test shortens it. */
  callBoundMs?: number;
  /** Made from the namespace and the credential unless given. */
  client?: SenderClient;
}

export function createServiceBusSender(
  fullyQualifiedNamespace: string,
  credential: TokenCredential,
  options: ServiceBusSenderOptions = {},
): MessageSender & { stats: ServiceBusSenderStats; close(): Promise<void> } {
  const client =
    options.client ??
    new ServiceBusClient(fullyQualifiedNamespace, credential, {
      retryOptions: { ...SERVICE_BUS_RETRY_OPTIONS },
    });
  const callBoundMs = options.callBoundMs ?? CALL_BOUND_MS;
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

  const flush = async (
    sender: ServiceBusSender,
    batch: ServiceBusMessageBatch,
    abortSignal: AbortSignal,
  ): Promise<void> => {
    await sender.sendMessages(batch, { abortSignal });
    stats.sendCalls += 1;
    stats.messages += batch.count;
  };

  return {
    stats,
    async send(queue, messages) {
      if (messages.length === 0) return;
      const sender = senderFor(queue);
      const action = `sending to ${queue}`;
      try {
        await withinCallBound(action, callBoundMs, async (abortSignal) => {
          let batch = await sender.createMessageBatch({ abortSignal });
          for (const message of messages) {
            const converted = toServiceBusMessage(message);
            if (batch.tryAddMessage(converted)) continue;
            if (batch.count === 0) {
              throw new PermanentError(
                'message-too-large',
                `message ${message.messageId} does not fit in a batch of ${batch.maxSizeInBytes} bytes`,
              );
            }
            await flush(sender, batch, abortSignal);
            batch = await sender.createMessageBatch({ abortSignal });
            if (!batch.tryAddMessage(converted)) {
              throw new PermanentError(
                'message-too-large',
                `message ${message.messageId} does not fit in a batch of ${batch.maxSizeInBytes} bytes`,
              );
            }
          }
          if (batch.count > 0) await flush(sender, batch, abortSignal);
        });
      } catch (error) {
        if (error instanceof AppError) throw error;
        throw classify(error, action, senderRoleOn(fullyQualifiedNamespace, queue));
      }
    },
    async close() {
      await Promise.all([...senders.values()].map((sender) => sender.close()));
      await client.close();
    },
  };
}
