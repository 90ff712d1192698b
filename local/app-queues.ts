/**
 * The three queues of docs/messages.md on the embedded broker, with the flags the Bicep gives them
 * (QUEUE_FLAGS, held equal to bicep/modules/servicebus.bicep by the consistency test), and the one
 * way a ledger message goes in. The app, the bench's naive pipeline and the tests set up through here.
 */
import { QUEUE, QUEUE_FLAGS } from '../src/services/queues';
import type { EmbeddedBroker, QueueOptions } from './broker/types';

type QueueName = (typeof QUEUE)[keyof typeof QUEUE];

export interface LedgerInput {
  messageId: string;
  sessionId: string;
  body: unknown;
}

/** Creates the app's queues: `shared` on each, then `perQueue` over it (a test's window, the naive design's sessionless queue). */
export function createAppQueues(
  broker: Pick<EmbeddedBroker, 'createQueue'>,
  shared: QueueOptions = {},
  perQueue: Partial<Record<QueueName, QueueOptions>> = {},
): void {
  for (const name of Object.values(QUEUE)) {
    const flags = QUEUE_FLAGS[name];
    broker.createQueue(name, {
      requiresSession: flags.requiresSession,
      duplicateDetection: flags.requiresDuplicateDetection,
      ...shared,
      ...perQueue[name],
    });
  }
}

/** Sends ledger messages one at a time, in order, as a producer would. */
export async function sendLedger(
  broker: Pick<EmbeddedBroker, 'send'>,
  messages: readonly LedgerInput[],
): Promise<void> {
  for (const message of messages) {
    await broker.send(QUEUE.ledger, [
      { messageId: message.messageId, sessionId: message.sessionId, body: message.body },
    ]);
  }
}
