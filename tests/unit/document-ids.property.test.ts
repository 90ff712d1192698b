/**
 * No two documents of an order's partition share an id, whatever the order's and its transactions'
 * ids (docs/documents.md, one order's partition): the header is `order`, a transaction record
 * `txn:<transactionId>` (or `txn:sha256:<hex>`), the saga record `saga:<orderId>`, so an order named
 * like one of its own records (`txn:T-1` with a transaction `T-1`) is an order like any other. And
 * every id is one Cosmos DB takes (src/adapters/document-rules.ts).
 */
import fc from 'fast-check';
import { MAX_ID_BYTES, orderIdProblem, validateEntry } from '../../src/domain/entry';
import { isValidDocumentId } from '../../src/adapters/document-rules';
import { sagaRecordId } from '../../src/services/fulfillment/saga-record';
import { ORDER_HEADER_ID, transactionRecordId } from '../../src/services/order-documents';

/** Pieces an id of another kind is made of, and characters an encoding could trip on. */
const PIECES = [
  'txn:',
  'saga:',
  'order',
  'sha256:',
  'T-1',
  ':',
  '/',
  '\\',
  '?',
  '#',
  '%2F',
  ' ',
  '\u0001',
  '\ud800',
  'é',
  '🙂',
  '__proto__',
  '0'.repeat(64),
];

const pieceArb = fc.oneof(fc.constantFrom(...PIECES), fc.string({ minLength: 1, maxLength: 8 }));
const textArb = fc.array(pieceArb, { minLength: 1, maxLength: 6 }).map((pieces) => pieces.join(''));

/** A transactionId an entry may carry. */
const transactionIdArb = textArb.filter(
  (id) =>
    validateEntry({
      transactionId: id,
      orderId: 'O-1',
      sequence: 1,
      type: 'OrderDeleted',
    }).ok,
);

/** An order's transactions, and an orderId an entry may carry, often named like one of its records. */
const orderArb = fc
  .uniqueArray(transactionIdArb, { minLength: 1, maxLength: 12 })
  .chain((transactionIds) =>
    fc
      .tuple(
        fc.oneof(
          textArb,
          fc.constantFrom(...transactionIds.map(transactionRecordId)),
          fc.constantFrom(...transactionIds.map((id) => `saga:${id}`)),
          fc.constant(ORDER_HEADER_ID),
        ),
        fc.constant(transactionIds),
      )
      .filter(([orderId]) => orderIdProblem(orderId) === null),
  );

/** Every document the orders container holds for these orders, as (partition, id). */
function documentsOf(orders: ReadonlyArray<readonly [string, readonly string[]]>): Array<[string, string]> {
  return orders.flatMap(([orderId, transactionIds]): Array<[string, string]> => [
    [orderId, ORDER_HEADER_ID],
    [orderId, sagaRecordId(orderId)],
    ...transactionIds.map((transactionId): [string, string] => [orderId, transactionRecordId(transactionId)]),
  ]);
}

describe('the documents of the orders container', () => {
  it('never share (partition, id), and every id is one Cosmos DB takes', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(orderArb, { minLength: 1, maxLength: 4, selector: ([orderId]) => orderId }),
        (orders) => {
          const documents = documentsOf(orders);
          const keys = documents.map(([partition, id]) => JSON.stringify([partition, id]));
          expect(new Set(keys).size).toBe(keys.length);
          for (const [, id] of documents) expect(isValidDocumentId(id)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps apart, in one partition, an order named like a record of its own and that record', () => {
    for (const [orderId, transactionId] of [
      ['txn:T-1', 'T-1'],
      ['txn:x', 'x'],
      ['order', 'order'],
      ['saga:O-1', 'O-1'],
      [`txn:sha256:${'0'.repeat(64)}`, `sha256:${'0'.repeat(64)}`],
    ]) {
      const ids = [ORDER_HEADER_ID, sagaRecordId(orderId), transactionRecordId(transactionId)];
      expect(new Set(ids).size).toBe(3);
    }
  });

  it('a record id stays within the 255 characters of a Cosmos id for the longest transactionId', () => {
    expect(transactionRecordId('x'.repeat(MAX_ID_BYTES)).length).toBeLessThanOrEqual(255);
    expect(sagaRecordId('x'.repeat(MAX_ID_BYTES)).length).toBeLessThanOrEqual(255);
  });
});
