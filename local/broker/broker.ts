/**
 * The embedded Service Bus broker: queues with sessions, duplicate detection, peek-lock delivery,
 * lock expiry and dead-lettering, with the semantics of docs/messages.md. Locally and in tests the
 * app runs on it; on Azure the real Service Bus does this. Everything is in memory and synchronous
 * except `send`, which is async because the `MessageSender` port is.
 *
 * This module is the broker's face; its parts live beside it: `types` (what callers see),
 * `message-size` (sizes and ids checked on send), `clone-body` (copies of bodies), `queue-state`
 * and `session-offers` (per-queue state and acceptance order), `locks` (locks and their expiry),
 * `notifier` (availability listeners), `core` (the shared moves) and `session-receiver`.
 */
import { PermanentError } from '../../src/domain/errors';
import { BrokerCore } from './core';
import { cloneBody, holdBody, releaseBody } from './clone-body';
import { checkServiceBusId, countBatches, estimateMessageBytes } from './message-size';
import { allActive, createQueueState, nextAvailableSession, resolveSettings } from './queue-state';
import { createSessionReceiver } from './session-receiver';
import type {
  AvailabilityListener,
  BrokerOutgoingMessage,
  BrokerDeadLetter,
  EmbeddedBroker,
  EmbeddedBrokerOptions,
  PeekedMessage,
  QueueOptions,
  QueueSettings,
  QueueStats,
  ReceivedMessage,
  BrokerSessionBacklog,
  SentMessage,
  SessionReceiver,
} from './types';

export * from './types';
export {
  countBatches,
  estimateMessageBytes,
  MAX_SERVICE_BUS_ID_LENGTH,
  MessageSizeExceededError,
  ServiceBusIdTooLongError,
  STANDARD_TIER_MAX_BATCH_BYTES,
} from './message-size';

export function createEmbeddedBroker(options: EmbeddedBrokerOptions = {}): EmbeddedBroker {
  const core = new BrokerCore(options);
  const { queues, locks, notifier } = core;

  async function sendAndReport(
    name: string,
    messages: readonly BrokerOutgoingMessage[],
  ): Promise<SentMessage[]> {
    core.expireLocks();
    const queue = core.queueOf(name);
    // Checked before anything is accepted: a refused call leaves the queue as it was.
    for (const message of messages) {
      checkServiceBusId('messageId', message.messageId, message.messageId);
      checkServiceBusId('sessionId', message.sessionId, message.messageId);
      if (queue.settings.requiresSession && message.sessionId === undefined) {
        throw new PermanentError(
          'session-id-required',
          `queue ${name} requires sessions; message ${message.messageId} has no sessionId`,
        );
      }
    }
    const held = messages.map((message) => holdBody(message.body));
    const batches = countBatches(messages, core.maxBatchBytes, (message) => estimateMessageBytes(message));
    queue.stats.sendCalls += batches;
    const at = core.now();
    const sent = messages.map((message, index) => ({
      messageId: message.messageId,
      droppedAsDuplicate: !core.accept(queue, message, held[index], at),
    }));
    if (sent.some((message) => !message.droppedAsDuplicate)) notifier.notify(name);
    return sent;
  }

  return {
    createQueue(name: string, queueOptions: QueueOptions = {}): QueueSettings {
      if (queues.has(name)) throw new PermanentError('queue-exists', `queue ${name} already exists`);
      const settings = resolveSettings(queueOptions);
      queues.set(name, createQueueState(name, settings));
      return { ...settings };
    },

    queueSettings(name: string): QueueSettings {
      return { ...core.queueOf(name).settings };
    },

    queueNames(): string[] {
      return [...queues.keys()];
    },

    async send(name: string, messages: readonly BrokerOutgoingMessage[]): Promise<void> {
      await sendAndReport(name, messages);
    },

    sendAndReport,

    acceptNextSession(name: string): SessionReceiver | undefined {
      core.expireLocks();
      const queue = core.queueOf(name);
      if (!queue.settings.requiresSession) {
        throw new PermanentError('not-a-session-queue', `queue ${name} has no sessions`);
      }
      const chosen = nextAvailableSession(queue);
      if (!chosen) return undefined;
      const accepted = core.nextAcceptance();
      chosen.accepted = accepted;
      queue.lastAccepted.set(chosen.id, accepted);
      return createSessionReceiver(core, queue, chosen);
    },

    receive(name: string): ReceivedMessage | undefined {
      core.expireLocks();
      const queue = core.withoutSessions(name);
      const next = queue.messages.find((message) => message.lock === undefined);
      if (!next) return undefined;
      const received = core.lockMessage(queue, next);
      locks.scheduleWakeUp();
      return received;
    },

    receiveBySequenceNumber(name: string, sequenceNumber: number): ReceivedMessage | undefined {
      core.expireLocks();
      const queue = core.withoutSessions(name);
      const chosen = queue.messages.find(
        (message) => message.sequenceNumber === sequenceNumber && message.lock === undefined,
      );
      if (!chosen) return undefined;
      const received = core.lockMessage(queue, chosen);
      locks.scheduleWakeUp();
      return received;
    },

    complete(received: ReceivedMessage): void {
      const entry = core.nonSessionEntry(received);
      core.takeLock(entry, received);
      core.completeLocked(entry);
    },

    abandon(received: ReceivedMessage): void {
      const entry = core.nonSessionEntry(received);
      core.takeLock(entry, received);
      core.settleAbandon(entry);
    },

    deadLetter(received: ReceivedMessage, reason: string, description: string): void {
      const entry = core.nonSessionEntry(received);
      core.takeLock(entry, received);
      core.settleDeadLetter(entry, reason, description);
    },

    renewMessageLock(received: ReceivedMessage): number {
      return core.renewLocked(core.nonSessionEntry(received));
    },

    autoRenewMessageLock(received: ReceivedMessage, maxDurationMs: number): () => void {
      const entry = core.nonSessionEntry(received);
      core.holdLock(entry, received.lockToken, core.now() + maxDurationMs);
      return () => core.holdLock(entry, received.lockToken, undefined);
    },

    peek(name: string): PeekedMessage[] {
      core.expireLocks();
      return allActive(core.queueOf(name)).map((message) => ({
        messageId: message.messageId,
        sessionId: message.sessionId,
        body: releaseBody(message.body),
        correlationId: message.correlationId,
        subject: message.subject,
        applicationProperties: { ...message.applicationProperties },
        sequenceNumber: message.sequenceNumber,
        enqueuedTimeUtc: message.enqueuedTimeUtc,
        deliveryCount: message.deliveryCount,
        locked: message.lock !== undefined,
      }));
    },

    deadLetters(name: string): BrokerDeadLetter[] {
      core.expireLocks();
      return core.queueOf(name).deadLetters.map((message) => ({
        ...message,
        body: cloneBody(message.body),
        applicationProperties: { ...message.applicationProperties },
      }));
    },

    takeDeadLetter(name: string, sequenceNumber: number): BrokerDeadLetter | undefined {
      const deadLetters = core.queueOf(name).deadLetters;
      const index = deadLetters.findIndex((message) => message.sequenceNumber === sequenceNumber);
      if (index < 0) return undefined;
      const [taken] = deadLetters.splice(index, 1);
      return {
        ...taken,
        body: cloneBody(taken.body),
        applicationProperties: { ...taken.applicationProperties },
      };
    },

    sessions(name: string): BrokerSessionBacklog[] {
      core.expireLocks();
      return [...core.queueOf(name).sessions.values()].map((session) => ({
        sessionId: session.id,
        pending: session.messages.length,
        locked: session.lock !== undefined,
      }));
    },

    stats(): Record<string, QueueStats> {
      core.expireLocks();
      const result: Record<string, QueueStats> = {};
      for (const queue of queues.values()) result[queue.name] = { ...queue.stats };
      return result;
    },

    activeMessageCount(name: string): number {
      core.expireLocks();
      return core.queueOf(name).activeCount;
    },

    isIdle(names?: readonly string[]): boolean {
      core.expireLocks();
      const selected = names ? names.map((name) => core.queueOf(name)) : [...queues.values()];
      return selected.every((queue) => queue.activeCount === 0);
    },

    onAvailable(listener: AvailabilityListener): () => void {
      notifier.add(listener);
      locks.scheduleWakeUp();
      return () => {
        notifier.remove(listener);
        if (!notifier.listening) locks.clearWakeUp();
      };
    },

    close(): void {
      notifier.clear();
      locks.clearWakeUp();
    },
  };
}
