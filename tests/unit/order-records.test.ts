/**
 * The order aggregate's dealings with its transaction records (src/domain/order.ts and
 * order-slots.ts): which records a decision asks for, which it creates and which it changes, and
 * how far one change releases a buffer (its writes fit one Cosmos DB transactional batch). Pure and
 * fast: no store, only the domain.
 */
import { entryDigest } from '../../src/domain/digest';
import { validateEntry, type Entry } from '../../src/domain/entry';
import {
  admit,
  decideRelease,
  MAX_RECORD_WRITES,
  newOrderState,
  recordsNeeded,
  releasable,
  releaseNeeded,
  waitingFor,
  type BufferedEntry,
  type OrderState,
  type TransactionRecord,
} from '../../src/domain/order';
import { judgeSeen } from '../../src/domain/order-slots';
import { resequence } from '../../src/domain/sequential-convoy';
import {
  asChange,
  decide,
  message,
  messageIdOf,
  rawAdded,
  rawAmended,
  rawCreated,
  recordsOf,
  ORDER_ID,
  type Raw,
} from '../support/domain';

function entryOf(raw: Raw): Entry {
  const result = validateEntry(raw);
  if (!result.ok) throw new Error(result.problems.join('; '));
  return result.value;
}

function waiting(raw: Raw): BufferedEntry {
  const entry = entryOf(raw);
  return { messageId: messageIdOf(raw), digest: entryDigest(entry), entry, properties: {} };
}

/** An open order (its OrderCreated applied at 1) with `buffered` waiting, as a header only. */
function openWith(appliedSequence: number, buffered: Raw[]): OrderState {
  return {
    ...newOrderState(ORDER_ID),
    status: 'open',
    customerId: 'C-9',
    currency: 'EUR',
    appliedSequence,
    buffered: buffered.map(waiting),
  };
}

const add = (sequence: number) => rawAdded(sequence, `T-${sequence}`, 1, 10);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function record(raw: Raw, outcome: TransactionRecord['outcome'], line?: TransactionRecord['line']) {
  const entry = entryOf(raw);
  const result: TransactionRecord = {
    transactionId: entry.transactionId,
    digest: entryDigest(entry),
    sequence: entry.sequence,
    outcome,
  };
  if (line !== undefined) result.line = line;
  return result;
}

describe('recordsNeeded', () => {
  it('asks for nothing when the transactionId is buffered, whatever sequence it comes with', () => {
    const state = openWith(1, [add(4)]);
    expect(recordsNeeded(state, entryOf(rawAdded(1, 'T-4', 1, 10)))).toEqual([]);
    expect(recordsNeeded(state, entryOf(add(4)))).toEqual([]);
  });

  it("asks for the entry's own record when its slot is taken, up to the last slot taken", () => {
    const state = openWith(3, []);
    expect(recordsNeeded(state, entryOf(rawAmended(3, 'T-9', 'T-2', { quantity: 2 })))).toEqual(['T-9']);
    expect(recordsNeeded(state, entryOf(rawAmended(1, 'T-8', 'T-2', { quantity: 2 })))).toEqual(['T-8']);
  });

  it('asks for the target of the next expected amendment, none for one ahead of a gap', () => {
    const state = openWith(3, []);
    expect(recordsNeeded(state, entryOf(rawAmended(4, 'T-4', 'T-2', { quantity: 2 })))).toEqual(['T-2']);
    expect(recordsNeeded(state, entryOf(rawAmended(5, 'T-5', 'T-2', { quantity: 2 })))).toEqual([]);
    expect(recordsNeeded(state, entryOf(add(4)))).toEqual([]);
  });

  it('asks for the targets of the amendments it would release, each once, up to the next gap', () => {
    const state = openWith(1, [
      rawAmended(3, 'T-3', 'T-A', { quantity: 2 }),
      add(4),
      rawAmended(5, 'T-5', 'T-B', { unitPrice: 2 }),
      rawAmended(6, 'T-6', 'T-A', { unitPrice: 3 }),
      rawAmended(8, 'T-8', 'T-C', { quantity: 2 }),
    ]);
    expect(recordsNeeded(state, entryOf(rawAmended(2, 'T-2', 'T-B', { quantity: 1 })))).toEqual([
      'T-B',
      'T-A',
    ]);
  });

  it(`looks no further than the ${MAX_RECORD_WRITES} buffered entries after the incoming one`, () => {
    const last = 2 + MAX_RECORD_WRITES; // the 99th after the incoming entry at 2
    const state = openWith(1, [
      ...range(3, last - 1).map(add),
      rawAmended(last, `T-${last}`, 'T-A', { quantity: 2 }),
      rawAmended(last + 1, `T-${last + 1}`, 'T-B', { quantity: 2 }),
    ]);
    expect(recordsNeeded(state, entryOf(add(2)))).toEqual(['T-A']);
  });
});

describe('releaseNeeded', () => {
  it('asks for nothing while the gap is open', () => {
    expect(releaseNeeded(openWith(1, [rawAmended(3, 'T-3', 'T-A', { quantity: 2 })]))).toEqual([]);
  });

  it(`asks for the targets of the first ${MAX_RECORD_WRITES} releasable entries, up to the next gap`, () => {
    const last = MAX_RECORD_WRITES + 1; // the 99th from 2
    const state = openWith(1, [
      rawAmended(2, 'T-2', 'T-Z', { quantity: 2 }),
      ...range(3, last - 1).map(add),
      rawAmended(last, `T-${last}`, 'T-A', { quantity: 2 }),
      rawAmended(last + 1, `T-${last + 1}`, 'T-B', { quantity: 2 }),
    ]);
    expect(releaseNeeded(state)).toEqual(['T-Z', 'T-A']);
    const gap = openWith(1, [
      rawAmended(2, 'T-2', 'T-Z', { quantity: 2 }),
      rawAmended(4, 'T-4', 'T-A', { quantity: 2 }),
    ]);
    expect(releaseNeeded(gap)).toEqual(['T-Z']);
  });
});

describe('waitingFor, releasable and decideRelease', () => {
  it('an order with nothing buffered is neither waiting nor releasable, and releases nothing', () => {
    const state = openWith(4, []);
    expect(releasable(state)).toBe(false);
    expect(waitingFor(state)).toBeNull();
    expect(decideRelease(state)).toBeNull();
  });

  it('an order whose first buffered entry is next is releasable, waits for nothing', () => {
    const state = openWith(1, [add(2), add(4)]);
    expect(releasable(state)).toBe(true);
    expect(waitingFor(state)).toBeNull();
    const gap = openWith(1, [add(3)]);
    expect(releasable(gap)).toBe(false);
    expect(waitingFor(gap)).toBe(2);
    expect(decideRelease(gap)).toBeNull();
  });

  it('releases up to the next gap, creating no record and changing those of the released entries', () => {
    const release = decideRelease(
      openWith(1, [add(2), rawAmended(3, 'T-3', 'T-2', { quantity: 4 }), add(5)]),
    );
    expect(release).toEqual({
      kind: 'release',
      state: { ...openWith(3, [add(5)]), lineCount: 1, total: 40 },
      applied: [
        { transactionId: 'T-2', sequence: 2 },
        { transactionId: 'T-3', sequence: 3 },
      ],
      rejected: [],
      submitted: false,
      created: null,
      changed: [
        record(add(2), 'applied', { sku: 'SKU-T-2', quantity: 4, unitPrice: 10 }),
        record(rawAmended(3, 'T-3', 'T-2', { quantity: 4 }), 'applied'),
      ],
    });
  });
});

describe('the records a change creates and changes', () => {
  it('buffering creates the entry\'s record, "buffered", and changes none', () => {
    const change = asChange(resequence(openWith(1, []), entryOf(add(3)), 'd'.repeat(64), 'm-3'));
    expect(change.created).toEqual({
      transactionId: 'T-3',
      digest: 'd'.repeat(64),
      sequence: 3,
      outcome: 'buffered',
    });
    expect(change.changed).toEqual([]);
  });

  it("a change creates the incoming entry's record (here rejected) and changes those of the entries it released and the lines they amended", () => {
    const known = new Map([
      ['T-2', record(add(2), 'applied', { sku: 'SKU-T-2', quantity: 1, unitPrice: 10 })],
    ]);
    const state = {
      ...openWith(2, [add(4), rawAmended(5, 'T-5', 'T-2', { quantity: 3 })]),
      lineCount: 1,
      total: 10,
    };
    const incoming = rawAmended(3, 'T-3', 'T-4', { unitPrice: 7 });
    const change = asChange(
      resequence(state, entryOf(incoming), entryDigest(entryOf(incoming)), 'm-3', {}, known),
    );
    expect(change.outcome).toBe('rejected');
    expect(change.created).toEqual(record(incoming, 'rejected'));
    expect(change.changed).toEqual([
      record(add(4), 'applied', { sku: 'SKU-T-4', quantity: 1, unitPrice: 10 }),
      record(add(2), 'applied', { sku: 'SKU-T-2', quantity: 3, unitPrice: 10 }),
      record(rawAmended(5, 'T-5', 'T-2', { quantity: 3 }), 'applied'),
    ]);
    expect(change.state).toMatchObject({ appliedSequence: 5, buffered: [], lineCount: 2, total: 40 });
  });

  it('the created record holds the line as amended by an entry released in the same change', () => {
    const amend = rawAmended(4, 'T-4', 'T-2', { quantity: 5 });
    const change = asChange(resequence(openWith(1, [add(3), amend]), entryOf(add(2)), 'd'.repeat(64), 'm-2'));
    expect(change.created).toEqual({
      transactionId: 'T-2',
      digest: 'd'.repeat(64),
      sequence: 2,
      outcome: 'applied',
      line: { sku: 'SKU-T-2', quantity: 5, unitPrice: 10 },
    });
    expect(change.changed.map((changed) => changed.transactionId)).toEqual(['T-3', 'T-4']);
  });
});

describe(`one change writes at most ${MAX_RECORD_WRITES} records besides the header`, () => {
  const BUFFERED = 250;

  it('releases what fits in one batch, then the rest in later releases, each as far as it fits', () => {
    let state = asChange(decide(undefined, message(rawCreated(1, 'T-1')))).state;
    for (const sequence of range(3, BUFFERED + 2))
      state = asChange(decide(state, message(add(sequence)))).state;
    expect(state.buffered).toHaveLength(BUFFERED);

    // The incoming entry takes one record; each released entry may write two (its own and a line it
    // amends), so the release stops once one more could pass MAX_RECORD_WRITES.
    const first = asChange(decide(state, message(add(2))));
    const fits = MAX_RECORD_WRITES - 1;
    expect(first.applied.map((applied) => applied.sequence)).toEqual(range(2, fits + 1));
    expect(first.created?.transactionId).toBe('T-2');
    expect(first.changed.map((changed) => changed.sequence)).toEqual(range(3, fits + 1));
    expect(first.state.appliedSequence).toBe(fits + 1);
    expect(first.state.buffered.map((left) => left.entry.sequence)).toEqual(range(fits + 2, BUFFERED + 2));
    expect(releasable(first.state)).toBe(true);
    expect(waitingFor(first.state)).toBeNull();

    const second = decideRelease(first.state, recordsOf(first.state));
    expect(second?.created).toBeNull();
    expect(second?.applied.map((applied) => applied.sequence)).toEqual(range(fits + 2, 2 * fits + 1));
    expect(second?.changed).toHaveLength(fits);
    expect(second?.state.appliedSequence).toBe(2 * fits + 1);

    const third = second && decideRelease(second.state);
    expect(third?.applied.map((applied) => applied.sequence)).toEqual(range(2 * fits + 2, BUFFERED + 2));
    expect(third?.state.buffered).toEqual([]);
    expect(third?.state.lineCount).toBe(BUFFERED + 1);
    expect(third && decideRelease(third.state)).toBeNull();
  });
});

describe('judgeSeen', () => {
  it('names the outcome, the sequence and both digests (their first 16 characters) of a mismatch', () => {
    const seen = { digest: 'a'.repeat(16) + 'b'.repeat(48), sequence: 7, outcome: 'rejected' as const };
    expect(judgeSeen(seen, 'T-7', 'c'.repeat(16) + 'd'.repeat(48))).toEqual({
      kind: 'park',
      reason: 'digest-mismatch',
      description: `transactionId T-7 was already rejected at sequence 7 with other content (digest ${'a'.repeat(16)}, this one ${'c'.repeat(16)})`,
      transactionId: 'T-7',
    });
    expect(judgeSeen(seen, 'T-7', seen.digest)).toEqual({
      kind: 'duplicate',
      transactionId: 'T-7',
      previous: 'rejected',
    });
  });
});

describe('the transactionId an invalid message is parked with', () => {
  it.each<[string, unknown]>([
    ['no body', undefined],
    ['a null body', null],
    ['JSON text of null', 'null'],
    ['a number', 42],
    ['JSON text of a string', '"T-1"'],
    ['an empty transactionId', { transactionId: '' }],
    ['a numeric transactionId', { transactionId: 7 }],
    ['a transactionId that is an array', { transactionId: ['T-1'] }],
    ['a transactionId that is an object with a length', { transactionId: { length: 3 } }],
    [
      'bytes that are not JSON, whatever the byte array carries',
      Object.assign(Buffer.from('{"transactionId": "T-1",'), { transactionId: 'T-1' }),
    ],
  ])('is null for %s', (_case, body) => {
    expect(admit({ messageId: 'm', sessionId: ORDER_ID, body })).toMatchObject({
      kind: 'park',
      reason: 'invalid',
      transactionId: null,
    });
  });
});
