/**
 * Rules of docs/messages.md (an entry) that the code had to guess before they were written down
 *, each a test named for the rule.
 */
import { describeProblems, validateEntry, type Validation } from '../../src/domain/entry';
import { rawAdded, rawAmended, type Raw } from '../support/domain';

function problemsOf(result: Validation<unknown>): string[] {
  if (result.ok) throw new Error(`expected problems, got a valid value ${JSON.stringify(result.value)}`);
  return result.problems;
}

function isValid(result: Validation<unknown>): boolean {
  if (!result.ok) throw new Error(`expected a valid value, got ${describeProblems(result.problems)}`);
  return true;
}

/** What validateEntry says of a transactionId, or of a targetTransactionId, of the same value. */
function asTransactionId(value: unknown): string[] {
  const result = validateEntry({ ...rawAdded(2, 'T-2', 1, 100), transactionId: value });
  return result.ok ? [] : result.problems.map((problem) => problem.replace(/^transactionId/, 'ID'));
}

function asTarget(value: unknown): string[] {
  const entry = rawAmended(3, 'T-3', 'T-2', { quantity: 3 });
  const result = validateEntry({ ...entry, data: { ...(entry.data as Raw), targetTransactionId: value } });
  return result.ok
    ? []
    : result.problems.map((problem) => problem.replace(/^data\.targetTransactionId/, 'ID'));
}

describe('the contract rules of an entry', () => {
  it.each<[string, unknown]>([
    ['missing', undefined],
    ['empty', ''],
    ['a number', 42],
    ['null', null],
    ['101 characters', 'T'.repeat(101)],
    ['100 characters', 'T'.repeat(100)],
    ['a prototype name', '__proto__'],
    ['with / \\ ? #', 'a/b\\c?d#e'],
  ])('targetTransactionId follows the rules of transactionId: %s', (_case, value) => {
    const target = asTarget(value);
    expect(target).toEqual(asTransactionId(value));
    // Each broken case is refused, and the refusal names the field.
    if (!['100 characters', 'a prototype name', 'with / \\ ? #'].includes(_case))
      expect(target).toHaveLength(1);
  });

  const TWO_TO_THE_53 = 2 ** 53;
  it.each<[string, Raw, string]>([
    ['sequence', { ...rawAdded(2, 'T-2', 1, 100), sequence: TWO_TO_THE_53 }, 'sequence'],
    ['quantity', rawAdded(2, 'T-2', TWO_TO_THE_53, 100), 'data.quantity'],
    ['unitPrice', rawAdded(2, 'T-2', 1, TWO_TO_THE_53), 'data.unitPrice'],
    ['an amended quantity', rawAmended(3, 'T-3', 'T-2', { quantity: TWO_TO_THE_53 }), 'data.quantity'],
    ['an amended unitPrice', rawAmended(3, 'T-3', 'T-2', { unitPrice: TWO_TO_THE_53 }), 'data.unitPrice'],
  ])('integers are safe integers: 2^53 as %s is invalid, naming the field', (_case, raw, field) => {
    const problems = problemsOf(validateEntry(raw));
    expect(problems).toHaveLength(1);
    expect(problems[0].startsWith(`${field} must be `)).toBe(true);
    expect(problems[0]).toContain(String(TWO_TO_THE_53));
  });

  it('integers are safe integers: 2^53 - 1 is one', () => {
    expect(isValid(validateEntry(rawAdded(2, 'T-2', 1, 2 ** 53 - 1)))).toBe(true);
    expect(isValid(validateEntry(rawAmended(3, 'T-3', 'T-2', { unitPrice: 2 ** 53 - 1 })))).toBe(true);
  });
});
