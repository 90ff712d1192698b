/**
 * The order aggregate (docs/messages.md (the order of checks), 1.4): from the stored state, an incoming entry message and its
 * session, decide what happens and compute the new state. Pure: the caller carries the decision out.
 */
import { describeProblems, parseEntryMessage, type Entry } from './entry';
import { entryDigest } from './digest';
import { ownValue, setOwn } from './records';

export type OrderStatus = 'pending' | 'open' | 'submitted' | 'deleted';
export type SlotOutcome = 'applied' | 'rejected' | 'buffered';
export type ParkReason =
  | 'invalid'
  | 'misrouted'
  | 'digest-mismatch'
  | 'sequence-conflict'
  | 'rejected'
  /** Over a size limit of Service Bus or Cosmos DB: the message, or the order document it would make. */
  | 'too-large';

export interface OrderLine {
  transactionId: string;
  sku: string;
  quantity: number;
  unitPrice: number;
}

/** What the order remembers of every transaction it has seen: the idempotency record. */
export interface TransactionRecord {
  digest: string;
  sequence: number;
  outcome: SlotOutcome;
}

/** The message's application properties, kept so that a later park keeps them too. */
export type MessageProperties = Record<string, string | number | boolean>;

export interface BufferedEntry {
  messageId: string;
  digest: string;
  entry: Entry;
  properties: MessageProperties;
}

export interface OrderState {
  orderId: string;
  /** `pending` until its OrderCreated is applied: the slots it has taken still need remembering. */
  status: OrderStatus;
  customerId: string | null;
  currency: string | null;
  lines: OrderLine[];
  total: number;
  /** The last sequence slot taken (applied or rejected); the next expected is this + 1. */
  appliedSequence: number;
  /** The sequence of the applied `final` entry, once there is one. */
  finalSequence: number | null;
  transactions: Record<string, TransactionRecord>;
  /** Entries that arrived ahead of a gap, ordered by sequence. */
  buffered: BufferedEntry[];
}

export interface IncomingMessage {
  messageId: string;
  sessionId: string;
  body: unknown;
  applicationProperties?: MessageProperties;
}

/** An entry that took its slot but broke a business rule: it is parked with reason `rejected`. */
export interface Rejection {
  messageId: string;
  entry: Entry;
  properties: MessageProperties;
  transactionId: string;
  sequence: number;
  description: string;
}

export type Decision =
  | {
      kind: 'park';
      reason: Exclude<ParkReason, 'rejected'>;
      description: string;
      transactionId: string | null;
    }
  | { kind: 'duplicate'; transactionId: string; previous: SlotOutcome }
  | {
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
    };

export function newOrderState(orderId: string): OrderState {
  return {
    orderId,
    status: 'pending',
    customerId: null,
    currency: null,
    lines: [],
    total: 0,
    appliedSequence: 0,
    finalSequence: null,
    transactions: {},
    buffered: [],
  };
}

/** The missing sequence number an order with buffered entries waits for, else null. */
export function waitingFor(state: OrderState): number | null {
  return state.buffered.length > 0 ? state.appliedSequence + 1 : null;
}

export type ParkDecision = Extract<Decision, { kind: 'park' }>;

/**
 * Checks 1 and 2 of docs/messages.md (the order of checks), which need no stored state: is the message a valid entry, and
 * did it arrive in its order's session? Lets the caller skip loading state for a message it parks.
 */
export function admit(
  message: IncomingMessage,
): { kind: 'entry'; entry: Entry; digest: string } | ParkDecision {
  const validation = parseEntryMessage(message.body);
  if (!validation.ok) {
    return {
      kind: 'park',
      reason: 'invalid',
      description: describeProblems(validation.problems),
      transactionId: transactionIdOf(message.body),
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
  return { kind: 'entry', entry, digest: entryDigest(entry) };
}

/**
 * Decides the fate of one message on `order-transactions`, in the order of checks of docs/messages.md (the order of checks).
 * `state` is the stored state of the message's order, or undefined when it has none yet.
 */
export function decide(state: OrderState | undefined, message: IncomingMessage): Decision {
  const admitted = admit(message);
  if (admitted.kind === 'park') return admitted;
  const { entry, digest } = admitted;
  return decideEntry(
    state ?? newOrderState(entry.orderId),
    entry,
    digest,
    message.messageId,
    message.applicationProperties,
  );
}

/** Checks 3 to 6 of docs/messages.md (the order of checks) for a valid entry already known to be in its own session. */
export function decideEntry(
  state: OrderState,
  entry: Entry,
  digest: string,
  messageId: string,
  properties: MessageProperties = {},
): Decision {
  const { transactionId, sequence } = entry;
  const seen = ownValue(state.transactions, transactionId);
  if (seen) {
    if (seen.digest === digest) return { kind: 'duplicate', transactionId, previous: seen.outcome };
    return {
      kind: 'park',
      reason: 'digest-mismatch',
      description: `transactionId ${transactionId} was already ${seen.outcome} at sequence ${seen.sequence} with other content (digest ${seen.digest.slice(0, 16)}, this one ${digest.slice(0, 16)})`,
      transactionId,
    };
  }
  const bufferedRival = state.buffered.find((waiting) => waiting.entry.sequence === sequence);
  if (sequence <= state.appliedSequence || bufferedRival) {
    const holder = bufferedRival
      ? `buffered ${bufferedRival.entry.transactionId}`
      : (Object.entries(state.transactions).find(([, record]) => record.sequence === sequence)?.[0] ??
        'another transaction');
    return {
      kind: 'park',
      reason: 'sequence-conflict',
      description: `sequence ${sequence} of order ${state.orderId} is already taken by ${holder}`,
      transactionId,
    };
  }

  const next: OrderState = {
    ...state,
    lines: state.lines,
    transactions: { ...state.transactions },
    buffered: state.buffered,
  };
  if (sequence > state.appliedSequence + 1) {
    setOwn(next.transactions, transactionId, { digest, sequence, outcome: 'buffered' });
    next.buffered = [...state.buffered, { messageId, digest, entry, properties }].sort(
      (a, b) => a.entry.sequence - b.entry.sequence,
    );
    return {
      kind: 'change',
      outcome: 'buffered',
      transactionId,
      state: next,
      applied: [],
      rejected: [],
      submitted: false,
    };
  }

  const applied: Array<{ transactionId: string; sequence: number }> = [];
  const rejected: Rejection[] = [];
  let submitted = false;
  const take = (waiting: BufferedEntry): SlotOutcome => {
    const result = applyAtSlot(next, waiting.entry);
    next.appliedSequence = waiting.entry.sequence;
    const outcome: SlotOutcome = result.rejection === undefined ? 'applied' : 'rejected';
    setOwn(next.transactions, waiting.entry.transactionId, {
      digest: waiting.digest,
      sequence: waiting.entry.sequence,
      outcome,
    });
    if (result.rejection === undefined) {
      applied.push({ transactionId: waiting.entry.transactionId, sequence: waiting.entry.sequence });
      submitted ||= result.submitted;
    } else {
      rejected.push({
        messageId: waiting.messageId,
        entry: waiting.entry,
        properties: waiting.properties,
        transactionId: waiting.entry.transactionId,
        sequence: waiting.entry.sequence,
        description: result.rejection,
      });
    }
    return outcome;
  };

  const outcome = take({ messageId, digest, entry, properties });
  while (next.buffered.length > 0 && next.buffered[0].entry.sequence === next.appliedSequence + 1) {
    const [released, ...rest] = next.buffered;
    next.buffered = rest;
    take(released);
  }
  return { kind: 'change', outcome, transactionId, state: next, applied, rejected, submitted };
}

/**
 * Applies the business rules of one entry at its slot, mutating `state` (a fresh copy owned by
 * `decideEntry`). Returns why it was rejected, or whether it submitted the order.
 */
function applyAtSlot(state: OrderState, entry: Entry): { rejection?: string; submitted: boolean } {
  const reject = (why: string) => ({
    rejection: `${entry.type} at sequence ${entry.sequence}: ${why}`,
    submitted: false,
  });
  if (state.status === 'deleted') return reject(`order ${state.orderId} is deleted`);
  if (state.finalSequence !== null) {
    return reject(`order ${state.orderId} was closed by its final entry at sequence ${state.finalSequence}`);
  }
  if (entry.type === 'OrderCreated') {
    if (entry.sequence !== 1) return reject('OrderCreated must be at sequence 1');
    state.status = 'open';
    state.customerId = entry.data.customerId;
    state.currency = entry.data.currency;
  } else if (state.status === 'pending') {
    return reject(`order ${state.orderId} does not exist: its OrderCreated was not applied`);
  } else {
    switch (entry.type) {
      case 'TransactionAdded':
        state.lines = [...state.lines, { transactionId: entry.transactionId, ...entry.data }];
        break;
      case 'TransactionAmended': {
        const { targetTransactionId, quantity, unitPrice } = entry.data;
        const index = state.lines.findIndex((line) => line.transactionId === targetTransactionId);
        if (index < 0)
          return reject(`amends ${targetTransactionId}, which is not a line of order ${state.orderId}`);
        const line = state.lines[index];
        state.lines = state.lines.map((existing, i) =>
          i === index
            ? { ...line, quantity: quantity ?? line.quantity, unitPrice: unitPrice ?? line.unitPrice }
            : existing,
        );
        break;
      }
      case 'OrderDeleted':
        state.status = 'deleted';
        break;
    }
  }
  state.total = state.lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0);
  if (entry.final === true && state.status !== 'deleted') {
    state.finalSequence = entry.sequence;
    state.status = 'submitted';
    return { submitted: true };
  }
  return { submitted: false };
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
