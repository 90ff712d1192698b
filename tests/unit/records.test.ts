/**
 * Own-property records (src/domain/own-properties.ts): lookups never find an inherited member, writes never
 * replace the prototype, and the copies leave the original alone.
 */
import { hasOwnKey, ownValue, setOwn, withOwn, withoutOwn } from '../../src/domain/own-properties';
import type { OwnRecord } from '../../src/domain/own-properties';

describe('ownValue and hasOwnKey', () => {
  it('find an own value, falsy ones included', () => {
    const record: OwnRecord<number> = { a: 1, zero: 0 };
    expect(ownValue(record, 'a')).toBe(1);
    expect(ownValue(record, 'zero')).toBe(0);
    expect(hasOwnKey(record, 'a')).toBe(true);
    expect(hasOwnKey(record, 'zero')).toBe(true);
  });

  it('find nothing for a missing key or an inherited member', () => {
    const record: OwnRecord<number> = { a: 1 };
    for (const key of ['b', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(ownValue(record, key)).toBeUndefined();
      expect(hasOwnKey(record, key)).toBe(false);
    }
  });
});

describe('setOwn', () => {
  it('adds `__proto__` as data, as JSON.parse would, leaving the prototype alone', () => {
    const record: OwnRecord<string> = {};
    setOwn(record, '__proto__', 'x');
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(ownValue(record, '__proto__')).toBe('x');
    expect(record).toEqual(JSON.parse('{"__proto__":"x"}'));
    expect(JSON.stringify(record)).toBe('{"__proto__":"x"}');
  });

  it('sets a property that a spread copies, that can be written again and deleted', () => {
    const record: OwnRecord<number> = {};
    setOwn(record, 'a', 1);
    expect(Object.keys(record)).toEqual(['a']);
    expect({ ...record }).toEqual({ a: 1 });
    setOwn(record, 'a', 2);
    expect(record.a).toBe(2);
    record.a = 3;
    expect(record.a).toBe(3);
    delete record.a;
    expect(hasOwnKey(record, 'a')).toBe(false);
  });

  it('leaves a property that a plain assignment can change (writable), as JSON.parse does', () => {
    const record: OwnRecord<number> = {};
    setOwn(record, 'a', 1);
    expect(Object.getOwnPropertyDescriptor(record, 'a')).toEqual(
      Object.getOwnPropertyDescriptor(JSON.parse('{"a":1}'), 'a'),
    );
    // Strict mode: assigning to a read-only property throws.
    expect(() => {
      record.a = 5;
    }).not.toThrow();
    expect(record.a).toBe(5);
  });
});

describe('withOwn and withoutOwn', () => {
  it('withOwn copies every entry and adds or replaces one, leaving the original alone', () => {
    const original: OwnRecord<number> = { a: 1, b: 2 };
    expect(withOwn(original, 'c', 3)).toEqual({ a: 1, b: 2, c: 3 });
    expect(withOwn(original, 'a', 9)).toEqual({ a: 9, b: 2 });
    const proto = withOwn(original, '__proto__', 4);
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(ownValue(proto, '__proto__')).toBe(4);
    expect(original).toEqual({ a: 1, b: 2 });
  });

  it('withoutOwn copies every other entry and leaves the original alone', () => {
    const original: OwnRecord<number> = { a: 1, b: 2, c: 3 };
    expect(withoutOwn(original, 'b')).toEqual({ a: 1, c: 3 });
    expect(withoutOwn(original, 'missing')).toEqual({ a: 1, b: 2, c: 3 });
    expect(original).toEqual({ a: 1, b: 2, c: 3 });
  });
});
