/** The documents of one order's partition (src/services/order-documents.ts), on the embedded store. */
import { createEmbeddedStore } from '../../local/store/document-store';
import { sha256Hex } from '../../src/domain/digest';
import { PermanentError } from '../../src/domain/errors';
import { newOrderState, type TransactionRecord } from '../../src/domain/order';
import type { ParkRequest } from '../../src/services/convoy/parking';
import {
  ORDER_HEADER_ID,
  fulfillmentInputOf,
  ORDERS_CONTAINER,
  ORDERS_PARTITION_KEY_PATH,
  outboxAfter,
  outboxWithout,
  readOrderHeader,
  readOrderLines,
  readRecords,
  readTransactionDocument,
  readTransactionRecord,
  readTransactionRecords,
  transactionDocument,
  transactionRecordId,
  transactionRecordOf,
  type Outbox,
} from '../../src/services/order-documents';
import { transactionRecordsByOrder } from '../../local/order-records';
import type { DocumentContainer } from '../../src/services/ports';

function ordersContainer(): DocumentContainer {
  return createEmbeddedStore().container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH);
}

const line = (transactionId: string, sequence: number, quantity = 1): TransactionRecord => ({
  transactionId,
  digest: `d-${transactionId}`,
  sequence,
  outcome: 'applied',
  line: { sku: `SKU-${transactionId}`, quantity, unitPrice: 10 },
});
const bare = (transactionId: string, sequence: number): TransactionRecord => ({
  transactionId,
  digest: `d-${transactionId}`,
  sequence,
  outcome: 'applied',
});

async function stored(
  orders: DocumentContainer,
  orderId: string,
  records: TransactionRecord[],
): Promise<void> {
  // A header beside the records: a query of the records must leave it out.
  await orders.create({ id: ORDER_HEADER_ID, orderId, kind: 'order' });
  for (const record of records) await orders.create(transactionDocument(orderId, record));
}

describe('the container', () => {
  it('is `orders`, partitioned by /orderId', () => {
    expect(ORDERS_CONTAINER).toBe('orders');
    expect(ORDERS_PARTITION_KEY_PATH).toBe('/orderId');
  });
});

describe('transactionRecordId', () => {
  it('is txn:<transactionId> for an id Cosmos DB takes', () => {
    expect(transactionRecordId('T-1')).toBe('txn:T-1');
    expect(transactionRecordId('T-sha256:1')).toBe('txn:T-sha256:1');
  });

  it.each(['T/1', 'T\\1', 'T?1', 'T#1', 'sha256:abc'])('is named by the SHA-256 of %s', (transactionId) => {
    expect(transactionRecordId(transactionId)).toBe(`txn:sha256:${sha256Hex(transactionId)}`);
  });
});

describe('transaction documents', () => {
  it('carry the record, its id, kind, order and slot, and the totals when given', () => {
    expect(transactionDocument('O-1', line('T-2', 2))).toEqual({
      id: 'txn:T-2',
      kind: 'transaction',
      orderId: 'O-1',
      slot: 2,
      ...line('T-2', 2),
    });
    expect(transactionDocument('O-1', line('T-2', 2), { lineCount: 2, total: 30 })).toMatchObject({
      slot: 2,
      after: { lineCount: 2, total: 30 },
    });
  });

  it('give back the record without the fields of the document and the store', async () => {
    const orders = ordersContainer();
    await stored(orders, 'O-1', [line('T-2', 2), bare('T-1', 1)]);
    const withLine = await orders.read('O-1', 'txn:T-2');
    const without = await orders.read('O-1', 'txn:T-1');
    if (withLine === undefined || without === undefined) throw new Error('records not stored');
    expect(transactionRecordOf(withLine.document as never)).toStrictEqual(line('T-2', 2));
    expect(transactionRecordOf(without.document as never)).toStrictEqual(bare('T-1', 1));
    expect(Object.keys(transactionRecordOf(without.document as never))).not.toContain('line');
  });
});

describe('reading records', () => {
  it('reads the records asked for, once each, and leaves out the absent ones', async () => {
    const orders = ordersContainer();
    await stored(orders, 'O-1', [line('T-2', 2), bare('T-1', 1)]);
    await stored(orders, 'O-2', [bare('T-3', 1)]);
    const reads: string[] = [];
    const read = orders.read.bind(orders);
    orders.read = async (partitionKey, id) => {
      reads.push(`${partitionKey}/${id}`);
      return read(partitionKey, id);
    };
    const found = await readRecords(orders, 'O-1', ['T-2', 'T-3', 'T-2', 'T-1']);
    expect(found).toEqual(
      new Map([
        ['T-2', line('T-2', 2)],
        ['T-1', bare('T-1', 1)],
      ]),
    );
    expect(reads.sort()).toEqual(['O-1/txn:T-1', 'O-1/txn:T-2', 'O-1/txn:T-3']);
  });

  it("queries an order's records, and every order's, without the headers", async () => {
    const orders = ordersContainer();
    await stored(orders, 'O-1', [line('T-3', 3), line('T-2', 2, 5), bare('T-1', 1)]);
    await stored(orders, 'O-2', [bare('T-9', 1)]);
    const records = await readTransactionRecords(orders, 'O-1');
    expect(records).toHaveLength(3);
    expect(records.map((r) => r.transactionId).sort()).toEqual(['T-1', 'T-2', 'T-3']);
    expect(records.find((r) => r.transactionId === 'T-2')).toStrictEqual(line('T-2', 2, 5));

    const byOrder = await transactionRecordsByOrder(orders);
    expect([...byOrder.keys()].sort()).toEqual(['O-1', 'O-2']);
    expect(byOrder.get('O-2')).toEqual(new Map([['T-9', bare('T-9', 1)]]));
    expect([...(byOrder.get('O-1')?.keys() ?? [])].sort()).toEqual(['T-1', 'T-2', 'T-3']);
    expect(byOrder.get('O-1')?.get('T-3')).toStrictEqual(line('T-3', 3));
    expect(await transactionRecordsByOrder(ordersContainer())).toEqual(new Map());
  });

  it("gives an order's lines in sequence order", async () => {
    const orders = ordersContainer();
    await stored(orders, 'O-1', [line('T-3', 3), bare('T-1', 1), line('T-2', 2, 5)]);
    expect(await readOrderLines(orders, 'O-1')).toEqual([
      { transactionId: 'T-2', sku: 'SKU-T-2', quantity: 5, unitPrice: 10 },
      { transactionId: 'T-3', sku: 'SKU-T-3', quantity: 1, unitPrice: 10 },
    ]);
  });
});

describe('reading by id, kind checked', () => {
  it("reads the header under `order`, apart from a record whose id is the orderId's", async () => {
    const orders = ordersContainer();
    await stored(orders, 'txn:T-1', [bare('T-1', 1)]);
    expect((await readOrderHeader(orders, 'txn:T-1'))?.document).toMatchObject({
      id: ORDER_HEADER_ID,
      kind: 'order',
    });
    expect((await readTransactionDocument(orders, 'txn:T-1', 'T-1'))?.document).toMatchObject({
      id: 'txn:T-1',
      kind: 'transaction',
    });
    expect(await readOrderHeader(orders, 'O-9')).toBeUndefined();
  });

  it('refuses, naming it, a document of another kind under the id of a record or of the header', async () => {
    const orders = ordersContainer();
    // A header as a store written before `order` has it, under its orderId: a record's id here.
    await orders.create({ id: 'txn:x', orderId: 'txn:x', kind: 'order' });
    await orders.create({ id: ORDER_HEADER_ID, orderId: 'O-1', kind: 'transaction' });
    for (const read of [
      () => readTransactionDocument(orders, 'txn:x', 'x'),
      () => readTransactionRecord(orders, 'txn:x', 'x'),
      () => readRecords(orders, 'txn:x', ['x']),
    ]) {
      await expect(read()).rejects.toThrow(PermanentError);
      await expect(read()).rejects.toMatchObject({
        code: 'unexpected-document',
        message: expect.stringContaining(
          'document "txn:x" of order "txn:x" is of kind "order", not transaction',
        ),
      });
    }
    await expect(readOrderHeader(orders, 'O-1')).rejects.toMatchObject({
      code: 'unexpected-document',
      message: expect.stringContaining('is of kind "transaction", not order'),
    });
  });
});

describe('fulfillmentInputOf', () => {
  const createdOrder = { ...newOrderState('O-1'), customerId: 'C-1', currency: 'EUR', total: 42 };

  it("is the order's customer, currency and total, with the correlation", () => {
    expect(fulfillmentInputOf(createdOrder, 'corr')).toEqual({
      orderId: 'O-1',
      customerId: 'C-1',
      currency: 'EUR',
      total: 42,
      correlationId: 'corr',
    });
  });

  it('refuses an order without a customer or a currency, naming what is missing', () => {
    const noCustomer = (): unknown => fulfillmentInputOf({ ...createdOrder, customerId: null }, null);
    const noCurrency = (): unknown => fulfillmentInputOf({ ...createdOrder, currency: null }, null);
    expect(noCustomer).toThrow(PermanentError);
    expect(noCustomer).toThrow(
      'order O-1 has no customerId: its OrderCreated was not applied, so it has nothing to fulfill',
    );
    expect(noCurrency).toThrow(
      'order O-1 has no currency: its OrderCreated was not applied, so it has nothing to fulfill',
    );
    try {
      noCurrency();
    } catch (error) {
      expect((error as PermanentError).code).toBe('order-not-created');
    }
  });
});

describe('the outbox, by key', () => {
  const park = (messageId: string, transactionId: string | null): ParkRequest => ({
    fromQueue: 'order-transactions',
    messageId,
    sessionId: 'O-1',
    body: {},
    transactionId,
    reason: 'rejected',
    description: 'test',
  });
  const start = (orderId: string) => ({
    orderId,
    customerId: 'C',
    currency: 'EUR',
    total: 1,
    correlationId: null,
  });

  it('knows a park by its transactionId, else by its messageId', () => {
    const pending: Outbox = { parks: [park('M-1', 'T-1'), park('M-2', null)], startFulfillment: null };
    const after = outboxAfter(pending, {
      parks: [park('M-9', 'T-1'), park('M-2', null), park('M-1', null), park('M-3', 'M-2')],
      startFulfillment: null,
    });
    expect(after?.parks).toEqual([park('M-1', 'T-1'), park('M-2', null), park('M-1', null)]);
    expect(outboxWithout(pending, { parks: [park('M-2', null)], startFulfillment: null })).toEqual({
      parks: [park('M-1', 'T-1')],
      startFulfillment: null,
    });
    expect(outboxWithout(pending, { parks: [park('M-1', null)], startFulfillment: null })).toEqual(pending);
  });

  it('keeps a pending saga start through writes that add none, and takes a new one', () => {
    const pending: Outbox = { parks: [], startFulfillment: start('O-1') };
    expect(outboxAfter(pending, { parks: [], startFulfillment: null })).toEqual(pending);
    expect(outboxAfter(null, { parks: [], startFulfillment: start('O-1') })).toEqual(pending);
    expect(outboxAfter(pending, { parks: [], startFulfillment: start('O-2') })).toEqual({
      parks: [],
      startFulfillment: start('O-2'),
    });
    expect(outboxAfter(null, { parks: [], startFulfillment: null })).toBeNull();
    expect(outboxAfter(null, { parks: [park('M-1', 'T-1')], startFulfillment: null })).toEqual({
      parks: [park('M-1', 'T-1')],
      startFulfillment: null,
    });
  });

  it("removes a saga start only when that order's was done", () => {
    const pending: Outbox = { parks: [park('M-1', 'T-1')], startFulfillment: start('O-1') };
    expect(outboxWithout(null, pending)).toBeNull();
    expect(outboxWithout(pending, { parks: [], startFulfillment: null })).toEqual(pending);
    expect(outboxWithout(pending, { parks: [], startFulfillment: start('O-2') })).toEqual(pending);
    expect(outboxWithout(pending, { parks: [], startFulfillment: start('O-1') })).toEqual({
      parks: [park('M-1', 'T-1')],
      startFulfillment: null,
    });
    const startOnly: Outbox = { parks: [], startFulfillment: start('O-1') };
    expect(outboxWithout(startOnly, { parks: [park('M-1', 'T-1')], startFulfillment: null })).toEqual(
      startOnly,
    );
    expect(outboxWithout({ parks: [], startFulfillment: null }, startOnly)).toBeNull();
  });
});
