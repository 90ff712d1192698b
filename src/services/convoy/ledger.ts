/**
 * The serial half of the convoy: de-batch one ledger message into `order-transactions`, one
 * message per entry in its order's session, in batch order, packed into as few sends as allowed.
 */
import { describeProblems, parseLedgerMessage, type Entry } from '../../domain/entry';
import { entryDigest, entryMessageId } from '../../domain/digest';
import { park, parkIdFor, type ParkRequest } from './parking';
import { DEFAULT_MAX_MESSAGE_BYTES, estimateMessageBytes } from '../message-size';
import { QUEUE } from '../queues';
import type { DeliveredMessage, MessageSender, OutgoingMessage, Telemetry } from '../ports';

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

/** The message an entry travels in (docs/messages.md (the ledger message)). */
export function entryMessage(entry: Entry, batchId: string, correlationId: string): OutgoingMessage {
  return {
    messageId: entryMessageId(entry.transactionId, entryDigest(entry)),
    sessionId: entry.orderId,
    body: entry,
    correlationId,
    subject: entry.type,
    applicationProperties: {
      transactionId: entry.transactionId,
      sequence: entry.sequence,
      final: entry.final === true,
      batchId,
    },
  };
}

export async function forwardLedgerBatch(
  deps: LedgerDeps,
  message: DeliveredMessage,
): Promise<LedgerOutcome> {
  const correlationId = message.correlationId ?? message.messageId;
  const parsed = parseLedgerMessage(message.body);
  if (!parsed.ok) {
    await park(deps, [
      {
        fromQueue: QUEUE.ledger,
        messageId: message.messageId,
        sessionId: message.sessionId,
        body: message.body,
        correlationId,
        applicationProperties: message.applicationProperties,
        transactionId: null,
        reason: 'invalid',
        description: describeProblems(parsed.problems),
      },
    ]);
    return { batchId: message.messageId, forwarded: 0, parked: 1 };
  }

  const { batchId, entries } = parsed.value;
  const forwards: OutgoingMessage[] = [];
  const parks: ParkRequest[] = [];
  const maxMessageBytes = deps.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  for (const { index, raw, result } of entries) {
    if (result.ok) {
      const forward = entryMessage(result.value, batchId, correlationId);
      const bytes = estimateMessageBytes(forward);
      if (bytes <= maxMessageBytes) {
        forwards.push(forward);
        continue;
      }
      // Service Bus would refuse it, and with it the whole send of this batch: parked alone, with
      // what identifies it (the entry itself does not fit in a message either), the rest go on.
      const { transactionId, orderId, sequence, type } = result.value;
      parks.push({
        fromQueue: QUEUE.ledger,
        messageId: parkIdFor('too-large', raw),
        sessionId: message.sessionId,
        body: { transactionId, orderId, sequence, type, bytes, omitted: 'the entry, over the size limit' },
        correlationId,
        applicationProperties: { batchId, entryIndex: index },
        transactionId,
        reason: 'too-large',
        description: `entries[${index}] would travel in a message of about ${bytes} bytes, over the queues' ${maxMessageBytes}-byte limit; its body is not kept`,
      });
      continue;
    }
    const transactionId =
      typeof raw === 'object' &&
      raw !== null &&
      typeof (raw as { transactionId?: unknown }).transactionId === 'string'
        ? (raw as { transactionId: string }).transactionId
        : null;
    parks.push({
      fromQueue: QUEUE.ledger,
      // From the content: a redelivered or re-sent batch parks the same entry under the same id,
      // once, and two batches sharing a batchId never make two different parks collide.
      messageId: parkIdFor('invalid', raw),
      sessionId: message.sessionId,
      body: raw,
      correlationId,
      applicationProperties: { batchId, entryIndex: index },
      transactionId,
      reason: 'invalid',
      description: describeProblems(result.problems),
    });
  }
  // Forward first: should parking fail, the redelivery re-sends and duplicate detection drops repeats.
  if (forwards.length > 0) await deps.sender.send(QUEUE.orderTransactions, forwards);
  await park(deps, parks);
  deps.telemetry.metric('ledger.entriesForwarded', forwards.length);
  return { batchId, forwarded: forwards.length, parked: parks.length };
}
