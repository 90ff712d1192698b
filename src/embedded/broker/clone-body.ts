/**
 * Copies of message bodies: what a queue keeps and what each delivery gets, so that no handler can
 * change what would be redelivered.
 */
import { PermanentError } from '../../domain/errors';

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
