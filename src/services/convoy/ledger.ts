/**
 * The serial half of the convoy: one ledger message de-batched (src/domain/sequential-convoy.ts)
 * into `order-transactions`, packed into as few sends as allowed, and what cannot travel parked.
 */
import { debatch } from '../../domain/sequential-convoy';
import { park, parkIdFor, type ParkRequest } from './parking';
import { DEFAULT_MAX_MESSAGE_BYTES, estimateMessageBytes } from '../message-size';
import { QUEUE } from '../queues';
import type { DeliveredMessage, MessageSender, Telemetry } from '../ports';

export interface LedgerDeps {
  sender: MessageSender;
  telemetry: Telemetry;
  /** The queues' message size limit (a setting by tier, src/services/message-size.ts). */
  maxMessageBytes?: number;
}

export interface LedgerOutcome {
  batchId: string;
  forwarded: number;
  parked: number;
}

export async function forwardLedgerBatch(
  deps: LedgerDeps,
  message: DeliveredMessage,
): Promise<LedgerOutcome> {
  const correlationId = message.correlationId ?? message.messageId;
  const parked = { fromQueue: QUEUE.ledger, sessionId: message.sessionId, correlationId };
  const debatched = debatch(message.body, correlationId, {
    maxBytes: deps.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    bytesOf: estimateMessageBytes,
  });
  if (debatched.kind === 'invalid') {
    await park(deps, [
      {
        ...parked,
        messageId: message.messageId,
        body: message.body,
        applicationProperties: message.applicationProperties,
        transactionId: null,
        reason: 'invalid',
        description: debatched.description,
      },
    ]);
    return { batchId: message.messageId, forwarded: 0, parked: 1 };
  }

  const { batchId, forwards } = debatched;
  const parks = debatched.parks.map(({ raw, ...entry }): ParkRequest => ({
    ...parked,
    ...entry,
    // From the content: a redelivered or re-sent batch parks the same entry under the same id,
    // once, and two batches sharing a batchId never make two different parks collide.
    messageId: parkIdFor(entry.reason, raw),
  }));
  // Forward first: should parking fail, the redelivery re-sends and duplicate detection drops repeats.
  if (forwards.length > 0) await deps.sender.send(QUEUE.orderTransactions, forwards);
  await park(deps, parks);
  deps.telemetry.metric('ledger.entriesForwarded', forwards.length);
  return { batchId, forwarded: forwards.length, parked: parks.length };
}
