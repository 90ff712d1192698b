/**
 * The bounds and edges of entry validation (src/domain/entry.ts) that tests/unit/entry.test.ts leaves
 * open: the sequence's upper bound, unsafe negative integers, the reason's bytes, how long a shown
 * value may be, ids from elsewhere than an entry, bytes that are not UTF-8.
 */
import {
  MAX_ENTRIES_PER_ORDER,
  MAX_ENTRY_REASON_BYTES,
  orderIdProblem,
  parseLedgerMessage,
  validateEntry,
  type Validation,
} from '../../src/domain/entry';
import { rawAdded, rawAmended, rawDeleted } from '../support/domain';

function problemsOf(result: Validation<unknown>): string[] {
  if (result.ok) throw new Error(`expected problems, got a valid value ${JSON.stringify(result.value)}`);
  return result.problems;
}

function valueOf<T>(result: Validation<T>): T {
  if (!result.ok) throw new Error(`expected a valid value, got ${result.problems.join('; ')}`);
  return result.value;
}

describe('the sequence: at most one slot per entry an order may have', () => {
  it('accepts the last slot, 1000, and refuses 1001 and any larger integer, naming the bound', () => {
    expect(MAX_ENTRIES_PER_ORDER).toBe(1000);
    expect(valueOf(validateEntry(rawAdded(1000, 'T-1', 1, 1))).sequence).toBe(1000);
    for (const sequence of [1001, 2 ** 53, 2 ** 60]) {
      expect(problemsOf(validateEntry(rawAdded(sequence, 'T-1', 1, 1)))).toEqual([
        `sequence must be an integer from 1 to 1000 (an order has at most 1000 entries), got ${sequence}`,
      ]);
    }
  });

  it('refuses a negative integer too large to be safe as below 1, not as too large', () => {
    expect(problemsOf(validateEntry(rawAdded(-(2 ** 60), 'T-1', 1, 1)))).toEqual([
      `sequence must be an integer >= 1, got ${-(2 ** 60)}`,
    ]);
  });
});

describe('quantities and prices beyond the safe integers', () => {
  it('a positive one is named too large to be safe, a negative one below the minimum', () => {
    expect(problemsOf(validateEntry(rawAdded(1, 'T-1', 2 ** 60, 1)))).toEqual([
      `data.quantity must be a safe integer >= 1 (at most ${Number.MAX_SAFE_INTEGER}), got ${2 ** 60}`,
    ]);
    expect(problemsOf(validateEntry(rawAdded(1, 'T-1', 1, -(2 ** 60))))).toEqual([
      `data.unitPrice must be an integer >= 0, got ${-(2 ** 60)}`,
    ]);
    expect(problemsOf(validateEntry(rawAmended(2, 'T-2', 'T-1', { unitPrice: -(2 ** 60) })))).toEqual([
      `data.unitPrice must be an integer >= 0, got ${-(2 ** 60)}`,
    ]);
  });
});

describe('an amendment', () => {
  it('keeps only the fields it amends, no undefined member for the other', () => {
    expect(valueOf(validateEntry(rawAmended(3, 'T-3', 'T-2', { quantity: 3 }))).data).toStrictEqual({
      targetTransactionId: 'T-2',
      quantity: 3,
    });
    expect(valueOf(validateEntry(rawAmended(3, 'T-3', 'T-2', { unitPrice: 0 }))).data).toStrictEqual({
      targetTransactionId: 'T-2',
      unitPrice: 0,
    });
  });
});

describe("an order deletion's reason", () => {
  const base = rawDeleted(4, 'T-4');

  it(`may be ${MAX_ENTRY_REASON_BYTES} bytes of UTF-8 JSON long, not one more`, () => {
    expect(MAX_ENTRY_REASON_BYTES).toBe(500);
    for (const longest of ['r'.repeat(500), 'é'.repeat(250), '\n'.repeat(250)]) {
      expect(valueOf(validateEntry({ ...base, data: { reason: longest } })).data).toStrictEqual({
        reason: longest,
      });
    }
    expect(problemsOf(validateEntry({ ...base, data: { reason: 'r'.repeat(501) } }))).toEqual([
      'data.reason must be at most 500 bytes in UTF-8 JSON, escapes included, got 501',
    ]);
    expect(problemsOf(validateEntry({ ...base, data: { reason: `${'\n'.repeat(250)}r` } }))).toEqual([
      'data.reason must be at most 500 bytes in UTF-8 JSON, escapes included, got 501 (251 characters)',
    ]);
  });

  it('is absent from the normalised data when the entry has none', () => {
    expect(valueOf(validateEntry({ ...base, data: {} })).data).toStrictEqual({});
    expect(Object.keys(valueOf(validateEntry({ ...base, data: { other: 1 } })).data)).toEqual([]);
  });
});

describe('how a problem shows the value it got', () => {
  it('in full up to 60 characters of JSON, cut to 57 and an ellipsis beyond', () => {
    const sixty = `a/${'b'.repeat(56)}`; // 58 characters, 60 with the quotes of its JSON
    expect(problemsOf(validateEntry({ ...rawAdded(1, 'T-1', 1, 1), orderId: sixty }))).toEqual([
      `orderId must not contain / \\ ? or #, got ${JSON.stringify(sixty)}`,
    ]);
    const sixtyOne = `${sixty}b`;
    expect(problemsOf(validateEntry({ ...rawAdded(1, 'T-1', 1, 1), orderId: sixtyOne }))).toEqual([
      `orderId must not contain / \\ ? or #, got ${JSON.stringify(sixtyOne).slice(0, 57)}...`,
    ]);
  });
});

describe('orderIdProblem: an order id from elsewhere than an entry (an HTTP route)', () => {
  it('is null for an id an entry may carry', () => {
    expect(orderIdProblem('O-1')).toBeNull();
    expect(orderIdProblem('x'.repeat(100))).toBeNull();
  });

  it('names the field orderId unless told another name, with every problem', () => {
    expect(orderIdProblem('a/b')).toBe('orderId must not contain / \\ ? or #, got "a/b"');
    expect(orderIdProblem('a#b', 'route orderId')).toBe(
      'route orderId must not contain / \\ ? or #, got "a#b"',
    );
    expect(orderIdProblem('')).toBe('orderId must be a non-empty string, got ""');
    expect(orderIdProblem('x'.repeat(101))).toBe(
      'orderId must be at most 100 bytes in UTF-8 JSON, escapes included, got 101',
    );
  });
});

describe('a body of bytes that are not all UTF-8', () => {
  it('decodes with replacement characters rather than failing, as the text it holds allows', () => {
    const bytes = Buffer.concat([
      Buffer.from('{"batchId":"B-'),
      Buffer.from([0xff]),
      Buffer.from('","entries":[]}'),
    ]);
    const parsed = parseLedgerMessage(new Uint8Array(bytes));
    expect(parsed).toEqual({ ok: true, value: { batchId: 'B-\ufffd', entries: [] } });
  });
});
