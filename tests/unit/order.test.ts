import { entryDigest } from '../../src/domain/digest';
import { validateEntry, type Entry } from '../../src/domain/entry';
import {
  admit,
  MAX_CORRELATION_ID_BYTES,
  MAX_MESSAGE_ID_BYTES,
  newOrderState,
  waitingFor,
  type OrderState,
} from '../../src/domain/order';
import { resequence } from '../../src/domain/sequential-convoy';
import {
  decide,
  linesOf,
  transactionsOf,
  ORDER_ID,
  rawAdded,
  rawAmended,
  asChange,
  asDuplicate,
  asPark,
  rawCreated,
  deepFreeze,
  rawDeleted,
  feed,
  jsonCopy,
  message,
  messageIdOf,
  type Raw,
} from '../support/domain';

/** The state after feeding `raws` in this order, each of which must change the state. */
function stateAfter(...raws: Raw[]): OrderState {
  const { state, decisions } = feed(
    undefined,
    raws.map((raw) => message(raw)),
  );
  decisions.forEach(asChange);
  if (state === undefined) throw new Error('no state');
  return state;
}

function entryOf(raw: Raw): Entry {
  const result = validateEntry(raw);
  if (!result.ok) throw new Error(result.problems.join('; '));
  return result.value;
}

function digestOf(raw: Raw): string {
  return entryDigest(entryOf(raw));
}

const T1 = rawCreated(1, 'T-1');
const T2 = rawAdded(2, 'T-2', 2, 1250);

describe('newOrderState and waitingFor', () => {
  it('starts pending, empty, with no slot taken', () => {
    expect(newOrderState('O-5')).toEqual({
      orderId: 'O-5',
      status: 'pending',
      customerId: null,
      currency: null,
      lineCount: 0,
      total: 0,
      appliedSequence: 0,
      finalSequence: null,
      buffered: [],
    });
    expect(waitingFor(newOrderState('O-5'))).toBeNull();
  });

  it('waits for the slot after the last one taken while entries are buffered', () => {
    const state = stateAfter(T1, rawAdded(4, 'T-4', 1, 1));
    expect(waitingFor(state)).toBe(2);
    expect(waitingFor(stateAfter(T1, T2))).toBeNull();
  });
});

describe('decide: 1. invalid', () => {
  it('parks a body that is not JSON as invalid, with no transactionId', () => {
    const park = asPark(
      decide(undefined, { messageId: 'm-1', sessionId: ORDER_ID, body: '{"transactionId": "T-1",' }),
    );
    expect(park.reason).toBe('invalid');
    expect(park.description).toMatch(/^body is not valid JSON: /);
    expect(park.transactionId).toBeNull();
  });

  it('parks an entry that breaks a rule of 1.2, naming the field and the rule, with its transactionId', () => {
    const body = rawAdded(2, 'T-2', 0, 1250);
    const park = asPark(decide(stateAfter(T1), { messageId: 'm-2', sessionId: ORDER_ID, body }));
    expect(park).toEqual({
      kind: 'park',
      reason: 'invalid',
      description: 'data.quantity must be an integer >= 1, got 0',
      transactionId: 'T-2',
    });
  });

  it.each<[string, (raw: Raw) => unknown]>([
    ['JSON text', (raw) => JSON.stringify(raw)],
    ['bytes', (raw) => Buffer.from(JSON.stringify(raw))],
    ['parsed JSON', (raw) => raw],
  ])('keeps the transactionId of an invalid entry that arrives as %s', (_case, encode) => {
    const body = encode({ ...T2, sequence: 0 });
    const park = asPark(decide(undefined, { messageId: 'm-2', sessionId: ORDER_ID, body }));
    expect(park.reason).toBe('invalid');
    expect(park.description).toBe('sequence must be an integer >= 1, got 0');
    expect(park.transactionId).toBe('T-2');
  });

  it('describes every broken field', () => {
    const park = asPark(
      decide(undefined, message({ ...T1, sequence: 'one', data: { customerId: 'C-9', currency: 'eur' } })),
    );
    expect(park.description).toBe(
      'sequence must be an integer >= 1, got "one"; data.currency must be three capital letters, got "eur"',
    );
  });

  it('takes no sequence slot: a valid entry at the same sequence is applied next', () => {
    const state = stateAfter(T1);
    const park = asPark(decide(state, message(rawAdded(2, 'T-bad', 1, -5))));
    expect(park.reason).toBe('invalid');
    const change = asChange(decide(state, message(T2)));
    expect(change.outcome).toBe('applied');
    expect(change.state.appliedSequence).toBe(2);
  });

  it('is invalid even when the orderId also differs from the session', () => {
    const park = asPark(decide(undefined, message({ ...T2, orderId: 'O-2', sequence: -1 }, ORDER_ID)));
    expect(park.reason).toBe('invalid');
    expect(park.description).toBe('sequence must be an integer >= 1, got -1');
  });

  it('is invalid when the orderId itself breaks its rule, not misrouted', () => {
    const park = asPark(decide(undefined, message({ ...T1, orderId: 'O/1' }, ORDER_ID)));
    expect(park.reason).toBe('invalid');
    expect(park.description).toContain('orderId must not contain');
  });
});

describe('decide: 2. misrouted', () => {
  it('parks an entry whose orderId is not the session', () => {
    const park = asPark(decide(undefined, message(T1, 'O-2')));
    expect(park.reason).toBe('misrouted');
    expect(park.transactionId).toBe('T-1');
    expect(park.description).toContain('O-1');
    expect(park.description).toContain('O-2');
  });

  it('is misrouted even when it is a duplicate in its own order', () => {
    const state = stateAfter(T1, T2);
    expect(asPark(decide(state, message(T2, 'O-2'))).reason).toBe('misrouted');
  });

  it('is misrouted even when it would conflict with or be rejected by the state it was given', () => {
    const state = stateAfter(T1, T2);
    expect(asPark(decide(state, message(rawAdded(2, 'T-9', 1, 1), 'O-2'))).reason).toBe('misrouted');
    expect(asPark(decide(state, message(rawCreated(3, 'T-9'), 'O-2'))).reason).toBe('misrouted');
  });

  it('compares the orderId exactly', () => {
    expect(asPark(decide(undefined, message(T1, 'o-1'))).reason).toBe('misrouted');
    expect(asPark(decide(undefined, message(T1, 'O-1 '))).reason).toBe('misrouted');
  });
});

describe('decide: 3. duplicate and digest-mismatch', () => {
  it('answers duplicate for the same content of an applied entry, and changes nothing', () => {
    const state = stateAfter(T1, T2);
    expect(decide(state, message(T2))).toEqual({
      kind: 'duplicate',
      transactionId: 'T-2',
      previous: 'applied',
    });
    expect(asDuplicate(decide(state, message(T1))).previous).toBe('applied');
  });

  it('recognises the same content in another form: key order, text, bytes, final: false, unknown fields', () => {
    const state = stateAfter(T1, T2);
    const reordered =
      '{"data":{"unitPrice":1250,"sku":"SKU-T-2","quantity":2},"type":"TransactionAdded",' +
      '"sequence":2,"orderId":"O-1","transactionId":"T-2","final":false,"note":"resent"}';
    for (const body of [reordered, Buffer.from(reordered), JSON.parse(reordered) as unknown]) {
      expect(decide(state, { messageId: 'other-id', sessionId: ORDER_ID, body }).kind).toBe('duplicate');
    }
  });

  it('answers duplicate for a buffered entry', () => {
    const T4 = rawAdded(4, 'T-4', 1, 100);
    const state = stateAfter(T1, T4);
    expect(decide(state, message(T4))).toEqual({
      kind: 'duplicate',
      transactionId: 'T-4',
      previous: 'buffered',
    });
  });

  it('answers duplicate for a rejected entry', () => {
    const bad = rawAmended(2, 'T-2', 'T-404', { quantity: 2 });
    const state = stateAfter(T1, bad);
    expect(decide(state, message(bad))).toEqual({
      kind: 'duplicate',
      transactionId: 'T-2',
      previous: 'rejected',
    });
  });

  it('answers duplicate for a buffered entry once it has been released and applied', () => {
    const T3 = rawAdded(3, 'T-3', 1, 100);
    const state = stateAfter(T1, T3, T2);
    expect(asDuplicate(decide(state, message(T3))).previous).toBe('applied');
  });

  it.each<[string, Raw]>([
    ['other data', rawAdded(2, 'T-2', 3, 1250)],
    ['another sequence', rawAdded(3, 'T-2', 2, 1250)],
    ['the final flag', rawAdded(2, 'T-2', 2, 1250, { final: true })],
    ['another type', rawDeleted(2, 'T-2')],
  ])('parks the same transactionId with %s as digest-mismatch, with no effect', (_case, reused) => {
    const state = stateAfter(T1, T2);
    const park = asPark(decide(state, message(reused)));
    expect(park.reason).toBe('digest-mismatch');
    expect(park.transactionId).toBe('T-2');
    expect(park.description).toContain('T-2');
    expect(park.description).toContain(digestOf(T2).slice(0, 16));
    expect(park.description).toContain(digestOf(reused).slice(0, 16));
  });

  it('parks a reuse of the transactionId of a buffered entry as digest-mismatch', () => {
    const state = stateAfter(T1, rawAdded(4, 'T-4', 1, 100));
    expect(asPark(decide(state, message(rawAdded(4, 'T-4', 9, 100)))).reason).toBe('digest-mismatch');
  });

  it('parks a reuse of the transactionId of a rejected entry as digest-mismatch', () => {
    const state = stateAfter(T1, rawAmended(2, 'T-2', 'T-404', { quantity: 2 }));
    expect(asPark(decide(state, message(rawAmended(2, 'T-2', 'T-404', { quantity: 3 })))).reason).toBe(
      'digest-mismatch',
    );
  });

  it('checks the digest before the sequence: an old id with new content at a taken slot is a mismatch', () => {
    const state = stateAfter(T1, T2, rawAdded(3, 'T-3', 1, 1));
    expect(asPark(decide(state, message(rawAdded(3, 'T-2', 2, 1250)))).reason).toBe('digest-mismatch');
  });
});

describe('decide: 4. sequence-conflict', () => {
  it('parks another transactionId at a slot already taken, saying it is taken', () => {
    const state = stateAfter(T1, T2, rawAdded(3, 'T-3', 1, 1));
    const park = asPark(decide(state, message(rawAdded(2, 'T-9', 1, 1))));
    expect(park.reason).toBe('sequence-conflict');
    expect(park.transactionId).toBe('T-9');
    expect(park.description).toBe('sequence 2 of order O-1 is already taken by another transaction');
    expect(asPark(decide(state, message(rawCreated(1, 'T-8')))).reason).toBe('sequence-conflict');
    expect(asPark(decide(state, message(rawAdded(3, 'T-7', 1, 1)))).reason).toBe('sequence-conflict');
  });

  it('parks another transactionId at a slot taken by a rejected entry', () => {
    const state = stateAfter(T1, rawAmended(2, 'T-2', 'T-404', { quantity: 2 }));
    const park = asPark(decide(state, message(rawAdded(2, 'T-9', 1, 1))));
    expect(park.reason).toBe('sequence-conflict');
    expect(park.description).toBe('sequence 2 of order O-1 is already taken by another transaction');
  });

  it('parks another transactionId at a sequence held by a buffered entry', () => {
    const state = stateAfter(T1, rawAdded(3, 'T-3', 1, 1));
    const park = asPark(decide(state, message(rawAdded(3, 'T-9', 5, 5))));
    expect(park.reason).toBe('sequence-conflict');
    expect(park.description).toContain('T-3');
    expect(park.description).toContain('buffered');
  });

  it('applies no slot and keeps the state: the next expected entry still applies', () => {
    const state = stateAfter(T1, T2);
    asPark(decide(state, message(rawAdded(2, 'T-9', 1, 1))));
    expect(asChange(decide(state, message(rawAdded(3, 'T-3', 1, 1)))).state.appliedSequence).toBe(3);
  });
});

describe('decide: 5. buffered, then released in order', () => {
  it('buffers an entry ahead of a gap and applies it once the gap fills', () => {
    const first = asChange(decide(undefined, message(T2)));
    expect(first).toMatchObject({
      outcome: 'buffered',
      transactionId: 'T-2',
      applied: [],
      rejected: [],
      submitted: false,
    });
    expect(first.state.status).toBe('pending');
    expect(first.state.appliedSequence).toBe(0);
    expect(first.state.buffered).toEqual([
      { messageId: messageIdOf(T2), digest: digestOf(T2), entry: T2, properties: {} },
    ]);
    expect(transactionsOf(first.state)).toEqual({
      'T-2': { digest: digestOf(T2), sequence: 2, outcome: 'buffered' },
    });
    expect(waitingFor(first.state)).toBe(1);

    const second = asChange(decide(first.state, message(T1)));
    expect(second.outcome).toBe('applied');
    expect(second.transactionId).toBe('T-1');
    expect(second.applied).toEqual([
      { transactionId: 'T-1', sequence: 1 },
      { transactionId: 'T-2', sequence: 2 },
    ]);
    expect(second.state.buffered).toEqual([]);
    expect(second.state.appliedSequence).toBe(2);
    expect(transactionsOf(second.state)['T-2']).toEqual({
      digest: digestOf(T2),
      sequence: 2,
      outcome: 'applied',
    });
    expect(linesOf(second.state)).toEqual([
      { transactionId: 'T-2', sku: 'SKU-T-2', quantity: 2, unitPrice: 1250 },
    ]);
    expect(waitingFor(second.state)).toBeNull();
  });

  it('keeps several buffered entries ordered by sequence and releases only up to the next gap', () => {
    const e = (sequence: number) => rawAdded(sequence, `T-${sequence}`, 1, sequence * 100);
    let state = stateAfter(T1);
    for (const sequence of [4, 6, 3]) {
      const change = asChange(decide(state, message(e(sequence))));
      expect(change.outcome).toBe('buffered');
      state = change.state;
    }
    expect(state.buffered.map((waiting) => waiting.entry.sequence)).toEqual([3, 4, 6]);
    expect(waitingFor(state)).toBe(2);
    expect(linesOf(state)).toEqual([]);

    const partial = asChange(decide(state, message(e(2))));
    expect(partial.applied.map((item) => item.sequence)).toEqual([2, 3, 4]);
    expect(partial.state.appliedSequence).toBe(4);
    expect(partial.state.buffered.map((waiting) => waiting.entry.sequence)).toEqual([6]);
    expect(waitingFor(partial.state)).toBe(5);
    expect(linesOf(partial.state).map((line) => line.transactionId)).toEqual(['T-2', 'T-3', 'T-4']);

    const rest = asChange(decide(partial.state, message(e(5))));
    expect(rest.applied.map((item) => item.sequence)).toEqual([5, 6]);
    expect(rest.state.buffered).toEqual([]);
    expect(rest.state.appliedSequence).toBe(6);
    expect(waitingFor(rest.state)).toBeNull();
    expect(linesOf(rest.state).map((line) => line.transactionId)).toEqual([
      'T-2',
      'T-3',
      'T-4',
      'T-5',
      'T-6',
    ]);
    expect(rest.state.total).toBe(200 + 300 + 400 + 500 + 600);
  });

  it('rejects a released entry that breaks a rule and goes on with the next', () => {
    const bad = rawAmended(3, 'T-3', 'T-404', { quantity: 2 });
    const T4 = rawAdded(4, 'T-4', 1, 10);
    const state = stateAfter(T1, bad, T4);
    const change = asChange(decide(state, message(T2)));
    expect(change.outcome).toBe('applied');
    expect(change.applied).toEqual([
      { transactionId: 'T-2', sequence: 2 },
      { transactionId: 'T-4', sequence: 4 },
    ]);
    expect(change.rejected).toHaveLength(1);
    expect(change.rejected[0]).toMatchObject({
      messageId: messageIdOf(bad),
      transactionId: 'T-3',
      sequence: 3,
    });
    expect(change.rejected[0].description).toContain('T-404');
    expect(transactionsOf(change.state)['T-3'].outcome).toBe('rejected');
    expect(change.state.appliedSequence).toBe(4);
    expect(change.state.total).toBe(2 * 1250 + 10);
  });

  it('keeps the messageId a buffered entry arrived with', () => {
    const state = asChange(
      decide(stateAfter(T1), {
        messageId: 'sent-as-this',
        sessionId: ORDER_ID,
        body: rawAdded(3, 'T-3', 1, 1),
      }),
    ).state;
    expect(state.buffered[0].messageId).toBe('sent-as-this');
  });
});

describe('decide: 6. rejected for a business rule, slot taken, later entries go on', () => {
  function rejectedAt(state: OrderState, raw: Raw) {
    const change = asChange(decide(state, message(raw)));
    expect(change.outcome).toBe('rejected');
    expect(change.applied).toEqual([]);
    expect(change.submitted).toBe(false);
    expect(change.rejected).toEqual([
      {
        messageId: messageIdOf(raw),
        entry: entryOf(raw),
        properties: {},
        transactionId: raw.transactionId,
        sequence: raw.sequence,
        description: expect.any(String),
      },
    ]);
    expect(change.state.appliedSequence).toBe(raw.sequence);
    expect(transactionsOf(change.state)[String(raw.transactionId)]).toEqual({
      digest: digestOf(raw),
      sequence: raw.sequence,
      outcome: 'rejected',
    });
    return { change, description: change.rejected[0].description };
  }

  it('rejects an OrderCreated not at sequence 1, keeping the order as it was', () => {
    const before = stateAfter(T1, T2);
    const { change, description } = rejectedAt(
      before,
      rawCreated(3, 'T-3', { data: { customerId: 'C-2', currency: 'USD' } }),
    );
    expect(description).toContain('OrderCreated must be at sequence 1');
    expect(change.state.customerId).toBe('C-9');
    expect(change.state.currency).toBe('EUR');
    expect(change.state.status).toBe('open');
    expect(linesOf(change.state)).toEqual(linesOf(before));
    const next = asChange(decide(change.state, message(rawAdded(4, 'T-4', 1, 1))));
    expect(next.outcome).toBe('applied');
    expect(next.state.appliedSequence).toBe(4);
  });

  it('rejects an OrderCreated not at sequence 1 on an order that does not exist yet', () => {
    const state = stateAfter(rawAdded(1, 'T-0', 1, 1));
    const { change, description } = rejectedAt(state, rawCreated(2, 'T-1'));
    expect(description).toContain('OrderCreated must be at sequence 1');
    expect(change.state.status).toBe('pending');
    expect(change.state.customerId).toBeNull();
  });

  it.each<[string, Raw]>([
    ['TransactionAdded', rawAdded(1, 'T-2', 1, 1)],
    ['TransactionAmended', rawAmended(1, 'T-2', 'T-0', { quantity: 1 })],
    ['OrderDeleted', rawDeleted(1, 'T-2')],
  ])('rejects a %s on an order that does not exist, which stays pending', (_case, raw) => {
    const { change, description } = rejectedAt(newOrderState(ORDER_ID), raw);
    expect(description).toContain('does not exist');
    expect(change.state.status).toBe('pending');
    expect(linesOf(change.state)).toEqual([]);
    const later = asChange(decide(change.state, message(rawAdded(2, 'T-3', 1, 1))));
    expect(later.outcome).toBe('rejected');
    expect(later.state.appliedSequence).toBe(2);
  });

  it('creates no order when the state is undefined and the entry is rejected', () => {
    const change = asChange(decide(undefined, message(rawAdded(1, 'T-2', 1, 1))));
    expect(change.outcome).toBe('rejected');
    expect(change.state.orderId).toBe(ORDER_ID);
    expect(change.state.status).toBe('pending');
  });

  it.each<[string, Raw]>([
    ['TransactionAdded', rawAdded(4, 'T-4', 1, 1)],
    ['TransactionAmended', rawAmended(4, 'T-4', 'T-2', { quantity: 9 })],
    ['OrderDeleted', rawDeleted(4, 'T-4')],
    ['OrderCreated', rawCreated(4, 'T-4')],
    ['final TransactionAdded', rawAdded(4, 'T-4', 1, 1, { final: true })],
  ])('rejects a %s after OrderDeleted, and the order stays deleted', (_case, raw) => {
    const before = stateAfter(T1, T2, rawDeleted(3, 'T-3'));
    expect(before.status).toBe('deleted');
    const { change, description } = rejectedAt(before, raw);
    expect(description).toContain('deleted');
    expect(change.state.status).toBe('deleted');
    expect(linesOf(change.state)).toEqual(linesOf(before));
    expect(change.state.total).toBe(2500);
    rejectedAt(change.state, rawAdded(5, 'T-5', 1, 1));
  });

  it('rejects anything after the applied final entry, and the order stays submitted', () => {
    const before = stateAfter(T1, rawAdded(2, 'T-2', 2, 1250, { final: true }));
    expect(before.status).toBe('submitted');
    const { change, description } = rejectedAt(before, rawAdded(3, 'T-3', 1, 1));
    expect(description).toContain('final entry at sequence 2');
    expect(change.state.status).toBe('submitted');
    expect(change.state.total).toBe(2500);
    const deletion = rejectedAt(change.state, rawDeleted(4, 'T-4'));
    expect(deletion.change.state.status).toBe('submitted');
    rejectedAt(deletion.change.state, rawAmended(5, 'T-5', 'T-2', { quantity: 1 }));
  });

  it.each<[string, string]>([
    ['an unknown transaction', 'T-404'],
    ['the OrderCreated, which is no line', 'T-1'],
    ['an amendment, which is no line', 'T-3'],
    ['a rejected entry, which is no line', 'T-4'],
  ])('rejects an amendment of %s, then goes on', (_case, target) => {
    const before = stateAfter(T1, T2, rawAmended(3, 'T-3', 'T-2', { quantity: 3 }), rawCreated(4, 'T-4'));
    expect(transactionsOf(before)['T-4'].outcome).toBe('rejected');
    const { change, description } = rejectedAt(before, rawAmended(5, 'T-5', target, { quantity: 7 }));
    expect(description).toContain(target);
    expect(linesOf(change.state)).toEqual([
      { transactionId: 'T-2', sku: 'SKU-T-2', quantity: 3, unitPrice: 1250 },
    ]);
    const next = asChange(decide(change.state, message(rawAdded(6, 'T-6', 1, 1))));
    expect(next.outcome).toBe('applied');
    expect(next.state.total).toBe(3 * 1250 + 1);
  });

  it('goes on after a rejection with the entries buffered behind it', () => {
    const T3 = rawAdded(3, 'T-3', 1, 5);
    const state = stateAfter(T1, T3);
    const change = asChange(decide(state, message(rawAmended(2, 'T-2', 'T-404', { unitPrice: 1 }))));
    expect(change.outcome).toBe('rejected');
    expect(change.applied).toEqual([{ transactionId: 'T-3', sequence: 3 }]);
    expect(change.state.appliedSequence).toBe(3);
    expect(change.state.buffered).toEqual([]);
  });
});

describe('order state: lines and total', () => {
  it('sums quantity * unitPrice over the lines, in the order they were added', () => {
    const state = stateAfter(T1, T2, rawAdded(3, 'T-3', 1, 999), rawAdded(4, 'T-4', 5, 0));
    expect(linesOf(state)).toEqual([
      { transactionId: 'T-2', sku: 'SKU-T-2', quantity: 2, unitPrice: 1250 },
      { transactionId: 'T-3', sku: 'SKU-T-3', quantity: 1, unitPrice: 999 },
      { transactionId: 'T-4', sku: 'SKU-T-4', quantity: 5, unitPrice: 0 },
    ]);
    expect(state.total).toBe(3499);
    expect(state.customerId).toBe('C-9');
    expect(state.currency).toBe('EUR');
  });

  it('amends the quantity, the unit price, or both, in place', () => {
    const base = [T1, T2, rawAdded(3, 'T-3', 1, 999)];
    const quantity = stateAfter(...base, rawAmended(4, 'T-4', 'T-2', { quantity: 3 }));
    expect(linesOf(quantity)[0]).toEqual({
      transactionId: 'T-2',
      sku: 'SKU-T-2',
      quantity: 3,
      unitPrice: 1250,
    });
    expect(quantity.total).toBe(4749);

    const price = stateAfter(...base, rawAmended(4, 'T-4', 'T-2', { unitPrice: 1000 }));
    expect(linesOf(price)[0]).toEqual({ transactionId: 'T-2', sku: 'SKU-T-2', quantity: 2, unitPrice: 1000 });
    expect(price.total).toBe(2999);

    const both = stateAfter(...base, rawAmended(4, 'T-4', 'T-3', { quantity: 4, unitPrice: 0 }));
    expect(linesOf(both).map((line) => line.transactionId)).toEqual(['T-2', 'T-3']);
    expect(linesOf(both)[1]).toEqual({ transactionId: 'T-3', sku: 'SKU-T-3', quantity: 4, unitPrice: 0 });
    expect(both.total).toBe(2500);

    const twice = stateAfter(
      ...base,
      rawAmended(4, 'T-4', 'T-2', { quantity: 3 }),
      rawAmended(5, 'T-5', 'T-2', { unitPrice: 1 }),
    );
    expect(linesOf(twice)[0]).toMatchObject({ quantity: 3, unitPrice: 1 });
    expect(twice.total).toBe(3 + 999);
  });

  it('keeps the lines and the total of a deleted order', () => {
    const state = stateAfter(T1, T2, rawDeleted(3, 'T-3', { data: { reason: 'changed mind' } }));
    expect(state.status).toBe('deleted');
    expect(state.total).toBe(2500);
  });
});

describe('order state: status and submission', () => {
  it('is pending, then open once created, and submitted once its final entry is applied', () => {
    const first = asChange(decide(undefined, message(T1)));
    expect(first.state.status).toBe('open');
    expect(first.submitted).toBe(false);
    const second = asChange(decide(first.state, message(T2)));
    expect(second.state.status).toBe('open');
    expect(second.submitted).toBe(false);
    const last = asChange(decide(second.state, message(rawAdded(3, 'T-3', 1, 999, { final: true }))));
    expect(last.outcome).toBe('applied');
    expect(last.submitted).toBe(true);
    expect(last.state.status).toBe('submitted');
    expect(last.state.finalSequence).toBe(3);
    expect(last.state.total).toBe(3499);
  });

  it('submits exactly once: a redelivered final entry is a duplicate and later entries are rejected', () => {
    const finalEntry = rawAdded(2, 'T-2', 2, 1250, { final: true });
    const { state, decisions } = feed(undefined, [
      message(T1),
      message(finalEntry),
      message(finalEntry),
      message(rawAdded(3, 'T-3', 1, 1, { final: true })),
      message(finalEntry),
    ]);
    expect(decisions.map((decision) => decision.kind)).toEqual([
      'change',
      'change',
      'duplicate',
      'change',
      'duplicate',
    ]);
    expect(decisions.filter((decision) => decision.kind === 'change' && decision.submitted)).toHaveLength(1);
    expect(asChange(decisions[1]).submitted).toBe(true);
    expect(state?.status).toBe('submitted');
    expect(state?.finalSequence).toBe(2);
  });

  it('submits an order whose final entry is its OrderCreated, with no lines', () => {
    const change = asChange(decide(undefined, message(rawCreated(1, 'T-1', { final: true }))));
    expect(change.submitted).toBe(true);
    expect(change.state.status).toBe('submitted');
    expect(change.state.total).toBe(0);
  });

  it('does not submit when the final entry deletes the order', () => {
    const change = asChange(decide(stateAfter(T1, T2), message(rawDeleted(3, 'T-3', { final: true }))));
    expect(change.outcome).toBe('applied');
    expect(change.submitted).toBe(false);
    expect(change.state.status).toBe('deleted');
    expect(change.state.finalSequence).toBeNull();
  });

  it('does not submit on a rejected final entry: the order stays open and later entries go on', () => {
    const rejected = asChange(
      decide(stateAfter(T1, T2), message(rawAmended(3, 'T-3', 'T-404', { quantity: 1 }, { final: true }))),
    );
    expect(rejected.outcome).toBe('rejected');
    expect(rejected.submitted).toBe(false);
    expect(rejected.state.status).toBe('open');
    expect(rejected.state.finalSequence).toBeNull();

    const fixed = asChange(
      decide(rejected.state, message(rawAmended(4, 'T-4', 'T-2', { quantity: 1 }, { final: true }))),
    );
    expect(fixed.outcome).toBe('applied');
    expect(fixed.submitted).toBe(true);
    expect(fixed.state.status).toBe('submitted');
    expect(fixed.state.finalSequence).toBe(4);
    expect(fixed.state.total).toBe(1250);
  });

  it('does not submit on a final entry rejected after deletion', () => {
    const change = asChange(
      decide(stateAfter(T1, rawDeleted(2, 'T-2')), message(rawAdded(3, 'T-3', 1, 1, { final: true }))),
    );
    expect(change.outcome).toBe('rejected');
    expect(change.submitted).toBe(false);
    expect(change.state.status).toBe('deleted');
  });

  it('does not submit on a final entry on an order that does not exist', () => {
    const change = asChange(decide(undefined, message(rawAdded(1, 'T-2', 1, 1, { final: true }))));
    expect(change.outcome).toBe('rejected');
    expect(change.submitted).toBe(false);
    expect(change.state.status).toBe('pending');
  });

  it('submits when a final entry is released from the buffer, not when it is buffered', () => {
    const finalEntry = rawAdded(3, 'T-3', 1, 999, { final: true });
    const buffered = asChange(decide(stateAfter(T1), message(finalEntry)));
    expect(buffered.outcome).toBe('buffered');
    expect(buffered.submitted).toBe(false);
    expect(buffered.state.status).toBe('open');
    expect(buffered.state.finalSequence).toBeNull();

    const released = asChange(decide(buffered.state, message(T2)));
    expect(released.outcome).toBe('applied');
    expect(released.submitted).toBe(true);
    expect(released.applied.map((item) => item.transactionId)).toEqual(['T-2', 'T-3']);
    expect(released.state.status).toBe('submitted');
    expect(released.state.finalSequence).toBe(3);
    expect(released.state.total).toBe(3499);
  });

  it('does not submit when the released final entry is rejected', () => {
    const finalEntry = rawAmended(3, 'T-3', 'T-404', { quantity: 1 }, { final: true });
    const state = stateAfter(T1, finalEntry);
    const released = asChange(decide(state, message(T2)));
    expect(released.submitted).toBe(false);
    expect(released.rejected.map((item) => item.transactionId)).toEqual(['T-3']);
    expect(released.state.status).toBe('open');
  });
});

describe('decide does not mutate its input', () => {
  const T3 = rawAdded(3, 'T-3', 1, 999);
  const T5 = rawAdded(5, 'T-5', 1, 1, { final: true });
  const scenarios: Array<[string, () => OrderState | undefined, Raw]> = [
    ['no state', () => undefined, T1],
    ['apply', () => stateAfter(T1), T2],
    ['buffer', () => stateAfter(T1), T3],
    ['release from the buffer and submit', () => stateAfter(T1, T3, rawAdded(4, 'T-4', 1, 5), T5), T2],
    ['amend', () => stateAfter(T1, T2), rawAmended(3, 'T-3', 'T-2', { quantity: 9, unitPrice: 1 })],
    ['delete', () => stateAfter(T1, T2), rawDeleted(3, 'T-3')],
    ['reject', () => stateAfter(T1, T2), rawAmended(3, 'T-3', 'T-404', { quantity: 9 })],
    ['duplicate', () => stateAfter(T1, T2), T2],
    ['conflict', () => stateAfter(T1, T2), rawAdded(2, 'T-9', 1, 1)],
  ];

  it.each(scenarios)('leaves a deep-frozen state as it was: %s', (_case, makeState, raw) => {
    const state = makeState();
    const copy = jsonCopy(state);
    const incoming = deepFreeze(message(raw));
    expect(() => decide(state === undefined ? state : deepFreeze(state), incoming)).not.toThrow();
    expect(state).toEqual(copy);
  });

  it.each(scenarios)(
    'leaves the state equal to a deep copy taken before, unfrozen: %s',
    (_case, makeState, raw) => {
      const state = makeState();
      const copy = jsonCopy(state);
      const decision = decide(state, message(raw));
      expect(state).toEqual(copy);
      if (decision.kind === 'change' && state !== undefined) {
        expect(decision.state).not.toBe(state);
        expect(decision.state.buffered === state.buffered).toBe(
          decision.outcome !== 'buffered' && decision.state.buffered.length === state.buffered.length,
        );
      }
    },
  );
});

describe('resequence', () => {
  it('uses the digest and messageId it is given', () => {
    const result = validateEntry(rawAdded(3, 'T-3', 1, 1));
    if (!result.ok) throw new Error('expected a valid entry');
    const change = asChange(resequence(stateAfter(T1), result.value, 'd'.repeat(64), 'given-id'));
    expect(change.state.buffered[0]).toMatchObject({ messageId: 'given-id', digest: 'd'.repeat(64) });
    expect(change.created).toEqual({
      transactionId: 'T-3',
      digest: 'd'.repeat(64),
      sequence: 3,
      outcome: 'buffered',
    });
  });
});

describe('admit', () => {
  it('parks an invalid or misrouted message as decide does, with no state needed', () => {
    const invalid = { messageId: 'm', sessionId: ORDER_ID, body: 'nope' };
    expect(admit(invalid)).toEqual(decide(undefined, invalid));
    expect(admit(message(T1, 'O-2'))).toEqual(decide(undefined, message(T1, 'O-2')));
  });

  it('hands over the validated entry and its digest', () => {
    expect(admit(message({ ...T2, note: 'dropped', final: false }))).toEqual({
      kind: 'entry',
      entry: entryOf(T2),
      digest: digestOf(T2),
      properties: {},
    });
  });

  it("keeps of the application properties only the ledger's, for a buffered entry and a rejected one's park", () => {
    const ledgerProperties = { transactionId: 'T-2', sequence: 2, final: false, batchId: 'B-1' };
    const admitted = admit({
      ...message(T2),
      applicationProperties: { ...ledgerProperties, DeadLetterErrorDescription: 'x'.repeat(4096), other: 1 },
    });
    expect(admitted).toMatchObject({ kind: 'entry', properties: ledgerProperties });
    const T4 = rawAdded(4, 'T-4', 1, 1);
    const buffered = asChange(
      decide(stateAfter(T1), {
        ...message(T4),
        applicationProperties: { ...ledgerProperties, transactionId: 'T-4', sequence: 4, other: 1 },
      }),
    );
    expect(buffered.state.buffered[0].properties).toEqual({
      ...ledgerProperties,
      transactionId: 'T-4',
      sequence: 4,
    });
  });

  it('parks invalid a messageId, correlationId or kept property past what an order keeps, naming each, in the bytes JSON writes', () => {
    expect(MAX_MESSAGE_ID_BYTES).toBe(256);
    expect(MAX_CORRELATION_ID_BYTES).toBe(1024);
    const within = {
      ...message(T2),
      messageId: 'm'.repeat(256),
      correlationId: 'é'.repeat(512),
      applicationProperties: { batchId: 'b'.repeat(100) },
    };
    expect(admit(within)).toMatchObject({ kind: 'entry' });
    expect(
      admit({
        ...within,
        messageId: '\u0001'.repeat(43),
        correlationId: `${'é'.repeat(512)}x`,
        applicationProperties: { batchId: '"'.repeat(51), sequence: 2 },
      }),
    ).toEqual({
      kind: 'park',
      reason: 'invalid',
      description:
        'messageId must be at most 256 bytes in UTF-8 JSON, escapes included, got 258 (43 characters); ' +
        'correlationId must be at most 1024 bytes in UTF-8 JSON, escapes included, got 1025 (513 characters); ' +
        'applicationProperties.batchId must be at most 100 bytes in UTF-8 JSON, escapes included, got 102 (51 characters)',
      transactionId: 'T-2',
    });
    // A broken body and a broken message value are named together.
    expect(admit({ ...within, body: { ...T2, sequence: 0 }, messageId: 'm'.repeat(257) })).toMatchObject({
      kind: 'park',
      reason: 'invalid',
      description:
        'sequence must be an integer >= 1, got 0; messageId must be at most 256 bytes in UTF-8 JSON, escapes included, got 257',
      transactionId: 'T-2',
    });
  });
});
