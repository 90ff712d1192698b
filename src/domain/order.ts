/**
 * The order aggregate (docs/messages.md (the order of checks), 1.4): from the stored state, an incoming entry message and its
 * session, decide what happens and compute the new state. Pure: the caller carries the decision out.
 */
import { describeProblems, MAX_ID_BYTES, parseEntryMessage, textBytesProblem, type Entry } from './entry';
import { entryDigest } from './digest';
import { ownValue } from './own-properties';
import { MAX_RECORD_WRITES, Slots } from './order-slots';
import { resequence } from './sequential-convoy';

export type OrderStatus = 'pending' | 'open' | 'submitted' | 'deleted';
export type SlotOutcome = 'applied' | 'rejected' | 'buffered';
export type ParkReason =
  | 'invalid'
  | 'misrouted'
  | 'digest-mismatch'
  | 'sequence-conflict'
  | 'rejected'
  /** An entry whose message would be over the queues' size limit (the ledger's check). */
  | 'too-large';

export interface OrderLine {
  transactionId: string;
  sku: string;
  quantity: number;
  unitPrice: number;
}

/** A line's values, as its transaction record keeps them. */
export interface LineValues {
  sku: string;
  quantity: number;
  unitPrice: number;
}

/**
 * What the order remembers of one transaction it has seen, for ever: the idempotency record. It is
 * stored as a document of its own beside the order (docs/documents.md), so the order itself stays the
 * same size however many transactions it has.
 */
export interface TransactionRecord {
  transactionId: string;
  digest: string;
  sequence: number;
  outcome: SlotOutcome;
  /** The line an applied TransactionAdded made, as amended since; no other transaction has one. */
  line?: LineValues;
}

/** The transaction records a decision was given, by transactionId (see `recordsNeeded`). */
export type KnownRecords = ReadonlyMap<string, TransactionRecord>;

/** The message's application properties, kept so that a later park keeps them too. */
export type MessageProperties = Record<string, string | number | boolean>;

export interface BufferedEntry {
  messageId: string;
  digest: string;
  entry: Entry;
  properties: MessageProperties;
}

/** The order's header: nothing in it grows with the number of its entries but `buffered`, which only
 * holds entries behind an open gap and is bounded by the entry limits. */
export interface OrderState {
  orderId: string;
  /** `pending` until its OrderCreated is applied: the slots it has taken still need remembering. */
  status: OrderStatus;
  customerId: string | null;
  currency: string | null;
  /** How many lines the order has: its applied TransactionAdded entries. */
  lineCount: number;
  total: number;
  /** The last sequence slot taken (applied or rejected); the next expected is this + 1. */
  appliedSequence: number;
  /** The sequence of the applied `final` entry, once there is one. */
  finalSequence: number | null;
  /** Entries that arrived ahead of a gap, ordered by sequence. */
  buffered: BufferedEntry[];
}

export interface IncomingMessage {
  messageId: string;
  sessionId: string;
  body: unknown;
  correlationId?: string | null;
  applicationProperties?: MessageProperties;
}

/**
 * What an order keeps of an entry's message besides the entry, with a buffered entry and with the
 * park of a rejected one, bounded as the entry's fields are (MAX_ID_BYTES and the others in
 * entry.ts), in the bytes the store writes:
 * - its `messageId`: Service Bus takes 128 characters, 768 bytes of JSON at worst; the app's own ids
 *   (`<transactionId>:<16 hex digits>`, and a replay's `replay-<d|p><sequence number>:` before one,
 *   cut to 128 characters) stay under 256;
 * - of its application properties, the ones the ledger sets (docs/messages.md, the ledger message),
 *   a text among them bounded as an id. The others are not kept: a rejected entry's park carries these;
 * - its `correlationId`, once per order, not per entry: Service Bus sets no bound of its own on it.
 */
export const MAX_MESSAGE_ID_BYTES = 256;
export const MAX_CORRELATION_ID_BYTES = 1024;
export const KEPT_PROPERTY_NAMES = ['transactionId', 'sequence', 'final', 'batchId'] as const;

/** An entry that took its slot but broke a business rule: it is parked with reason `rejected`. */
export interface Rejection {
  messageId: string;
  entry: Entry;
  properties: MessageProperties;
  transactionId: string;
  sequence: number;
  description: string;
}

/** The writes of one change to the order besides its header: the records it creates and changes. */
export interface RecordWrites {
  /** The incoming entry's own record, created: the store refuses it (409) when the entry was seen. */
  created: TransactionRecord | null;
  /** Records that exist and change: entries released from the buffer, lines amended. */
  changed: TransactionRecord[];
}

export type Decision =
  | {
      kind: 'park';
      reason: Exclude<ParkReason, 'rejected'>;
      description: string;
      transactionId: string | null;
    }
  | { kind: 'duplicate'; transactionId: string; previous: SlotOutcome }
  | ({
      kind: 'change';
      /** What happened to the incoming entry itself. */
      outcome: SlotOutcome;
      transactionId: string;
      state: OrderState;
      /** Every entry this change applied, the incoming one and any released from the buffer. */
      applied: Array<{ transactionId: string; sequence: number }>;
      rejected: Rejection[];
      /** True when this change submitted the order: its fulfillment is to start, once. */
      submitted: boolean;
    } & RecordWrites);

/** A release of buffered entries whose gap is filled, without an incoming entry. */
export type Release = Omit<Extract<Decision, { kind: 'change' }>, 'kind' | 'outcome' | 'transactionId'> & {
  kind: 'release';
};

export { MAX_RECORD_WRITES } from './order-slots';

export function newOrderState(orderId: string): OrderState {
  return {
    orderId,
    status: 'pending',
    customerId: null,
    currency: null,
    lineCount: 0,
    total: 0,
    appliedSequence: 0,
    finalSequence: null,
    buffered: [],
  };
}

/** The missing sequence number an order with buffered entries waits for, else null. */
export function waitingFor(state: OrderState): number | null {
  return state.buffered.length > 0 && !releasable(state) ? state.appliedSequence + 1 : null;
}

/** True when the order's first buffered entry may take its slot now: its gap was filled by a change
 * that could not release everything in one batch. */
export function releasable(state: OrderState): boolean {
  return state.buffered.length > 0 && state.buffered[0].entry.sequence === state.appliedSequence + 1;
}

/** The order's lines, from its transaction records, in sequence order. */
export function linesOf(records: Iterable<TransactionRecord>): OrderLine[] {
  const lines: Array<OrderLine & { sequence: number }> = [];
  for (const record of records) {
    if (record.line !== undefined)
      lines.push({ transactionId: record.transactionId, ...record.line, sequence: record.sequence });
  }
  return lines
    .sort((a, b) => a.sequence - b.sequence)
    .map(({ transactionId, sku, quantity, unitPrice }) => ({ transactionId, sku, quantity, unitPrice }));
}

export type ParkDecision = Extract<Decision, { kind: 'park' }>;
export type Duplicate = Extract<Decision, { kind: 'duplicate' }>;
export type ChangeDecision = Extract<Decision, { kind: 'change' }>;

/**
 * Checks 1 and 2 of docs/messages.md (the order of checks), which need no stored state: is the message a valid entry, and
 * did it arrive in its order's session? Lets the caller skip loading state for a message it parks.
 */
export function admit(
  message: IncomingMessage,
): { kind: 'entry'; entry: Entry; digest: string; properties: MessageProperties } | ParkDecision {
  const validation = parseEntryMessage(message.body);
  const kept = keptOfMessage(message);
  if (!validation.ok || kept.problems.length > 0) {
    return {
      kind: 'park',
      reason: 'invalid',
      description: describeProblems([...(validation.ok ? [] : validation.problems), ...kept.problems]),
      transactionId: validation.ok ? validation.value.transactionId : transactionIdOf(message.body),
    };
  }
  const entry = validation.value;
  if (entry.orderId !== message.sessionId) {
    return {
      kind: 'park',
      reason: 'misrouted',
      description: `orderId ${entry.orderId} arrived in session ${message.sessionId}; an entry must travel in its order's session`,
      transactionId: entry.transactionId,
    };
  }
  return { kind: 'entry', entry, digest: entryDigest(entry), properties: kept.properties };
}

/** The message's values past what an order keeps of them, and the application properties it keeps. */
function keptOfMessage(message: IncomingMessage): { problems: string[]; properties: MessageProperties } {
  const problems: string[] = [];
  const push = (problem: string | null): void => {
    if (problem !== null) problems.push(problem);
  };
  push(textBytesProblem(message.messageId, 'messageId', MAX_MESSAGE_ID_BYTES));
  if (typeof message.correlationId === 'string')
    push(textBytesProblem(message.correlationId, 'correlationId', MAX_CORRELATION_ID_BYTES));
  const properties: MessageProperties = {};
  const given = message.applicationProperties ?? {};
  for (const name of KEPT_PROPERTY_NAMES) {
    const value = ownValue(given, name);
    if (value === undefined) continue;
    const over =
      typeof value === 'string'
        ? textBytesProblem(value, `applicationProperties.${name}`, MAX_ID_BYTES)
        : null;
    push(over);
    if (over === null) properties[name] = value;
  }
  return { problems, properties };
}

/**
 * The transactionIds whose records `resequence` must be given (absent ones are not stored): the
 * incoming entry's own when its slot is taken (a duplicate or a conflict), and the target of every
 * amendment the change would apply. A record not asked for may be given too; the incoming entry's
 * own record, when it was seen and is not given, is found by the store refusing to create it.
 */
export function recordsNeeded(state: OrderState, entry: Entry): string[] {
  const { transactionId, sequence } = entry;
  if (state.buffered.some((waiting) => waiting.entry.transactionId === transactionId)) return [];
  if (sequence <= state.appliedSequence) return [transactionId];
  if (sequence > state.appliedSequence + 1) return [];
  return amendTargets([entry, ...releaseChain(state.buffered, sequence + 1)]);
}

/** The records `decideRelease` must be given: the targets of the amendments it would apply. */
export function releaseNeeded(state: OrderState): string[] {
  return amendTargets(releaseChain(state.buffered, state.appliedSequence + 1));
}

function amendTargets(entries: readonly Entry[]): string[] {
  const targets = new Set<string>();
  for (const entry of entries)
    if (entry.type === 'TransactionAmended') targets.add(entry.data.targetTransactionId);
  return [...targets];
}

/** The buffered entries from `from` on without a gap, as many as one change could release (each
 * released entry writes at least its own record). */
function releaseChain(buffered: readonly BufferedEntry[], from: number): Entry[] {
  const chain: Entry[] = [];
  for (const waiting of buffered) {
    if (waiting.entry.sequence !== from + chain.length || chain.length >= MAX_RECORD_WRITES) break;
    chain.push(waiting.entry);
  }
  return chain;
}

/** Releases the buffered entries whose gap is filled, as many as one change may write; null when none is. */
export function decideRelease(state: OrderState, known: KnownRecords = new Map()): Release | null {
  if (!releasable(state)) return null;
  return { kind: 'release', ...new Slots(state, known).release() };
}

function transactionIdOf(body: unknown): string | null {
  let value = body;
  const text = body instanceof Uint8Array ? new TextDecoder().decode(body) : body;
  if (typeof text === 'string') {
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  }
  if (typeof value !== 'object' || value === null) return null;
  const transactionId = (value as Record<string, unknown>).transactionId;
  return typeof transactionId === 'string' && transactionId.length > 0 ? transactionId : null;
}

/**
 * The fate of one message on `order-transactions`: checks 1 and 2 (`admit`), then `resequence`.
 * `state` is the stored state of its order, undefined when it has none yet.
 */
export function decide(
  state: OrderState | undefined,
  message: IncomingMessage,
  known: KnownRecords = new Map(),
): Decision {
  const admitted = admit(message);
  if (admitted.kind === 'park') return admitted;
  const { entry, digest, properties } = admitted;
  return resequence(
    state ?? newOrderState(entry.orderId),
    entry,
    digest,
    message.messageId,
    properties,
    known,
  );
}
