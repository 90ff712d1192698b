/**
 * Copies of message bodies: what a queue keeps and what each delivery gets, so that no handler can
 * change what would be redelivered.
 */
import { PermanentError } from '../../src/domain/errors';

const NOT_PLAIN = Symbol('not plain');

/** Deeper than any body the app sends; deeper ones, and cycles, go to structuredClone. */
const MAX_PLAIN_DEPTH = 64;

function copyPlain(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'function' || typeof value === 'symbol' ? NOT_PLAIN : value;
  }
  if (depth >= MAX_PLAIN_DEPTH) return NOT_PLAIN;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN;
    const length = value.length;
    const copy: unknown[] = new Array<unknown>(length);
    for (let i = 0; i < length; i++) {
      const element: unknown = value[i];
      if (element === undefined && !(i in value)) return NOT_PLAIN;
      const item = copyPlain(element, depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      copy[i] = item;
    }
    return copy;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN;
  const record = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  // for...in with an own-property check: the same keys as Object.keys, without allocating them.
  for (const key in record) {
    if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
    const item = copyPlain(record[key], depth + 1);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    if (key === '__proto__') {
      Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    } else {
      copy[key] = item;
    }
  }
  return copy;
}

/**
 * A body as the queue keeps it and as each delivery gets it: structuredClone, without its
 * serialize round trip for the plain objects, arrays and primitives bodies nearly always are.
 * There, as on the wire, a value referenced twice is copied twice and an array keeps only its
 * elements; anything else (dates, bytes, maps, cycles) goes to structuredClone whole.
 */
export function cloneBody(body: unknown): unknown {
  const copy = copyPlain(body, 0);
  if (copy !== NOT_PLAIN) return copy;
  try {
    return structuredClone(body);
  } catch (error) {
    if ((error as Error | undefined)?.name !== 'RangeError') throw error;
  }
  // Too deep for structuredClone's stack. On the wire the body is its JSON text
  // (@azure/service-bus src/dataTransformer.ts, defaultDataTransformer.encode: JSON.stringify into
  // a data section), and JSON goes deeper; what JSON cannot write, that SDK refuses to send.
  try {
    return JSON.parse(JSON.stringify(body)) as unknown;
  } catch (error) {
    throw new PermanentError(
      'message-body-unserializable',
      `the message body cannot be written as JSON: ${(error as Error).message}`,
    );
  }
}

/**
 * Whether JSON text gives this value back exactly as `cloneBody` copies it: plain objects and
 * arrays (no holes) of strings, booleans, null and finite numbers other than -0, within the plain
 * depth. A property or element `undefined`, a function or symbol, a bigint, a date or bytes: no.
 */
function survivesJsonExactly(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth >= MAX_PLAIN_DEPTH) return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) {
      if (!(i in value) || !survivesJsonExactly(value[i], depth + 1)) return false;
    }
    return true;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
    if (!survivesJsonExactly(record[key], depth + 1)) return false;
  }
  return true;
}

/**
 * A body as a queue holds it: its JSON text when that text gives it back exactly (nearly every
 * body: it is what @azure/service-bus puts on the wire, `defaultDataTransformer.encode` in
 * src/dataTransformer.ts), else a `cloneBody` copy. Text is a third of the memory of the objects,
 * the collector has nothing inside it to mark, and each delivery parses its own fresh copy: a
 * handler still cannot change what would be redelivered.
 */
export type HeldBody = { readonly json: string } | { readonly copy: unknown };

/** The held form of a sent body, and its JSON text where it has one (the sender sizes it by that). */
export function holdBody(body: unknown): HeldBody {
  // A string is kept as it is: strings cannot be changed, and the host hands text over as text.
  if (typeof body !== 'string' && typeof body === 'object' && body !== null && survivesJsonExactly(body, 0)) {
    return { json: JSON.stringify(body) };
  }
  return { copy: cloneBody(body) };
}

/** A fresh copy of a held body, for one delivery, peek or dead letter. */
export function releaseBody(held: HeldBody): unknown {
  return 'json' in held ? JSON.parse(held.json) : cloneBody(held.copy);
}

/** The body's JSON text when the queue holds it as text, without parsing it. */
export function heldJson(held: HeldBody): string | undefined {
  return 'json' in held ? held.json : undefined;
}

const HELD = Symbol('held body');
const RELEASED = Symbol('released body');

interface LazyBody {
  [HELD]: HeldBody;
  [RELEASED]: { value: unknown } | undefined;
}

/** One accessor pair for every delivery, so that they all share one hidden class. */
const LAZY_BODY: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: LazyBody): unknown {
    return (this[RELEASED] ??= { value: releaseBody(this[HELD]) }).value;
  },
  set(this: LazyBody, value: unknown): void {
    this[RELEASED] = { value };
  },
};

/**
 * Gives `target` a `body` copied from the held one when first read: the Functions host hands the
 * worker the JSON text (`deliveredJson`) and never needs the parsed copy. The held body sits under
 * symbols that are not enumerable, so the message compares and spreads as the plain object it is.
 */
export function withLazyBody<T extends object>(target: T, held: HeldBody): T & { body: unknown } {
  Object.defineProperty(target, HELD, { value: held });
  Object.defineProperty(target, RELEASED, { value: undefined, writable: true });
  return Object.defineProperty(target, 'body', LAZY_BODY) as T & { body: unknown };
}

/** The JSON text a delivered message's body was held as, unless its body was read or set since. */
export function deliveredJson(message: object): string | undefined {
  const lazy = message as Partial<LazyBody>;
  if (lazy[HELD] === undefined || lazy[RELEASED] !== undefined) return undefined;
  return heldJson(lazy[HELD]);
}
