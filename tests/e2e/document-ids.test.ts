/**
 * The documents of an order's partition never share an id, whatever the order's id: an order named
 * like one of its own transaction records (`txn:<transactionId>`) is an order like any other
 * (docs/documents.md, one order's partition).
 */
import fc from 'fast-check';
import { createEmbeddedApp } from '../../local/app';
import {
  DOWNSTREAM_CONTAINER,
  DOWNSTREAM_PARTITION_KEY_PATH,
  INVENTORY_CONTAINER,
  INVENTORY_PARTITION_KEY_PATH,
} from '../../src/adapters/downstream';
import { orderIdProblem, validateEntry, type Entry } from '../../src/domain/entry';
import { ORDER_HEADER_ID, transactionRecordId } from '../../src/services/order-documents';
import type { Document } from '../../src/services/ports';
import { added, created, FAST, ledger, runToEnd } from '../support/e2e';

// Two deliveries, not ten: a message that fails for good dead-letters in seconds.
const OPTIONS = { ...FAST, maxDeliveryCount: 2, clock: { mode: 'virtual' as const } };

describe('document ids in an order partition, end to end', () => {
  it('submits order txn:T-1, whose OrderCreated is transaction T-1', async () => {
    const orderId = 'txn:T-1';
    const { report } = await runToEnd(
      [ledger('B-1', [created(orderId, 'T-1'), added(orderId, 'T-2', 2, 1, 100, true)])],
      { ...OPTIONS, catalog: { 'SKU-T-2': 5 } },
    );
    expect(report.deadLettered).toEqual([]);
    expect(report.parked).toEqual([]);
    expect(report.orders).toEqual([
      expect.objectContaining({ orderId, status: 'submitted', saga: { status: 'completed', reason: null } }),
    ]);
  });

  it('submits order txn:x, whose later entry is transaction x', async () => {
    const orderId = 'txn:x';
    const { report } = await runToEnd(
      [ledger('B-1', [created(orderId, 'T-1'), added(orderId, 'x', 2, 1, 100, true)])],
      { ...OPTIONS, catalog: { 'SKU-x': 5 } },
    );
    expect(report.deadLettered).toEqual([]);
    expect(report.parked).toEqual([]);
    expect(report.orders).toEqual([
      expect.objectContaining({ orderId, status: 'submitted', saga: { status: 'completed', reason: null } }),
    ]);
  });

  /** Ids made of other kinds' prefixes and of characters an encoding could trip on. */
  const PIECES = [
    'txn:',
    'saga:',
    'order',
    'sha256:',
    'charge:',
    'reservation:',
    'sku-sha256:',
    ':',
    '/',
    '?',
    '#',
    '\u0001',
    'é',
    '🙂',
  ];
  const textArb = fc
    .array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ minLength: 1, maxLength: 4 })), {
      minLength: 1,
      maxLength: 5,
    })
    .map((pieces) => pieces.join(''));
  const valid = (entry: Entry): boolean => validateEntry(entry).ok;
  const orderArb = fc
    .uniqueArray(textArb, { minLength: 2, maxLength: 3 })
    .chain((transactionIds) =>
      fc.record({
        transactionIds: fc.constant(transactionIds),
        orderId: fc
          .oneof(
            textArb,
            fc.constantFrom(...transactionIds.map(transactionRecordId)),
            fc.constant(ORDER_HEADER_ID),
          )
          .filter((orderId) => orderIdProblem(orderId) === null),
        skus: fc.array(textArb, {
          minLength: transactionIds.length - 1,
          maxLength: transactionIds.length - 1,
        }),
      }),
    )
    .map(({ orderId, transactionIds, skus }): Entry[] => [
      {
        transactionId: transactionIds[0],
        orderId,
        sequence: 1,
        type: 'OrderCreated',
        data: { customerId: 'C-1', currency: 'EUR' },
      },
      ...skus.map((sku, index): Entry => ({
        transactionId: transactionIds[index + 1],
        orderId,
        sequence: index + 2,
        type: 'TransactionAdded',
        ...(index === skus.length - 1 ? { final: true as const } : {}),
        data: { sku, quantity: 1, unitPrice: 100 },
      })),
    ])
    .filter((entries) => entries.every(valid));

  it('keeps every document of every order, in every container, whatever the ids: each order submitted and fulfilled', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(orderArb, { minLength: 1, maxLength: 2, selector: (entries) => entries[0].orderId }),
        async (orders) => {
          const entries = orders.flat();
          const skus = entries.flatMap((entry) =>
            entry.type === 'TransactionAdded' ? [entry.data.sku] : [],
          );
          const app = createEmbeddedApp({
            ...OPTIONS,
            catalog: Object.fromEntries(skus.map((sku) => [sku, 100])),
          });
          try {
            await app.sendLedger([ledger('B-1', entries)]);
            await app.drain();
            const report = await app.report();
            expect(report.deadLettered).toEqual([]);
            expect(report.parked).toEqual([]);
            const kinds = async (name: string, path: string): Promise<string[]> =>
              (await app.store.container(name, path).query<Document & { kind?: string }>({}))
                .map(({ document }) => `${String(document[path.slice(1)])} ${document.kind ?? 'stock'}`)
                .sort();
            const expected = (perOrder: (order: Entry[]) => string[]): string[] =>
              orders.flatMap(perOrder).sort();
            expect(await kinds('orders', '/orderId')).toEqual(
              expected((order) => [
                `${order[0].orderId} order`,
                `${order[0].orderId} saga`,
                ...order.map(() => `${order[0].orderId} transaction`),
              ]),
            );
            expect(await kinds(DOWNSTREAM_CONTAINER, DOWNSTREAM_PARTITION_KEY_PATH)).toEqual(
              expected((order) =>
                ['charge', 'confirmation', 'reservation', 'shipment'].map(
                  (kind) => `${order[0].orderId} ${kind}`,
                ),
              ),
            );
            expect(await kinds(INVENTORY_CONTAINER, INVENTORY_PARTITION_KEY_PATH)).toEqual(
              [...new Set(skus)].map((sku) => `${sku} stock`).sort(),
            );
            for (const order of orders) {
              expect(report.orders).toContainEqual(
                expect.objectContaining({
                  orderId: order[0].orderId,
                  status: 'submitted',
                  saga: { status: 'completed', reason: null },
                }),
              );
            }
          } finally {
            await app.stop();
          }
        },
      ),
      { numRuns: 15 },
    );
  }, 300_000);
});
