/**
 * Builders and helpers shared by the domain unit tests. Not a test file itself. The builders make
 * raw bodies (`rawCreated`, ...: any extra field, valid or not, for the validation tests), all of
 * order ORDER_ID; tests/support/e2e.ts builds typed entries of any order (`created`, ...).
 */
import { entryDigest, entryMessageId } from '../../src/domain/digest';
import { validateEntry } from '../../src/domain/entry';
import {
  admit,
  decide as decideOn,
  linesOf as linesOfRecords,
  newOrderState,
  recordsNeeded,
  type Decision,
  type IncomingMessage,
  type OrderLine,
  type OrderState,
  type SlotOutcome,
  type TransactionRecord,
} from '../../src/domain/order';
import { judgeSeen } from '../../src/domain/order-slots';

export type Raw = Record<string, unknown>;

export const ORDER_ID = 'O-1';

export function rawCreated(sequence: number, transactionId: string, extra: Raw = {}): Raw {
  return {
    transactionId,
    orderId: ORDER_ID,
    sequence,
    type: 'OrderCreated',
    data: { customerId: 'C-9', currency: 'EUR' },
    ...extra,
  };
}

export function rawAdded(
  sequence: number,
  transactionId: string,
  quantity: number,
  unitPrice: number,
  extra: Raw = {},
): Raw {
  return {
    transactionId,
    orderId: ORDER_ID,
    sequence,
    type: 'TransactionAdded',
    data: { sku: `SKU-${transactionId}`, quantity, unitPrice },
    ...extra,
  };
}

export function rawAmended(
  sequence: number,
  transactionId: string,
  targetTransactionId: string,
  change: { quantity?: number; unitPrice?: number },
  extra: Raw = {},
): Raw {
  return {
    transactionId,
    orderId: ORDER_ID,
    sequence,
    type: 'TransactionAmended',
    data: { targetTransactionId, ...change },
    ...extra,
  };
}

export function rawDeleted(sequence: number, transactionId: string, extra: Raw = {}): Raw {
  return { transactionId, orderId: ORDER_ID, sequence, type: 'OrderDeleted', ...extra };
}

/** The messageId the ledger processor gives a valid entry (docs/messages.md (the ledger message)); a fixed one for an invalid body. */
export function messageIdOf(raw: unknown): string {
  const validation = validateEntry(raw);
  if (!validation.ok) return 'invalid-message';
  return entryMessageId(validation.value.transactionId, entryDigest(validation.value));
}

/** A message on `order-transactions` carrying `raw` as its body, in the session of its own order. */
export function message(raw: Raw, sessionId: string = String(raw.orderId)): IncomingMessage {
  return { messageId: messageIdOf(raw), sessionId, body: raw };
}

export type Change = Extract<Decision, { kind: 'change' }>;
export type Park = Extract<Decision, { kind: 'park' }>;
export type Duplicate = Extract<Decision, { kind: 'duplicate' }>;

function fail(expected: string, decision: Decision): never {
  throw new Error(`expected a ${expected} decision, got ${JSON.stringify(decision)}`);
}

export function asChange(decision: Decision): Change {
  return decision.kind === 'change' ? decision : fail('change', decision);
}

export function asPark(decision: Decision): Park {
  return decision.kind === 'park' ? decision : fail('park', decision);
}

export function asDuplicate(decision: Decision): Duplicate {
  return decision.kind === 'duplicate' ? decision : fail('duplicate', decision);
}

/** Freezes an object graph, so that any write to it throws in strict mode code. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) {
      deepFreeze((value as Record<string | symbol, unknown>)[key]);
    }
  }
  return value;
}

/** Deep copy through JSON: the state is plain JSON by design (it is stored as a document). */
export function jsonCopy<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * The transaction records beside each state a test holds, as the store keeps them beside the order's
 * header: `decide` below gives the domain the records it asks for (`recordsNeeded`) and keeps what a
 * change writes with the state it returns.
 */
const RECORDS = new WeakMap<OrderState, ReadonlyMap<string, TransactionRecord>>();

/** The records stored beside `state` (none for a state this module did not make). */
export function recordsOf(state: OrderState | undefined): ReadonlyMap<string, TransactionRecord> {
  return (state === undefined ? undefined : RECORDS.get(state)) ?? new Map();
}

/** `decide` of the domain, given the stored records it asks for, as the consumer gives them. */
export function decide(state: OrderState | undefined, incoming: IncomingMessage): Decision {
  const records = recordsOf(state);
  const admitted = admit(incoming);
  const known = new Map<string, TransactionRecord>();
  if (admitted.kind === 'entry') {
    for (const id of recordsNeeded(state ?? newOrderState(admitted.entry.orderId), admitted.entry)) {
      const record = records.get(id);
      if (record !== undefined) known.set(id, record);
    }
  }
  const decision = decideOn(state, incoming, known);
  // The store refuses to create a record it has (409): the consumer then judges the one stored.
  const taken =
    decision.kind === 'change' && decision.created !== null
      ? records.get(decision.created.transactionId)
      : undefined;
  if (decision.kind === 'change' && taken !== undefined && decision.created !== null)
    return judgeSeen(taken, decision.created.transactionId, decision.created.digest);
  if (decision.kind === 'change') {
    const next = new Map(records);
    for (const record of [...(decision.created === null ? [] : [decision.created]), ...decision.changed])
      next.set(record.transactionId, record);
    RECORDS.set(decision.state, next);
  }
  return decision;
}

/** The order's lines, from the records beside `state`, in sequence order. */
export function linesOf(state: OrderState | undefined): OrderLine[] {
  return linesOfRecords(recordsOf(state).values());
}

/** The records beside `state` as `{digest, sequence, outcome}` by transactionId. */
export function transactionsOf(
  state: OrderState | undefined,
): Record<string, { digest: string; sequence: number; outcome: SlotOutcome }> {
  const view: Record<string, { digest: string; sequence: number; outcome: SlotOutcome }> = {};
  for (const { transactionId, digest, sequence, outcome } of recordsOf(state).values())
    Object.defineProperty(view, transactionId, {
      value: { digest, sequence, outcome },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return view;
}

/** Feeds messages one after the other, threading the state through `change` decisions. */
export function feed(
  initial: OrderState | undefined,
  messages: readonly IncomingMessage[],
): { state: OrderState | undefined; decisions: Decision[] } {
  let state = initial;
  const decisions: Decision[] = [];
  for (const incoming of messages) {
    const decision = decide(state, incoming);
    decisions.push(decision);
    if (decision.kind === 'change') state = decision.state;
  }
  return { state, decisions };
}
