/**
 * Writes a value as `JSON.stringify(value, null, 2)` and a line break would, byte for byte, without
 * ever holding that text whole: a top-level object's arrays go out one element at a time. The report
 * of a 20,000-order run is some 26 MB of text, and with its encoding that many bytes again, at the
 * moment the run holds the most.
 */
import { closeSync, openSync, writeSync } from 'node:fs';

const FLUSH_CHARS = 1 << 20;

/** What JSON.stringify leaves out of an object: its text, or undefined. */
const stringified = (value: unknown, indent: string): string | undefined =>
  JSON.stringify(value, null, 2)?.replaceAll('\n', `\n${indent}`);

/** The pretty text of `value` in chunks that join to `JSON.stringify(value, null, 2)`. */
export function* prettyJsonChunks(value: unknown): Generator<string> {
  const plainObject =
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function';
  if (!plainObject) {
    yield JSON.stringify(value, null, 2) ?? 'undefined';
    return;
  }
  let first = true;
  for (const [key, field] of Object.entries(value)) {
    const spread = Array.isArray(field) && field.length > 0;
    const text = spread ? '' : stringified(field, '  ');
    if (!spread && text === undefined) continue;
    yield `${first ? '{\n' : ',\n'}  ${JSON.stringify(key)}: `;
    first = false;
    if (!spread) {
      yield text as string;
      continue;
    }
    const elements = field as unknown[];
    for (let index = 0; index < elements.length; index += 1) {
      // In an array, what an object would leave out is written as null.
      yield `${index === 0 ? '[\n' : ',\n'}    ${stringified(elements[index], '    ') ?? 'null'}`;
    }
    yield '\n  ]';
  }
  yield first ? '{}' : '\n}';
}

/** `writeFileSync(path, JSON.stringify(value, null, 2) + '\n')`, written a megabyte at a time. */
export function writeJsonFile(path: string, value: unknown): void {
  const fd = openSync(path, 'w');
  try {
    let pending = '';
    for (const chunk of prettyJsonChunks(value)) {
      pending += chunk;
      if (pending.length >= FLUSH_CHARS) {
        writeSync(fd, pending);
        pending = '';
      }
    }
    writeSync(fd, `${pending}\n`);
  } finally {
    closeSync(fd);
  }
}
