/**
 * An order's document stays within Cosmos DB's 2 MB item limit whatever its entries hold: the
 * contract bounds every stored field and the entries of an order (its sequence numbers), so no
 * entry the app accepts can make the order's write fail for ever and the order stall.
 */
import {
  MAX_ENTRIES_PER_ORDER,
  MAX_ID_LENGTH,
  MAX_ENTRY_REASON_LENGTH,
  MAX_TEXT_LENGTH,
  parseEntryMessage,
  type Entry,
} from '../../src/domain/entry';
import { entryDigest } from '../../src/domain/digest';
import { newOrderState, type Decision, type OrderState } from '../../src/domain/order';
import { resequence } from '../../src/domain/sequential-convoy';
import { outboxAfter, type Outbox } from '../../src/services/order-documents';

const COSMOS_MAX_ITEM_BYTES = 2 * 1024 * 1024;
const longest = (prefix: string, length: number) => prefix + 'x'.repeat(length - prefix.length);

function problemsOf(entry: unknown): string[] {
  const result = parseEntryMessage(entry);
  return result.ok ? [] : result.problems;
}

function added(sequence: number, extra: Partial<Entry> = {}): Entry {
  return {
    transactionId: longest(`T-${sequence}-`, MAX_ID_LENGTH),
    orderId: longest('O-', MAX_ID_LENGTH),
    sequence,
    type: 'TransactionAdded',
    data: {
      sku: longest(`S-${sequence}-`, MAX_TEXT_LENGTH),
      quantity: Number.MAX_SAFE_INTEGER,
      unitPrice: 1,
    },
    ...extra,
  } as Entry;
}

const PROPERTIES = {
  transactionId: 'x'.repeat(MAX_ID_LENGTH),
  sequence: MAX_ENTRIES_PER_ORDER,
  final: false,
  batchId: 'b'.repeat(MAX_ID_LENGTH),
};

/**
 * The order document's size once every entry has come (each case only grows), with what its writes
 * would leave pending.
 */
function finalDocumentBytes(entries: readonly Entry[]): number {
  let state: OrderState = newOrderState(entries[0].orderId);
  let outbox: Outbox | null = null;
  for (const entry of entries) {
    const decision: Decision = resequence(state, entry, entryDigest(entry), 'm'.repeat(128), PROPERTIES);
    if (decision.kind !== 'change') continue;
    state = decision.state;
    // Nothing pending is done: the parked queue stays down for the whole order.
    outbox = outboxAfter(outbox, {
      parks: decision.rejected.map((rejection) => ({
        fromQueue: 'order-transactions',
        messageId: rejection.messageId,
        sessionId: state.orderId,
        body: rejection.entry,
        correlationId: 'c'.repeat(MAX_ID_LENGTH),
        applicationProperties: rejection.properties,
        transactionId: rejection.transactionId,
        reason: 'rejected',
        description: rejection.description,
      })),
      startFulfillment: null,
    });
  }
  const document = { ...state, id: state.orderId, kind: 'order', correlationId: 'c'.repeat(100), outbox };
  return Buffer.byteLength(JSON.stringify(document));
}

describe('the bounds that keep an order document within 2 MB', () => {
  it('refuses a sku, customerId or delete reason past its bound, and a sequence past the entries per order', () => {
    expect(
      problemsOf(
        added(1, {
          data: { sku: 'x'.repeat(MAX_TEXT_LENGTH + 1), quantity: 1, unitPrice: 1 },
        } as Partial<Entry>),
      ).join(),
    ).toMatch(/data\.sku must be at most 100/);
    expect(
      problemsOf({
        ...added(1),
        type: 'OrderCreated',
        data: { customerId: 'c'.repeat(MAX_TEXT_LENGTH + 1), currency: 'EUR' },
      }).join(),
    ).toMatch(/data\.customerId must be at most 100/);
    expect(
      problemsOf({
        ...added(2),
        type: 'OrderDeleted',
        data: { reason: 'r'.repeat(MAX_ENTRY_REASON_LENGTH + 1) },
      }).join(),
    ).toMatch(/data\.reason must be at most 500/);
    expect(problemsOf(added(MAX_ENTRIES_PER_ORDER + 1)).join()).toMatch(
      /sequence must be an integer from 1 to 1000/,
    );
    expect(problemsOf(added(MAX_ENTRIES_PER_ORDER))).toEqual([]);
  });

  it('every entry buffered behind a gap at slot 1: the largest entries the contract allows stay under 2 MB', () => {
    const entries = Array.from({ length: MAX_ENTRIES_PER_ORDER - 1 }, (_, i) => added(i + 2));
    const bytes = finalDocumentBytes(entries);
    expect(bytes).toBeLessThan(COSMOS_MAX_ITEM_BYTES);
  });

  it('every entry after the final one rejected while its park is pending: still under 2 MB', () => {
    const created = {
      ...added(1),
      type: 'OrderCreated',
      data: { customerId: 'c'.repeat(MAX_TEXT_LENGTH), currency: 'EUR' },
    } as Entry;
    const entries = [
      created,
      added(2, { final: true }),
      ...Array.from({ length: MAX_ENTRIES_PER_ORDER - 2 }, (_, i) => added(i + 3)),
    ];
    const bytes = finalDocumentBytes(entries);
    expect(bytes).toBeLessThan(COSMOS_MAX_ITEM_BYTES);
  });

  it('every entry a line: under 2 MB', () => {
    const created = {
      ...added(1),
      type: 'OrderCreated',
      data: { customerId: 'c'.repeat(MAX_TEXT_LENGTH), currency: 'EUR' },
    } as Entry;
    const entries = [created, ...Array.from({ length: MAX_ENTRIES_PER_ORDER - 1 }, (_, i) => added(i + 2))];
    const bytes = finalDocumentBytes(entries);
    expect(bytes).toBeLessThan(COSMOS_MAX_ITEM_BYTES);
  });
});
