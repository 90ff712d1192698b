/** Ledger messages and their entries (docs/messages.md (the ledger message), 1.2): types and validation from unknown input. */
import { ownValue } from './own-properties';

export const ENTRY_TYPES = [
  'OrderCreated',
  'TransactionAdded',
  'TransactionAmended',
  'OrderDeleted',
] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

/**
 * Bounds that keep an order's documents within Cosmos DB's 2 MB item limit (Microsoft Learn, "Azure
 * Cosmos DB service quotas": maximum size of an item 2 MB, the UTF-8 length of its JSON) whatever its
 * entries hold: every field the order stores is bounded, and so are its entries, through their
 * sequence numbers (an order has one slot per sequence number, and every record it keeps belongs to
 * a slot). A text bound counts the bytes the store writes (`jsonTextBytes`), not characters: JSON
 * writes a control character, a lone surrogate, `"` or `\` as an escape of 2 to 6 bytes, and UTF-8
 * other non-ASCII characters in 2 to 4. tests/unit/order-size.test.ts builds the worst cases.
 */
export const MAX_ID_BYTES = 100;
export const MAX_TEXT_BYTES = 100;
export const MAX_ENTRY_REASON_BYTES = 500;
export const MAX_ENTRIES_PER_ORDER = 1000;

/** The bytes `text` takes in the JSON the store writes: UTF-8, escapes included, quotes left out. */
export function jsonTextBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text), 'utf8') - 2;
}

/** Why `text` is over `maxBytes` as the store writes it, naming the field; null when within. */
export function textBytesProblem(text: string, name: string, maxBytes: number): string | null {
  const bytes = jsonTextBytes(text);
  if (bytes <= maxBytes) return null;
  const characters = [...text].length;
  return (
    `${name} must be at most ${maxBytes} bytes in UTF-8 JSON, escapes included, got ${bytes}` +
    (characters === bytes ? '' : ` (${characters} characters)`)
  );
}

/**
 * How deep an entry may nest (the entry object is level 1, its `data` level 2). The contract's
 * fields need 2; a bound keeps every later copy and walk of a parked entry (the broker's clone, the
 * report) far from the stack's limit, whatever the producer sends.
 */
export const MAX_ENTRY_DEPTH = 32;

export interface OrderCreatedData {
  customerId: string;
  currency: string;
}
export interface TransactionAddedData {
  sku: string;
  quantity: number;
  unitPrice: number;
}
export interface TransactionAmendedData {
  targetTransactionId: string;
  quantity?: number;
  unitPrice?: number;
}
export interface OrderDeletedData {
  reason?: string;
}

interface EntryBase {
  transactionId: string;
  orderId: string;
  sequence: number;
  /** The end-of-sequence flag; present only when true, so that absent and `false` digest alike. */
  final?: true;
}

export type Entry = EntryBase &
  (
    | { type: 'OrderCreated'; data: OrderCreatedData }
    | { type: 'TransactionAdded'; data: TransactionAddedData }
    | { type: 'TransactionAmended'; data: TransactionAmendedData }
    | { type: 'OrderDeleted'; data: OrderDeletedData }
  );

export type Validation<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/** One human sentence naming every field that broke a rule, e.g. `entries[3].data.quantity must be ...`. */
export function describeProblems(problems: readonly string[]): string {
  return problems.join('; ');
}

type Problems = string[];
type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  // JSON reads 1e400 as Infinity, which JSON.stringify would write as null.
  if (typeof value === 'number' && !Number.isFinite(value)) return `${value} (too large for a number)`;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function field(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function nonEmptyString(
  value: unknown,
  name: string,
  problems: Problems,
  maxBytes: number,
): string | undefined {
  if (typeof value !== 'string' || value.length === 0) {
    problems.push(`${name} must be a non-empty string, got ${shown(value)}`);
    return undefined;
  }
  const over = textBytesProblem(value, name, maxBytes);
  if (over !== null) {
    problems.push(over);
    return undefined;
  }
  return value;
}

function sequenceOf(value: unknown, name: string, problems: Problems): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value > MAX_ENTRIES_PER_ORDER) {
    problems.push(
      `${name} must be an integer from 1 to ${MAX_ENTRIES_PER_ORDER} (an order has at most ${MAX_ENTRIES_PER_ORDER} entries), got ${shown(value)}`,
    );
    return undefined;
  }
  return integerAtLeast(value, 1, name, problems);
}

function integerAtLeast(value: unknown, min: number, name: string, problems: Problems): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) && value > 0) {
    problems.push(
      `${name} must be a safe integer >= ${min} (at most ${Number.MAX_SAFE_INTEGER}), got ${shown(value)}`,
    );
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    problems.push(`${name} must be an integer >= ${min}, got ${shown(value)}`);
    return undefined;
  }
  return value;
}

const FORBIDDEN_ORDER_ID_CHARACTERS = /[/\\?#]/;

/**
 * Why `orderId` cannot be an order's id (the rules of an entry's `orderId`), or null when it can.
 * For ids that come from elsewhere than an entry, such as an HTTP route.
 */
export function orderIdProblem(orderId: string, name = 'orderId'): string | null {
  const problems: Problems = [];
  orderIdOf(orderId, name, problems);
  // Stryker disable next-line StringLiteral: equivalent, orderIdOf finds at most one problem (the character check runs only on an id that passed the others), so the separator is never written.
  return problems.length === 0 ? null : problems.join('; ');
}

function orderIdOf(value: unknown, name: string, problems: Problems): string | undefined {
  const orderId = nonEmptyString(value, name, problems, MAX_ID_BYTES);
  if (orderId !== undefined && FORBIDDEN_ORDER_ID_CHARACTERS.test(orderId)) {
    problems.push(`${name} must not contain / \\ ? or #, got ${shown(orderId)}`);
    return undefined;
  }
  return orderId;
}

function dataOf(entry: Json, type: EntryType, path: string, problems: Problems): Entry['data'] | undefined {
  const name = field(path, 'data');
  const raw = entry.data;
  if (type === 'OrderDeleted' && raw === undefined) return {};
  if (!isObject(raw)) {
    problems.push(`${name} must be an object, got ${shown(raw)}`);
    return undefined;
  }
  const before = problems.length;
  switch (type) {
    case 'OrderCreated': {
      const customerId = nonEmptyString(raw.customerId, `${name}.customerId`, problems, MAX_TEXT_BYTES);
      const currency = raw.currency;
      if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) {
        problems.push(`${name}.currency must be three capital letters, got ${shown(currency)}`);
      }
      return problems.length === before
        ? { customerId: customerId!, currency: currency as string }
        : undefined;
    }
    case 'TransactionAdded': {
      const sku = nonEmptyString(raw.sku, `${name}.sku`, problems, MAX_TEXT_BYTES);
      const quantity = integerAtLeast(raw.quantity, 1, `${name}.quantity`, problems);
      const unitPrice = integerAtLeast(raw.unitPrice, 0, `${name}.unitPrice`, problems);
      return problems.length === before
        ? { sku: sku!, quantity: quantity!, unitPrice: unitPrice! }
        : undefined;
    }
    case 'TransactionAmended': {
      const targetTransactionId = nonEmptyString(
        raw.targetTransactionId,
        `${name}.targetTransactionId`,
        problems,
        MAX_ID_BYTES,
      );
      // Stryker disable next-line StringLiteral: equivalent, the '' stands in only when targetTransactionId broke a rule, and then validateEntry returns the problems and drops this object.
      const amended: TransactionAmendedData = { targetTransactionId: targetTransactionId ?? '' };
      if (raw.quantity === undefined && raw.unitPrice === undefined) {
        problems.push(`${name} must amend at least one of quantity, unitPrice`);
      }
      if (raw.quantity !== undefined) {
        const quantity = integerAtLeast(raw.quantity, 1, `${name}.quantity`, problems);
        if (quantity !== undefined) amended.quantity = quantity;
      }
      if (raw.unitPrice !== undefined) {
        const unitPrice = integerAtLeast(raw.unitPrice, 0, `${name}.unitPrice`, problems);
        if (unitPrice !== undefined) amended.unitPrice = unitPrice;
      }
      return problems.length === before ? amended : undefined;
    }
    case 'OrderDeleted': {
      if (raw.reason !== undefined && typeof raw.reason !== 'string') {
        problems.push(`${name}.reason must be a string when present, got ${shown(raw.reason)}`);
        return undefined;
      }
      const over =
        raw.reason === undefined
          ? null
          : textBytesProblem(raw.reason, `${name}.reason`, MAX_ENTRY_REASON_BYTES);
      if (over !== null) {
        problems.push(over);
        return undefined;
      }
      return raw.reason === undefined ? {} : { reason: raw.reason };
    }
  }
}

/** Whether `value` nests more than `maxDepth` levels (a scalar is 0, `{}` is 1), without recursion. */
function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<{ value: object; depth: number }> = [{ value, depth: 1 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.depth > maxDepth) return true;
    const children: unknown[] = Array.isArray(top.value) ? top.value : Object.values(top.value);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: top.depth + 1 });
    }
  }
  return false;
}

/**
 * Validates one entry from unknown input. `path` prefixes field names in the problems
 * (`entries[3]` inside a batch, empty for an entry on its own). Unknown fields are ignored and
 * do not reach the normalised entry, so they do not change its digest either.
 */
export function validateEntry(input: unknown, path = ''): Validation<Entry> {
  if (!isObject(input)) {
    return { ok: false, problems: [`${path || 'entry'} must be a JSON object, got ${shown(input)}`] };
  }
  for (const key of Object.keys(input)) {
    if (nestsDeeperThan(ownValue(input, key), MAX_ENTRY_DEPTH - 1)) {
      return {
        ok: false,
        problems: [
          `${field(path, key)} is nested more than ${MAX_ENTRY_DEPTH} levels deep (the entry is level 1)`,
        ],
      };
    }
  }
  const problems: Problems = [];
  const transactionId = nonEmptyString(
    input.transactionId,
    field(path, 'transactionId'),
    problems,
    MAX_ID_BYTES,
  );
  const orderId = orderIdOf(input.orderId, field(path, 'orderId'), problems);
  const sequence = sequenceOf(input.sequence, field(path, 'sequence'), problems);
  if (input.final !== undefined && typeof input.final !== 'boolean') {
    problems.push(`${field(path, 'final')} must be a boolean when present, got ${shown(input.final)}`);
  }
  const type = input.type;
  let data: Entry['data'] | undefined;
  if (typeof type !== 'string' || !(ENTRY_TYPES as readonly string[]).includes(type)) {
    problems.push(`${field(path, 'type')} must be one of ${ENTRY_TYPES.join(', ')}, got ${shown(type)}`);
  } else {
    data = dataOf(input, type as EntryType, path, problems);
  }
  if (problems.length > 0) return { ok: false, problems };
  const entry = {
    transactionId: transactionId!,
    orderId: orderId!,
    sequence: sequence!,
    type: type as EntryType,
    ...(input.final === true ? { final: true as const } : {}),
    data: data!,
  } as Entry;
  return { ok: true, value: entry };
}

export interface LedgerBatch {
  batchId: string;
  /** One result per entry, in batch order: the normalised entry, or the problems that park it. */
  entries: Array<{ index: number; result: Validation<Entry>; raw: unknown }>;
}

/**
 * Parses a ledger message body. The body may arrive as text, bytes or already-parsed JSON, as the
 * Functions host hands it over. Only a body that is not an object with an `entries` array fails
 * whole; each broken entry is reported on its own so the others can go on.
 */
export function parseLedgerMessage(body: unknown): Validation<LedgerBatch> {
  const parsed = parseBody(body);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  if (!isObject(value)) return { ok: false, problems: [`body must be a JSON object, got ${shown(value)}`] };
  if (!Array.isArray(value.entries)) {
    return { ok: false, problems: [`entries must be an array, got ${shown(value.entries)}`] };
  }
  // docs/messages.md (the order of checks): a batch needs a batchId with the rules of transactionId, else it is parked whole.
  const problems: Problems = [];
  const batchId = nonEmptyString(value.batchId, 'batchId', problems, MAX_ID_BYTES);
  if (batchId === undefined) return { ok: false, problems };
  return {
    ok: true,
    value: {
      batchId,
      entries: value.entries.map((raw: unknown, index: number) => ({
        index,
        raw,
        result: validateEntry(raw, `entries[${index}]`),
      })),
    },
  };
}

/** An entry message on `order-transactions`: its body is one entry. */
export function parseEntryMessage(body: unknown): Validation<Entry> {
  const parsed = parseBody(body);
  return parsed.ok ? validateEntry(parsed.value) : parsed;
}

function parseBody(body: unknown): Validation<unknown> {
  let text: string | undefined;
  // Stryker disable ObjectLiteral: equivalent, `fatal` is false by default (WHATWG Encoding, TextDecoder); the option says so in words.
  if (typeof body === 'string') text = body;
  else if (body instanceof Uint8Array) text = new TextDecoder('utf-8', { fatal: false }).decode(body);
  // Stryker restore ObjectLiteral
  if (text === undefined) return { ok: true, value: body };
  if (text.startsWith('\ufeff')) {
    return {
      ok: false,
      problems: [
        'body starts with a byte-order mark (U+FEFF), which JSON does not allow; send UTF-8 without one',
      ],
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, problems: [`body is not valid JSON: ${(error as Error).message}`] };
  }
}
