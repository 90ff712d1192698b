/**
 * What `resequence` (sequential-convoy.ts) decides, in detail (docs/messages.md (the order of
 * checks), checks 3 to 6): the judgement of a transaction seen before, the park of a taken
 * sequence, the buffering of an entry ahead of a gap, and one change's walk over an order's
 * consecutive slots: the business rules of each entry, the header the change leaves and the
 * records it writes. Pure, like the rest of the order aggregate in `order.ts`.
 */
import type { Entry } from './entry';
import type {
  BufferedEntry,
  ChangeDecision,
  Duplicate,
  ParkDecision,
  KnownRecords,
  OrderState,
  Rejection,
  Release,
  SlotOutcome,
  TransactionRecord,
} from './order';

/**
 * The most records one change writes: a Cosmos DB transactional batch holds at most 100 operations
 * (learn.microsoft.com/azure/cosmos-db/concepts-limits, "Maximum operations per transactional batch"),
 * and one of them is the order's header. Buffered entries beyond it stay buffered, still releasable,
 * for the next change.
 */
export const MAX_RECORD_WRITES = 99;

export /** One change's walk over consecutive slots: the header it leaves and the records it writes. */
class Slots {
  readonly state: OrderState;
  private readonly records = new Map<string, TransactionRecord>();
  private created: string | null = null;
  private readonly applied: Array<{ transactionId: string; sequence: number }> = [];
  private readonly rejected: Rejection[] = [];
  private submitted = false;

  constructor(
    state: OrderState,
    private readonly known: KnownRecords,
  ) {
    this.state = { ...state };
  }

  /** The record as this change leaves it so far, or as it was given. */
  record(transactionId: string): TransactionRecord | undefined {
    return this.records.get(transactionId) ?? this.known.get(transactionId);
  }

  take(waiting: BufferedEntry, incoming: boolean): SlotOutcome {
    const { entry, digest } = waiting;
    const result = applyAtSlot(this.state, entry, (id) => this.record(id));
    this.state.appliedSequence = entry.sequence;
    const outcome: SlotOutcome = result.rejection === undefined ? 'applied' : 'rejected';
    const record: TransactionRecord = {
      transactionId: entry.transactionId,
      digest,
      sequence: entry.sequence,
      outcome,
    };
    if (result.amended !== undefined) this.records.set(result.amended.transactionId, result.amended);
    if (outcome === 'applied' && entry.type === 'TransactionAdded') {
      const { sku, quantity, unitPrice } = entry.data;
      record.line = { sku, quantity, unitPrice };
    }
    this.records.set(entry.transactionId, record);
    if (incoming) this.created = entry.transactionId;
    if (result.rejection === undefined) {
      this.applied.push({ transactionId: entry.transactionId, sequence: entry.sequence });
      this.submitted ||= result.submitted;
    } else {
      this.rejected.push({
        messageId: waiting.messageId,
        entry,
        properties: waiting.properties,
        transactionId: entry.transactionId,
        sequence: entry.sequence,
        description: result.rejection,
      });
    }
    return outcome;
  }

  /** Takes the buffered entries that follow without a gap while a write of them fits in one batch. */
  release(): Omit<Release, 'kind'> {
    const buffered = this.state.buffered;
    let released = 0;
    while (
      released < buffered.length &&
      buffered[released].entry.sequence === this.state.appliedSequence + 1 &&
      this.records.size + 2 <= MAX_RECORD_WRITES
    ) {
      this.take(buffered[released], false);
      released++;
    }
    if (released > 0) this.state.buffered = buffered.slice(released);
    const created = this.created === null ? null : (this.records.get(this.created) ?? null);
    const changed = [...this.records.values()].filter((record) => record.transactionId !== this.created);
    return {
      state: this.state,
      applied: this.applied,
      rejected: this.rejected,
      submitted: this.submitted,
      created,
      changed,
    };
  }
}

/** Check 3 for a transaction already seen: the same digest is a duplicate, another is a mismatch. */
export function judgeSeen(seen: SeenRecord, transactionId: string, digest: string): Duplicate | ParkDecision {
  if (seen.digest === digest) return { kind: 'duplicate', transactionId, previous: seen.outcome };
  return digestMismatch(seen, transactionId, digest);
}

/** What is known of a transaction seen before: its record, or its place in the buffer. */
export type SeenRecord = Pick<TransactionRecord, 'digest' | 'sequence' | 'outcome'>;

/** Check 3: the transaction was seen with other content; its id was reused. */
export function digestMismatch(seen: SeenRecord, transactionId: string, digest: string): ParkDecision {
  return {
    kind: 'park',
    reason: 'digest-mismatch',
    description: `transactionId ${transactionId} was already ${seen.outcome} at sequence ${seen.sequence} with other content (digest ${seen.digest.slice(0, 16)}, this one ${digest.slice(0, 16)})`,
    transactionId,
  };
}

/** Check 4: the entry's sequence is taken, by an applied transaction or by `rival` in the buffer. */
export function sequenceConflict(
  state: OrderState,
  entry: Entry,
  rival: BufferedEntry | undefined,
): ParkDecision {
  const holder = rival ? `buffered ${rival.entry.transactionId}` : 'another transaction';
  return {
    kind: 'park',
    reason: 'sequence-conflict',
    description: `sequence ${entry.sequence} of order ${state.orderId} is already taken by ${holder}`,
    transactionId: entry.transactionId,
  };
}

/** An entry ahead of a gap waits in the buffer, in sequence order; its record says it is buffered. */
export function bufferAhead(state: OrderState, incoming: BufferedEntry): ChangeDecision {
  const { transactionId, sequence } = incoming.entry;
  const buffered = [...state.buffered, incoming].sort((a, b) => a.entry.sequence - b.entry.sequence);
  return {
    kind: 'change',
    outcome: 'buffered',
    transactionId,
    state: { ...state, buffered },
    applied: [],
    rejected: [],
    submitted: false,
    created: { transactionId, digest: incoming.digest, sequence, outcome: 'buffered' },
    changed: [],
  };
}

/** The entry for the next slot takes it, then the buffered entries that follow it without a gap. */
export function takeNextSlot(
  state: OrderState,
  incoming: BufferedEntry,
  known: KnownRecords,
): ChangeDecision {
  const slots = new Slots(state, known);
  const outcome = slots.take(incoming, true);
  return { kind: 'change', outcome, transactionId: incoming.entry.transactionId, ...slots.release() };
}

/**
 * Applies the business rules of one entry at its slot, mutating `state` (a fresh copy owned by
 * `takeNextSlot`). Returns why it was rejected, or whether it submitted the order, and the line an
 * amendment changed.
 */
function applyAtSlot(
  state: OrderState,
  entry: Entry,
  recordOf: (transactionId: string) => TransactionRecord | undefined,
): { rejection?: string; submitted: boolean; amended?: TransactionRecord } {
  const reject = (why: string) => ({
    rejection: `${entry.type} at sequence ${entry.sequence}: ${why}`,
    // Stryker disable next-line BooleanLiteral: equivalent, Slots.take reads `submitted` only when there is no rejection.
    submitted: false,
  });
  let amended: TransactionRecord | undefined;
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
      case 'TransactionAdded': {
        const { quantity, unitPrice } = entry.data;
        const over = overMoneyLimit(state.total, { quantity, unitPrice });
        if (over !== null) return reject(over);
        state.lineCount += 1;
        state.total += quantity * unitPrice;
        break;
      }
      case 'TransactionAmended': {
        const { targetTransactionId, quantity, unitPrice } = entry.data;
        const target = recordOf(targetTransactionId);
        const line = target?.line;
        if (target === undefined || line === undefined)
          return reject(`amends ${targetTransactionId}, which is not a line of order ${state.orderId}`);
        const next = { ...line, quantity: quantity ?? line.quantity, unitPrice: unitPrice ?? line.unitPrice };
        const over = overMoneyLimit(state.total - line.quantity * line.unitPrice, next);
        if (over !== null) return reject(over);
        state.total += next.quantity * next.unitPrice - line.quantity * line.unitPrice;
        amended = { ...target, line: next };
        break;
      }
      case 'OrderDeleted':
        state.status = 'deleted';
        break;
    }
  }
  if (entry.final === true && state.status !== 'deleted') {
    state.finalSequence = entry.sequence;
    state.status = 'submitted';
    return { submitted: true, amended };
  }
  return { submitted: false, amended };
}

/**
 * Money is exact: every amount is a safe integer of minor units. A line whose amount, or an order
 * whose total with that line, would pass 2^53 - 1 is refused (docs/messages.md, the order of checks,
 * 6): past it a JavaScript number no longer holds every integer, and a total could round to anything.
 * `others` is the order's total without the line; every amount already taken is within the limit.
 */
function overMoneyLimit(others: number, line: { quantity: number; unitPrice: number }): string | null {
  const limit = BigInt(Number.MAX_SAFE_INTEGER);
  const amount = BigInt(line.quantity) * BigInt(line.unitPrice);
  if (amount > limit) {
    return `the line's amount ${line.quantity} x ${line.unitPrice} = ${amount} minor units is over 2^53 - 1`;
  }
  if (BigInt(others) + amount > limit) {
    return `the order's total would be ${BigInt(others) + amount} minor units with this line's ${amount}, over 2^53 - 1`;
  }
  return null;
}
