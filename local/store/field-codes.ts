/**
 * The file-mode store's index of its container's queried fields: per document, for each field of the
 * container's `queriedFields` (src/adapters/indexing-policy.ts), a small integer code of the value
 * the document's JSON text has there, so that a query filtering on the field skips the documents that
 * cannot match without reading their texts from the file and parsing them. (Measured on a
 * 20,000-order `npm start`: the report's `where: { kind: 'order' }` parsed some 220,000 documents to
 * keep 20,000, and that garbage set the run's peak RSS.)
 *
 * Cosmos indexes the paths its indexing policy includes and answers a filter on them from that index
 * (Microsoft Learn, "Indexing policies in Azure Cosmos DB",
 * https://learn.microsoft.com/azure/cosmos-db/index-policy). This is where the embedded copy keeps its
 * own index of the same paths, not a Cosmos behaviour: the query's answer is exactly the one a scan
 * of every text gives (the store still filters what it reads exactly as before; the codes only say
 * which texts cannot be in the answer), with the texts in memory or in the file.
 *
 * A code is PARSE (0, the value of a row never set: the text must be read to know), ABSENT (1: the
 * JSON has no such key) or 2 + the value's place in the field's table of distinct strings. The table
 * keeps at most MAX_VALUES strings of at most MAX_VALUE_UNITS units each (`kind` has a dozen); a
 * value past either limit is PARSE, so a field with a value per document costs a column, not a table.
 */
import { types } from 'node:util';
import type { Document } from '../../src/services/ports';
import { Uint8Column } from './columns';

/** The document's JSON has no such key. */
export const ABSENT = Symbol('absent');
/** Not known without parsing the JSON: a value that is no string, or a document JSON may not read as it is. */
export const NOT_KNOWN = Symbol('not known');
/** A queried field's value in a document's JSON text: the string itself, ABSENT or NOT_KNOWN. */
export type FieldValue = string | typeof ABSENT | typeof NOT_KNOWN;

/**
 * What `JSON.stringify(document)` writes under each of `fields`, told from the document itself (the
 * text is not parsed again): exact for a plain object (its prototype Object.prototype or null, no
 * `toJSON`, not a Proxy), whose text JSON.stringify makes from its own enumerable properties, in
 * which a data property holding a string is that string (JSON gives a string back unit for unit) and
 * one holding undefined, a function or a symbol is left out. Anything else is NOT_KNOWN.
 */
export function fieldValues(document: Document, fields: readonly string[]): FieldValue[] {
  const prototype: unknown = Object.getPrototypeOf(document);
  const plain =
    !types.isProxy(document) &&
    (prototype === Object.prototype || prototype === null) &&
    typeof (document as { toJSON?: unknown }).toJSON !== 'function';
  return fields.map((field) =>
    plain ? valueOf(Object.getOwnPropertyDescriptor(document, field)) : NOT_KNOWN,
  );
}

function valueOf(property: PropertyDescriptor | undefined): FieldValue {
  if (property === undefined || property.enumerable !== true) return ABSENT;
  // An accessor's getter runs when JSON.stringify reads it, and may answer anything then.
  if (!('value' in property)) return NOT_KNOWN;
  const value: unknown = property.value;
  if (typeof value === 'string') return value;
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return ABSENT;
  return NOT_KNOWN;
}

const PARSE = 0;
const ABSENT_CODE = 1;
const FIRST_VALUE = 2;
/** A code no row has: a condition on a value no document has as a plain string. */
const NO_ROW = -1;
/** The most distinct strings a field's table keeps (their codes fill a byte, 2 to 255), and the
 * longest, in UTF-16 units. */
export const MAX_VALUES = 0xff - FIRST_VALUE + 1;
export const MAX_VALUE_UNITS = 256;

/** A query's condition: a top-level field and the value it must equal. */
export type Condition = readonly [field: string, value: unknown];

/** Per row (a document of the index, ./file-index.ts), the code of each queried field's value. */
export class FieldCodes {
  private readonly columns: Uint8Column[];
  private readonly tables: Array<Map<string, number>>;
  private readonly place: ReadonlyMap<string, number>;

  constructor(readonly fields: readonly string[]) {
    this.columns = fields.map(() => new Uint8Column());
    this.tables = fields.map(() => new Map<string, number>());
    this.place = new Map(fields.map((field, index) => [field, index]));
  }

  /** Room for rows 0 to `rows` - 1. */
  reach(rows: number): void {
    for (const column of this.columns) column.reach(rows);
  }

  /** Sets every code of `row`, the whole row: a row given to another document keeps nothing of the last. */
  set(row: number, values: readonly FieldValue[] | undefined): void {
    for (let index = 0; index < this.columns.length; index += 1) {
      this.columns[index].set(row, values === undefined ? PARSE : this.codeOf(index, values[index]));
    }
  }

  /**
   * Whether a row may match every condition, as far as the codes tell; undefined when no condition is
   * on a queried field. A row whose value is a string or absent matches a condition only if it is that
   * very string (a condition on undefined is left to the parse, which an absent key matches).
   */
  mayMatch(conditions: readonly Condition[]): ((row: number) => boolean) | undefined {
    const columns: Uint8Column[] = [];
    const wanted: number[] = [];
    for (const [field, value] of conditions) {
      const index = this.place.get(field);
      if (index === undefined || value === undefined) continue;
      columns.push(this.columns[index]);
      wanted.push((typeof value === 'string' ? this.tables[index].get(value) : undefined) ?? NO_ROW);
    }
    if (columns.length === 0) return undefined;
    return (row) => {
      for (let at = 0; at < columns.length; at += 1) {
        const code = columns[at].get(row);
        if (code !== PARSE && code !== wanted[at]) return false;
      }
      return true;
    };
  }

  private codeOf(index: number, value: FieldValue | undefined): number {
    if (value === ABSENT) return ABSENT_CODE;
    if (typeof value !== 'string' || value.length > MAX_VALUE_UNITS) return PARSE;
    const table = this.tables[index];
    const code = table.get(value);
    if (code !== undefined) return code;
    if (table.size >= MAX_VALUES) return PARSE;
    const added = FIRST_VALUE + table.size;
    table.set(value, added);
    return added;
  }
}
