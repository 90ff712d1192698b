import fc from 'fast-check';
import { entryDigest } from '../../src/domain/digest';
import { validateEntry, type Entry } from '../../src/domain/entry';
import {
  type IncomingMessage,
  type OrderLine,
  type OrderState,
  type OrderStatus,
  type TransactionRecord,
} from '../../src/domain/order';
import {
  decide,
  linesOf,
  transactionsOf,
  rawAdded,
  rawAmended,
  rawCreated,
  deepFreeze,
  rawDeleted,
  messageIdOf,
  ORDER_ID,
  type Raw,
} from '../support/domain';

/** One step after the OrderCreated: add a line, or amend one of the lines added before it. */
type Step =
  | { kind: 'add'; quantity: number; unitPrice: number }
  | { kind: 'amend'; target: number; quantity?: number; unitPrice?: number };

const quantityArb = fc.integer({ min: 1, max: 50 });
const unitPriceArb = fc.integer({ min: 0, max: 100_000 });

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), quantity: quantityArb, unitPrice: unitPriceArb }),
  fc.oneof(
    fc.record({ kind: fc.constant('amend' as const), target: fc.nat(), quantity: quantityArb }),
    fc.record({ kind: fc.constant('amend' as const), target: fc.nat(), unitPrice: unitPriceArb }),
    fc.record({
      kind: fc.constant('amend' as const),
      target: fc.nat(),
      quantity: quantityArb,
      unitPrice: unitPriceArb,
    }),
  ),
);

/** A valid order: OrderCreated at 1, adds and amends of existing lines, maybe an OrderDeleted, the last flagged final. */
function buildOrder(steps: readonly Step[], deleteAt: number | null): Raw[] {
  const entries: Raw[] = [rawCreated(1, 'T-1')];
  const addedIds: string[] = [];
  for (const step of steps) {
    const sequence = entries.length + 1;
    const transactionId = `T-${sequence}`; // unique: sequences only grow, and the delete is named apart
    if (step.kind === 'amend' && addedIds.length > 0) {
      const change = { quantity: step.quantity, unitPrice: step.unitPrice };
      if (change.quantity === undefined) delete change.quantity;
      if (change.unitPrice === undefined) delete change.unitPrice;
      entries.push(rawAmended(sequence, transactionId, addedIds[step.target % addedIds.length], change));
    } else {
      const quantity = step.kind === 'add' ? step.quantity : (step.quantity ?? 1);
      const unitPrice = step.kind === 'add' ? step.unitPrice : (step.unitPrice ?? 0);
      entries.push(rawAdded(sequence, transactionId, quantity, unitPrice));
      addedIds.push(transactionId);
    }
  }
  if (deleteAt !== null) {
    const index = 1 + (deleteAt % entries.length);
    entries.splice(index, 0, rawDeleted(0, 'T-deleted', { data: { reason: 'customer asked' } }));
    entries.forEach((entry, i) => {
      entry.sequence = i + 1;
    });
  }
  entries[entries.length - 1] = { ...entries[entries.length - 1], final: true };
  return entries;
}

function validated(raw: Raw): Entry {
  const result = validateEntry(raw);
  if (!result.ok) throw new Error(`generator made an invalid entry: ${result.problems.join('; ')}`);
  return result.value;
}

interface Reference {
  status: OrderStatus;
  customerId: string;
  currency: string;
  lines: OrderLine[];
  total: number;
  appliedSequence: number;
  finalSequence: number | null;
  transactions: Record<string, Omit<TransactionRecord, 'transactionId' | 'line'>>;
  submits: boolean;
}

/** The order written by hand: each entry applied once, in sequence order, by the rules of docs/messages.md (the order of checks)/1.4. */
function reference(entries: readonly Entry[]): Reference {
  let status: OrderStatus = 'pending';
  let customerId = '';
  let currency = '';
  let lines: OrderLine[] = [];
  let finalSequence: number | null = null;
  const transactions: Record<string, Omit<TransactionRecord, 'transactionId' | 'line'>> = {};
  for (const entry of entries) {
    let outcome: TransactionRecord['outcome'] = 'applied';
    if (status === 'deleted') {
      outcome = 'rejected';
    } else if (entry.type === 'OrderCreated') {
      status = 'open';
      customerId = entry.data.customerId;
      currency = entry.data.currency;
    } else if (entry.type === 'TransactionAdded') {
      lines.push({ transactionId: entry.transactionId, ...entry.data });
    } else if (entry.type === 'TransactionAmended') {
      const { targetTransactionId, quantity, unitPrice } = entry.data;
      lines = lines.map((line) =>
        line.transactionId === targetTransactionId
          ? { ...line, quantity: quantity ?? line.quantity, unitPrice: unitPrice ?? line.unitPrice }
          : line,
      );
    } else {
      status = 'deleted';
    }
    if (outcome === 'applied' && entry.final === true && status !== 'deleted') {
      status = 'submitted';
      finalSequence = entry.sequence;
    }
    transactions[entry.transactionId] = { digest: entryDigest(entry), sequence: entry.sequence, outcome };
  }
  return {
    status,
    customerId,
    currency,
    lines,
    total: lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0),
    appliedSequence: entries.length,
    finalSequence,
    transactions,
    submits: finalSequence !== null,
  };
}

/** A JSON text of `value` with its keys in a shuffled order and some whitespace: the same content. */
function reorderedJson(value: unknown, seed: number): string {
  if (Array.isArray(value)) return `[${value.map((item) => reorderedJson(item, seed)).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    const rotated = [...keys.slice(seed % keys.length), ...keys.slice(0, seed % keys.length)].reverse();
    const record = value as Record<string, unknown>;
    return `{ ${rotated.map((key) => `${JSON.stringify(key)}: ${reorderedJson(record[key], seed)}`).join(',\n')} }`;
  }
  return JSON.stringify(value);
}

type Encoding = 'object' | 'text' | 'bytes';

function encode(raw: Raw, encoding: Encoding, seed: number): unknown {
  if (encoding === 'object') return raw;
  const text = reorderedJson(raw, seed);
  return encoding === 'text' ? text : Buffer.from(text, 'utf8');
}

const scenarioArb = fc
  .record({
    steps: fc.array(stepArb, { maxLength: 12 }),
    deleteAt: fc.option(fc.nat(), { nil: null, freq: 3 }),
  })
  .chain(({ steps, deleteAt }) => {
    const entries = buildOrder(steps, deleteAt);
    const count = entries.length;
    const indices = entries.map((_, i) => i);
    return fc.record({
      entries: fc.constant(entries),
      order: fc.shuffledSubarray(indices, { minLength: count, maxLength: count }),
      encodings: fc.array(fc.constantFrom<Encoding>('object', 'text', 'bytes'), {
        minLength: count,
        maxLength: count,
      }),
      duplicates: fc.array(fc.record({ of: fc.nat({ max: count - 1 }), at: fc.nat() }), { maxLength: 8 }),
      seed: fc.nat(),
    });
  });

describe('decide, whatever the arrival order and however many redeliveries', () => {
  it('ends in the state of applying each entry once in sequence order, and submits exactly once iff that does', () => {
    fc.assert(
      fc.property(scenarioArb, ({ entries, order, encodings, duplicates, seed }) => {
        const messages: IncomingMessage[] = entries.map((raw, i) => ({
          messageId: messageIdOf(raw),
          sessionId: ORDER_ID,
          body: encode(raw, encodings[i], seed + i),
        }));
        const arrivals = order.map((i) => messages[i]);
        for (const { of, at } of duplicates) arrivals.splice(at % (arrivals.length + 1), 0, messages[of]);

        let state: OrderState | undefined;
        let submissions = 0;
        let duplicateCount = 0;
        const applied: string[] = [];
        const rejected: string[] = [];
        for (const incoming of arrivals) {
          const decision = decide(state === undefined ? undefined : deepFreeze(state), incoming);
          if (decision.kind === 'park') throw new Error(`parked: ${JSON.stringify(decision)}`);
          if (decision.kind === 'duplicate') {
            duplicateCount += 1;
            continue;
          }
          state = decision.state;
          if (decision.submitted) submissions += 1;
          applied.push(...decision.applied.map((item) => item.transactionId));
          rejected.push(...decision.rejected.map((item) => item.transactionId));
        }

        const expected = reference(entries.map(validated));
        expect(state).toBeDefined();
        const actual = state as OrderState;
        expect({
          status: actual.status,
          customerId: actual.customerId,
          currency: actual.currency,
          lines: linesOf(actual),
          total: actual.total,
          appliedSequence: actual.appliedSequence,
          finalSequence: actual.finalSequence,
          buffered: actual.buffered,
          transactions: transactionsOf(actual),
        }).toEqual({
          status: expected.status,
          customerId: expected.customerId,
          currency: expected.currency,
          lines: expected.lines,
          total: expected.total,
          appliedSequence: expected.appliedSequence,
          finalSequence: expected.finalSequence,
          buffered: [],
          transactions: expected.transactions,
        });
        expect(submissions).toBe(expected.submits ? 1 : 0);
        expect(duplicateCount).toBe(duplicates.length);
        const outcomes = Object.entries(expected.transactions);
        expect([...applied].sort()).toEqual(
          outcomes
            .filter(([, record]) => record.outcome === 'applied')
            .map(([id]) => id)
            .sort(),
        );
        expect([...rejected].sort()).toEqual(
          outcomes
            .filter(([, record]) => record.outcome === 'rejected')
            .map(([id]) => id)
            .sort(),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('generates the cases the property is about', () => {
    const seen = { deleted: 0, submitted: 0, amended: 0, buffered: 0, rejected: 0 };
    fc.assert(
      fc.property(scenarioArb, ({ entries, order }) => {
        const expected = reference(entries.map(validated));
        if (expected.status === 'deleted') seen.deleted += 1;
        if (expected.submits) seen.submitted += 1;
        if (entries.some((entry) => entry.type === 'TransactionAmended')) seen.amended += 1;
        if (order[0] !== 0) seen.buffered += 1;
        if (Object.values(expected.transactions).some((record) => record.outcome === 'rejected'))
          seen.rejected += 1;
      }),
      { numRuns: 300, seed: 42 },
    );
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(20);
  });
});
