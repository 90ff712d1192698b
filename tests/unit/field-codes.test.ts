/**
 * The file-mode store's codes of its queried fields (local/store/field-codes.ts): what a
 * document's JSON has under a field, told from the document without parsing its text, must be what
 * the text has (checked against JSON.parse(JSON.stringify(...)) for every shape below), and a row
 * is ruled out of a condition only when its code proves it cannot match.
 */
import {
  ABSENT,
  FieldCodes,
  MAX_VALUES,
  MAX_VALUE_UNITS,
  NOT_KNOWN,
  fieldValues,
  type FieldValue,
} from '../../local/store/field-codes';
import type { Document } from '../../src/services/ports';
import { LOOK_ALIKE_KEYS } from '../support/look-alike-keys';

const withKind = (kind: unknown): Document => ({ id: 'a', kind }) as Document;

function nonEnumerable(): Document {
  const document = { id: 'a' } as Document;
  Object.defineProperty(document, 'kind', { value: 'order', enumerable: false });
  return document;
}

class Order {
  readonly id = 'a';
  readonly kind = 'order';
}

/** Each shape, what fieldValues tells of `kind`, and why. */
const SHAPES: Array<[string, () => Document, FieldValue]> = [
  ['a string', () => withKind('order'), 'order'],
  ['an empty string', () => withKind(''), ''],
  ['a lone surrogate', () => withKind('\ud83d'), '\ud83d'],
  [
    'a null-prototype object',
    () => Object.assign(Object.create(null) as Document, { id: 'a', kind: 'x' }),
    'x',
  ],
  ['no such key', () => ({ id: 'a' }), ABSENT],
  ['undefined, which JSON leaves out', () => withKind(undefined), ABSENT],
  ['a function, which JSON leaves out', () => withKind(() => 'order'), ABSENT],
  ['a symbol, which JSON leaves out', () => withKind(Symbol('order')), ABSENT],
  ['a non-enumerable string, which JSON leaves out', nonEnumerable, ABSENT],
  ['a number', () => withKind(7), NOT_KNOWN],
  ['null', () => withKind(null), NOT_KNOWN],
  ['a boolean', () => withKind(true), NOT_KNOWN],
  ['an object', () => withKind({ kind: 'order' }), NOT_KNOWN],
  ['a Date, which JSON writes as a string', () => withKind(new Date(0)), NOT_KNOWN],
  ['a String object, which JSON writes as a string', () => withKind(new String('order')), NOT_KNOWN],
  [
    'an object with toJSON, which JSON writes as its answer',
    () => withKind({ toJSON: () => 'order' }),
    NOT_KNOWN,
  ],
  [
    'a getter',
    () =>
      ({
        id: 'a',
        get kind() {
          return 'order';
        },
      }) as Document,
    NOT_KNOWN,
  ],
  ['a class instance', () => new Order() as unknown as Document, NOT_KNOWN],
  [
    'a document with toJSON',
    () => ({ id: 'a', kind: 'order', toJSON: () => ({ id: 'a', kind: 'saga' }) }),
    NOT_KNOWN,
  ],
  ['an inherited string', () => Object.create({ kind: 'order' }) as Document, NOT_KNOWN],
  ['a Proxy', () => new Proxy(withKind('order'), {}), NOT_KNOWN],
  ['an array', () => Object.assign([], { id: 'a', kind: 'order' }) as unknown as Document, NOT_KNOWN],
];

/** What the document's JSON text has under `field`. */
function inText(document: Document, field: string): { has: boolean; value: unknown } {
  const parsed = JSON.parse(JSON.stringify(document)) as Record<string, unknown>;
  return {
    has: Object.hasOwn(parsed, field),
    value: Object.hasOwn(parsed, field) ? parsed[field] : undefined,
  };
}

describe('fieldValues: what the JSON text has under a field, without parsing it', () => {
  test.each(SHAPES)('%s', (_why, make, expected) => {
    const document = make();
    expect(fieldValues(document, ['kind'])).toEqual([expected]);
    // Exact: a string is the text's string, ABSENT is a key the text lacks.
    const text = inText(document, 'kind');
    if (typeof expected === 'string') expect(text).toEqual({ has: true, value: expected });
    if (expected === ABSENT) expect(text.has).toBe(false);
  });

  test("look-alike keys are each the document's own, or absent: never Object.prototype's", () => {
    for (const key of LOOK_ALIKE_KEYS) {
      // A computed key makes an own property, '__proto__' included.
      const document: Document = { id: 'a', [key]: `value of ${key}` };
      expect(Object.getPrototypeOf(document)).toBe(Object.prototype);
      expect(fieldValues(document, [key, 'kind'])).toEqual([`value of ${key}`, ABSENT]);
      expect(inText(document, key)).toEqual({ has: true, value: `value of ${key}` });
      expect(fieldValues({ id: 'a' }, [key])).toEqual([ABSENT]);
      expect(inText({ id: 'a' }, key).has).toBe(false);
    }
  });
});

/** The rows of 0 to `rows` - 1 that `codes` does not rule out. */
function passing(
  codes: FieldCodes,
  rows: number,
  where: ReadonlyArray<readonly [string, unknown]>,
): number[] | 'all' {
  const may = codes.mayMatch(where);
  if (may === undefined) return 'all';
  return Array.from({ length: rows }, (_, row) => row).filter((row) => may(row));
}

describe('FieldCodes: which rows may match a condition', () => {
  // Rows: 0 'order', 1 'transaction', 2 absent, 3 not known, 4 never set, 5 values undefined.
  const codes = (): FieldCodes => {
    const made = new FieldCodes(['kind', 'status']);
    made.reach(6);
    made.set(0, ['order', 'open']);
    made.set(1, ['transaction', 'open']);
    made.set(2, [ABSENT, ABSENT]);
    made.set(3, [NOT_KNOWN, 'open']);
    made.set(5, undefined);
    return made;
  };

  test('a string rules out every other string and absent, never a value not known', () => {
    expect(passing(codes(), 6, [['kind', 'order']])).toEqual([0, 3, 4, 5]);
    expect(passing(codes(), 6, [['kind', 'transaction']])).toEqual([1, 3, 4, 5]);
  });

  test('a string no row holds leaves only the values not known', () => {
    expect(passing(codes(), 6, [['kind', 'saga']])).toEqual([3, 4, 5]);
  });

  test('a number or a boolean matches no string and no absent key', () => {
    expect(passing(codes(), 6, [['kind', 7]])).toEqual([3, 4, 5]);
    expect(passing(codes(), 6, [['kind', false]])).toEqual([3, 4, 5]);
  });

  test('every condition on a queried field must allow the row', () => {
    expect(
      passing(codes(), 6, [
        ['kind', 'order'],
        ['status', 'open'],
      ]),
    ).toEqual([0, 3, 4, 5]);
    expect(
      passing(codes(), 6, [
        ['status', 'open'],
        ['kind', 'transaction'],
      ]),
    ).toEqual([1, 3, 4, 5]);
    expect(
      passing(codes(), 6, [
        ['status', 'shipped'],
        ['kind', 'order'],
      ]),
    ).toEqual([4, 5]);
  });

  test('no condition on a queried field, or one on undefined, rules nothing out', () => {
    expect(passing(codes(), 6, [])).toBe('all');
    expect(passing(codes(), 6, [['other', 'order']])).toBe('all');
    // An absent key matches undefined: that is the parse's to decide.
    expect(passing(codes(), 6, [['kind', undefined]])).toBe('all');
    expect(
      passing(codes(), 6, [
        ['kind', undefined],
        ['status', 'open'],
      ]),
    ).toEqual([0, 1, 3, 4, 5]);
  });

  test('setting a row again replaces all its codes', () => {
    const made = codes();
    made.set(0, ['transaction', 'shipped']);
    expect(passing(made, 6, [['kind', 'order']])).toEqual([3, 4, 5]);
    expect(passing(made, 6, [['status', 'shipped']])).toEqual([0, 4, 5]);
    made.set(1, undefined);
    expect(passing(made, 6, [['kind', 'order']])).toEqual([1, 3, 4, 5]);
  });

  test(`a field keeps at most ${MAX_VALUES} strings of at most ${MAX_VALUE_UNITS} units; the rest are not known`, () => {
    const made = new FieldCodes(['kind']);
    const rows = MAX_VALUES + 3;
    made.reach(rows);
    for (let row = 0; row < MAX_VALUES; row += 1) made.set(row, [`kind-${row}`]);
    made.set(MAX_VALUES, ['one too many']);
    made.set(MAX_VALUES + 1, ['k'.repeat(MAX_VALUE_UNITS + 1)]);
    made.set(MAX_VALUES + 2, ['kind-0']);
    const notKnown = [MAX_VALUES, MAX_VALUES + 1];
    expect(passing(made, rows, [['kind', 'kind-0']])).toEqual([0, ...notKnown, MAX_VALUES + 2]);
    expect(passing(made, rows, [['kind', `kind-${MAX_VALUES - 1}`]])).toEqual([MAX_VALUES - 1, ...notKnown]);
    expect(passing(made, rows, [['kind', 'one too many']])).toEqual(notKnown);
    const longest = new FieldCodes(['kind']);
    longest.reach(2);
    longest.set(0, ['k'.repeat(MAX_VALUE_UNITS)]);
    longest.set(1, ['other']);
    expect(passing(longest, 2, [['kind', 'other']])).toEqual([1]);
  });
});
