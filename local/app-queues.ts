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

/** What `sendLedger` sent to one broker: how many ledger messages, and which its duplicate detection dropped. */
interface LedgerSends {
  sent: number;
  dropped: Set<number>;
}

/**
 * Per broker, kept beside it rather than in it: the broker answers each send as Service Bus does
 * (accepted, even when dropped), and only the producer knows which of its messages each send was.
 */
const ledgerSends = new WeakMap<Pick<EmbeddedBroker, 'sendAndReport'>, LedgerSends>();

/**
 * Sends ledger messages one at a time, in order, as a producer would, noting which ones the `ledger`
 * queue's duplicate detection dropped (`droppedLedgerMessages`).
 */
export async function sendLedger(
  broker: Pick<EmbeddedBroker, 'sendAndReport'>,
  messages: readonly LedgerInput[],
): Promise<void> {
  let sends = ledgerSends.get(broker);
  if (sends === undefined) {
    sends = { sent: 0, dropped: new Set() };
    ledgerSends.set(broker, sends);
  }
  for (const message of messages) {
    const [sent] = await broker.sendAndReport(QUEUE.ledger, [
      { messageId: message.messageId, sessionId: message.sessionId, body: message.body },
    ]);
    if (sent.droppedAsDuplicate) sends.dropped.add(sends.sent);
    sends.sent += 1;
  }
}

/**
 * The positions (from 0, in the order `sendLedger` sent them to this broker) of the ledger messages
 * the `ledger` queue dropped as duplicates: a run report's account names their entries
 * (local/entry-account.ts). Few: a producer reuses a messageId only to send the same batch again.
 */
export function droppedLedgerMessages(broker: Pick<EmbeddedBroker, 'sendAndReport'>): ReadonlySet<number> {
  return ledgerSends.get(broker)?.dropped ?? new Set();
}
