/**
 * The off-heap key table (local/store/key-table.ts) behind the file-mode store's index and
 * the broker's duplicate-detection history: exact on every code unit, whatever the hash says, and
 * the same as a Map of the keys through growth, removals, reused rows and a compacted arena.
 */
import fc from 'fast-check';
import { KeyTable, MAX_KEY_UNITS } from '../../local/store/key-table';
import { LOOK_ALIKE_KEYS } from '../support/look-alike-keys';

/** Keys that a hash or an encoding could take for one another. */
const LOOKALIKES = [
  'O-0001-T1',
  'O-0001-T10',
  'O-0001-t1',
  'O-0001-T',
  '',
  ...LOOK_ALIKE_KEYS,
  '\u00e9\u00e9',
  '\ude00',
  '\ufffd',
  'hasOwnProperty',
  '\u0000',
  'ÿ',
  '\u0100',
];

describe('key table', () => {
  test('look-alike keys are kept apart, each found under its own row and read back exactly', () => {
    const table = new KeyTable();
    const rows = LOOKALIKES.map((key) => table.add(0, key));
    expect(new Set(rows).size).toBe(LOOKALIKES.length);
    LOOKALIKES.forEach((key, index) => {
      expect(table.find(0, key)).toBe(rows[index]);
      expect(table.keyOf(rows[index])).toBe(key);
    });
    expect(table.find(0, 'O-0001-T2')).toBe(-1);
    expect(table.find(0, 'E')).toBe(-1);
    expect(table.size).toBe(LOOKALIKES.length);
  });

  test('the same key in two groups is two keys; removing one leaves the other', () => {
    const table = new KeyTable();
    const first = table.add(1, 'doc');
    const second = table.add(2, 'doc');
    expect(first).not.toBe(second);
    expect(table.find(3, 'doc')).toBe(-1);
    table.remove(first);
    expect(table.find(1, 'doc')).toBe(-1);
    expect(table.find(2, 'doc')).toBe(second);
    expect(table.groupOf(second)).toBe(2);
  });

  test('20,000 keys: all found after growth; half removed, their rows reused, the rest intact after compaction', () => {
    const table = new KeyTable();
    const key = (n: number): string => (n % 3 === 0 ? `order-${n}-日` : `order-${n}`);
    const rows: number[] = [];
    for (let n = 0; n < 20_000; n += 1) rows.push(table.add(n % 7, key(n)));
    // Counted, not asserted one by one: 20,000 expects would be most of the suite's time.
    const wrong = (check: (n: number) => boolean, from: number, step: number): number[] => {
      const failed: number[] = [];
      for (let n = from; n < 20_000; n += step) if (!check(n)) failed.push(n);
      return failed;
    };
    expect(wrong((n) => table.find(n % 7, key(n)) === rows[n], 0, 1)).toEqual([]);
    for (let n = 0; n < 20_000; n += 2) table.remove(rows[n]);
    expect(table.size).toBe(10_000);
    const limit = table.rowLimit;
    expect(wrong((n) => table.find(n % 7, key(n)) === -1, 0, 2)).toEqual([]);
    expect(
      wrong((n) => table.find(n % 7, key(n)) === rows[n] && table.keyOf(rows[n]) === key(n), 1, 2),
    ).toEqual([]);
    for (let n = 0; n < 10_000; n += 2) table.add(n % 7, `again-${n}`);
    expect(table.rowLimit).toBe(limit);
    expect(
      wrong((n) => n >= 10_000 || table.keyOf(table.find(n % 7, `again-${n}`)) === `again-${n}`, 0, 2),
    ).toEqual([]);
  });

  test('any sequence of adds and removes answers as a Map of the keys does', () => {
    const keyArb = fc.string({
      unit: fc.constantFrom('a', 'A', 'é', '日', '\ud83d', '\ude00', '_'),
      maxLength: 4,
    });
    const stepArb = fc.record({ add: fc.boolean(), group: fc.integer({ min: 0, max: 2 }), key: keyArb });
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 300 }), (steps) => {
        const table = new KeyTable();
        const model = new Map<string, number>();
        for (const { add, group, key } of steps) {
          const name = `${group}/${key}`;
          const row = table.find(group, key);
          expect(row).toBe(model.get(name) ?? -1);
          if (add && row === -1) model.set(name, table.add(group, key));
          if (!add && row !== -1) {
            table.remove(row);
            model.delete(name);
          }
        }
        expect(table.size).toBe(model.size);
        for (const [name, row] of model) expect(`${table.groupOf(row)}/${table.keyOf(row)}`).toBe(name);
      }),
    );
  });

  test('a key of the longest length, two bytes a unit, is held whole; a longer one is refused, naming its length', () => {
    const table = new KeyTable();
    const small = table.add(0, 'small');
    const longest = '日'.repeat(MAX_KEY_UNITS);
    const row = table.add(0, longest);
    const after = table.add(0, 'after');
    expect(table.keyOf(row)).toBe(longest);
    expect(table.find(0, longest)).toBe(row);
    expect(table.find(0, longest.slice(1))).toBe(-1);
    expect([table.keyOf(small), table.keyOf(after)]).toEqual(['small', 'after']);
    expect(() => table.add(0, 'x'.repeat(MAX_KEY_UNITS + 1))).toThrow(/65536 characters/);
  });
});
