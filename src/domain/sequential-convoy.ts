/**
 * The Sequential Convoy's decisions (docs/messages.md): a ledger batch de-batched into one message
 * per entry in its order's session, and, on `order-transactions`, where an entry goes against its
 * order's applied sequence and buffer. Pure: the services send, park and write what is decided.
 */
import { describeProblems, parseLedgerMessage, type Entry } from './entry';
import { entryDigest, entryMessageId } from './digest';
import type { BufferedEntry, Decision, KnownRecords, MessageProperties, OrderState } from './order';
import { bufferAhead, judgeSeen, sequenceConflict, takeNextSlot } from './order-slots';

/** An entry's message on `order-transactions`: an OutgoingMessage of src/services/ports.ts. */
export interface EntryMessage {
  messageId: string;
  sessionId: string;
  body: Entry;
  correlationId: string;
  subject: string;
  applicationProperties: MessageProperties;
}

/** An entry of a batch that cannot travel: parked, while the rest of the batch goes on. */
export interface EntryPark {
  reason: 'invalid' | 'too-large';
  /** The entry as it came in the batch: the park's id is made from it (parkIdFor). */
  raw: unknown;
  body: unknown;
  applicationProperties: MessageProperties;
  transactionId: string | null;
  description: string;
}

export type Debatched =
  | { kind: 'invalid'; description: string }
  | { kind: 'batch'; batchId: string; forwards: EntryMessage[]; parks: EntryPark[] };

/** The queues' message size limit and how a message is measured against it (src/services/message-size.ts). */
export interface MessageLimit {
  maxBytes: number;
  bytesOf(message: EntryMessage): number;
}

/**
 * One ledger message → one message per entry, in batch order, each in its order's session
 * (`sessionId` = `orderId`), so that `order-transactions` keeps each order's entries in order
 * and serves orders in parallel. Entries that cannot travel are parked; the batch itself is
 * refused whole when it is not one.
 */
export function debatch(body: unknown, correlationId: string, limit: MessageLimit): Debatched {
  const parsed = parseLedgerMessage(body);
  if (!parsed.ok) return { kind: 'invalid', description: describeProblems(parsed.problems) };
  const { batchId, entries } = parsed.value;
  const forwards: EntryMessage[] = [];
  const parks: EntryPark[] = [];
  for (const { index, raw, result } of entries) {
    const applicationProperties = { batchId, entryIndex: index };
    if (!result.ok) {
      const transactionId = (raw as { transactionId?: unknown } | null)?.transactionId;
      parks.push({
        reason: 'invalid',
        raw,
        body: raw,
        applicationProperties,
        transactionId: typeof transactionId === 'string' ? transactionId : null,
        description: describeProblems(result.problems),
      });
      continue;
    }
    const message = entryMessage(result.value, batchId, correlationId);
    const bytes = limit.bytesOf(message);
    if (bytes <= limit.maxBytes) {
      forwards.push(message);
      continue;
    }
    // Service Bus would refuse it, and with it the whole send of this batch: parked alone, with
    // what identifies it (the entry itself does not fit in a message either), the rest go on.
    const { transactionId, orderId, sequence, type } = result.value;
    parks.push({
      reason: 'too-large',
      raw,
      body: { transactionId, orderId, sequence, type, bytes, omitted: 'the entry, over the size limit' },
      applicationProperties,
      transactionId,
      description: `entries[${index}] would travel in a message of about ${bytes} bytes, over the queues' ${limit.maxBytes}-byte limit; its body is not kept`,
    });
  }
  return { kind: 'batch', batchId, forwards, parks };
}

/** The message an entry travels in (docs/messages.md (the ledger message)). */
export function entryMessage(entry: Entry, batchId: string, correlationId: string): EntryMessage {
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

/**
 * Checks 3 to 6 of docs/messages.md (the order of checks) for a valid entry already known to be in
 * its own session. `known` holds the records `recordsNeeded` asks for. Its cost does not grow with
 * the order: it reads the header, those few records and the bounded buffer.
 */
export function resequence(
  state: OrderState,
  entry: Entry,
  digest: string,
  messageId: string,
  properties: MessageProperties = {},
  known: KnownRecords = new Map(),
): Decision {
  const { transactionId, sequence } = entry;
  // Seen before, waiting in the buffer or by its record: a duplicate, or its id reused.
  const waiting = state.buffered.find((buffered) => buffered.entry.transactionId === transactionId);
  const seen = waiting
    ? { digest: waiting.digest, sequence: waiting.entry.sequence, outcome: 'buffered' as const }
    : known.get(transactionId);
  if (seen) return judgeSeen(seen, transactionId, digest);

  // Behind the applied sequence, or its slot held in the buffer: another transaction has it.
  const rival = state.buffered.find((buffered) => buffered.entry.sequence === sequence);
  if (sequence <= state.appliedSequence || rival) return sequenceConflict(state, entry, rival);

  const incoming: BufferedEntry = { messageId, digest, entry, properties };
  // Ahead of a gap: it waits in the buffer until the gap is filled.
  if (sequence > state.appliedSequence + 1) return bufferAhead(state, incoming);
  // The next slot: take it, then release the buffered entries that follow without a gap.
  return takeNextSlot(state, incoming, known);
}
