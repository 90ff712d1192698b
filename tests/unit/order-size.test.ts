/**
 * An order's documents stay within Cosmos DB's 2 MB item limit whatever its entries hold, in the
 * bytes the store writes (`Buffer.byteLength(JSON.stringify(document))`: UTF-8 JSON, escapes
 * included): the contract bounds every stored field in those bytes, and the entries of an order
 * (its sequence numbers), so no entry the app accepts can make the order's write fail for ever and
 * the order stall. Each case below drives the order's decisions and builds the documents the consumer
 * writes (`orderDocument`, `transactionDocument`), with every field at its bound in its most costly
 * form: ids made of control characters, which JSON writes as 6-byte escapes.
 */
import {
  MAX_ENTRIES_PER_ORDER,
  MAX_ENTRY_REASON_BYTES,
  MAX_ID_BYTES,
  MAX_TEXT_BYTES,
  jsonTextBytes,
  parseEntryMessage,
  type Entry,
} from '../../src/domain/entry';
import {
  decide,
  decideRelease,
  MAX_CORRELATION_ID_BYTES,
  MAX_MESSAGE_ID_BYTES,
  type ChangeDecision,
  type IncomingMessage,
  type OrderState,
  type Release,
  type TransactionRecord,
} from '../../src/domain/order';
import { MAX_BATCH_BYTES, MAX_DOCUMENT_BYTES } from '../../src/adapters/document-rules';
import { orderDocument } from '../../src/services/convoy/outbox';
import { transactionDocument, type Outbox } from '../../src/services/order-documents';

/**
 * What Cosmos adds to every item it stores (`_rid`, `_self`, `_etag`, `_attachments`, `_ts`: about
 * 150 bytes), with room to spare: the bound must hold with it.
 */
const SYSTEM_PROPERTIES_BYTES = 1024;
const bytesOf = (document: unknown): number => Buffer.byteLength(JSON.stringify(document), 'utf8');

/**
 * A text of exactly `bytes` bytes of JSON: `label`, then U+0001 (written `\u0001`, 6 bytes) as often
 * as fits, then ASCII. The label keeps ids apart.
 */
function costly(label: string, bytes: number): string {
  const left = bytes - jsonTextBytes(label);
  return label + '\u0001'.repeat(Math.floor(left / 6)) + 'x'.repeat(left % 6);
}

const ORDER_ID = costly('O', MAX_ID_BYTES);
const CORRELATION_ID = costly('c', MAX_CORRELATION_ID_BYTES);
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function entry(type: Entry['type'], sequence: number): Entry {
  const base = { transactionId: costly(`T${sequence}-`, MAX_ID_BYTES), orderId: ORDER_ID, sequence };
  switch (type) {
    case 'OrderCreated':
      return { ...base, type, data: { customerId: costly('C', MAX_TEXT_BYTES), currency: 'EUR' } };
    case 'TransactionAdded':
      return {
        ...base,
        type,
        final: true,
        data: { sku: costly(`S${sequence}-`, MAX_TEXT_BYTES), quantity: 1, unitPrice: MAX_SAFE },
      };
    case 'TransactionAmended':
      return {
        ...base,
        type,
        final: true,
        data: {
          targetTransactionId: costly(`U${sequence}-`, MAX_ID_BYTES),
          quantity: MAX_SAFE,
          unitPrice: MAX_SAFE,
        },
      };
    case 'OrderDeleted':
      return { ...base, type, final: true, data: { reason: costly('R', MAX_ENTRY_REASON_BYTES) } };
  }
}

/** The entry's message with every value an order keeps at its bound, and properties it does not keep. */
function message(body: Entry): IncomingMessage {
  return {
    messageId: costly(`M${body.sequence}-`, MAX_MESSAGE_ID_BYTES),
    sessionId: body.orderId,
    body,
    correlationId: CORRELATION_ID,
    applicationProperties: {
      transactionId: costly('t', MAX_ID_BYTES),
      sequence: body.sequence,
      final: true,
      batchId: costly('b', MAX_ID_BYTES),
      DeadLetterErrorDescription: 'd'.repeat(4096),
    },
  };
}

/** The largest header and the largest batch (header and records) of the order's writes. */
interface Largest {
  header: number;
  batch: number;
}

/**
 * The order's writes as the consumer makes them, the parked queue and the saga starter down the
 * whole time, so that every effect stays pending in the header. Sizes are taken at every batch that
 * writes more than the incoming entry's record (a release) and at the end of each phase: between
 * those the header only grows.
 */
function largestWrites(phases: ReadonlyArray<readonly Entry[]>): Largest {
  let state: OrderState | undefined;
  let outbox: Outbox | null = null;
  const records = new Map<string, TransactionRecord>();
  const largest: Largest = { header: 0, batch: 0 };
  const measure = (header: unknown, written: readonly TransactionRecord[]): void => {
    const headerBytes = bytesOf(header);
    const recordBytes = written.reduce(
      (sum, record) => sum + bytesOf(transactionDocument(ORDER_ID, record)),
      0,
    );
    largest.header = Math.max(largest.header, headerBytes);
    largest.batch = Math.max(largest.batch, headerBytes + recordBytes);
  };
  const write = (decision: ChangeDecision | Release, last: boolean): void => {
    const header = orderDocument(decision, CORRELATION_ID, outbox);
    outbox = header.outbox;
    state = decision.state;
    const written = [...(decision.created === null ? [] : [decision.created]), ...decision.changed];
    for (const record of written) records.set(record.transactionId, record);
    if (last || decision.changed.length > 0) measure(header, written);
  };
  for (const phase of phases) {
    phase.forEach((body, index) => {
      const decision = decide(state, message(body), records);
      expect(decision.kind).toBe('change');
      if (decision.kind !== 'change') return;
      write(decision, index === phase.length - 1);
      // What the change could not release in its own batch goes in further batches.
      for (let release = decideRelease(decision.state, records); release !== null;) {
        write(release, true);
        release = decideRelease(release.state, records);
      }
    });
  }
  return largest;
}

const range = (from: number, to: number): number[] =>
  from <= to
    ? Array.from({ length: to - from + 1 }, (_, index) => from + index)
    : Array.from({ length: from - to + 1 }, (_, index) => from - index);

/** The entry as it is when not flagged `final`. */
function open(type: Entry['type'], sequence: number): Entry {
  const flagged: Partial<Entry> = entry(type, sequence);
  delete flagged.final;
  return flagged as Entry;
}

const within = (largest: Largest): void => {
  expect(largest.header + SYSTEM_PROPERTIES_BYTES).toBeLessThan(MAX_DOCUMENT_BYTES);
  expect(largest.batch + (1 + 99) * SYSTEM_PROPERTIES_BYTES).toBeLessThan(MAX_BATCH_BYTES);
};

describe('the bounds that keep an order document within 2 MB, in the bytes the store writes', () => {
  it('refuses a field one byte past its bound, an escape counted as the bytes JSON writes', () => {
    const problems = (raw: unknown): string => {
      const result = parseEntryMessage(raw);
      return result.ok ? '' : result.problems.join('; ');
    };
    const created = entry('OrderCreated', 1);
    expect(problems(created)).toBe('');
    expect(problems({ ...created, orderId: `${ORDER_ID}x` })).toMatch(/^orderId must be at most 100 bytes/);
    expect(
      problems({ ...created, data: { customerId: `${costly('C', MAX_TEXT_BYTES)}x`, currency: 'EUR' } }),
    ).toMatch(/^data\.customerId must be at most 100 bytes/);
    const deleted = entry('OrderDeleted', 2);
    expect(
      problems({ ...deleted, data: { reason: `${costly('R', MAX_ENTRY_REASON_BYTES)}\u0001` } }),
    ).toMatch(/^data\.reason must be at most 500 bytes .*got 506/);
    expect(problems(entry('TransactionAdded', MAX_ENTRIES_PER_ORDER + 1))).toMatch(
      /sequence must be an integer from 1 to 1000/,
    );
  });

  it.each<Entry['type']>(['TransactionAdded', 'TransactionAmended', 'OrderDeleted', 'OrderCreated'])(
    'every entry buffered behind a gap at slot 1 (%s), then released, each rejected after the second: under 2 MB',
    (type) => {
      within(
        largestWrites([
          range(MAX_ENTRIES_PER_ORDER, 2).map((sequence) => entry(type, sequence)),
          [entry('OrderCreated', 1)],
        ]),
      );
    },
  );

  it.each<Entry['type']>(['TransactionAdded', 'TransactionAmended', 'OrderDeleted', 'OrderCreated'])(
    'every entry after the final one rejected (%s) while its park is pending: under 2 MB',
    (type) => {
      const entries = [
        entry('OrderCreated', 1),
        entry('TransactionAdded', 2),
        ...range(3, MAX_ENTRIES_PER_ORDER).map((sequence) => entry(type, sequence)),
      ];
      within(largestWrites([entries]));
    },
  );

  it('every entry an amendment of a line the order does not have, rejected, on an open order: under 2 MB', () => {
    within(
      largestWrites([
        [
          open('OrderCreated', 1),
          ...range(2, MAX_ENTRIES_PER_ORDER).map((sequence) => open('TransactionAmended', sequence)),
        ],
      ]),
    );
  });

  it('every entry a line, buffered and then released 99 to a batch: under 2 MB, header and records', () => {
    const line = (sequence: number): Entry => {
      const added = open('TransactionAdded', sequence) as Extract<Entry, { type: 'TransactionAdded' }>;
      return { ...added, data: { ...added.data, unitPrice: 1 } };
    };
    within(largestWrites([range(MAX_ENTRIES_PER_ORDER, 2).map(line), [entry('OrderCreated', 1)]]));
  });
});
