/**
 * Ids the contract allows that are also names of Object.prototype's members
 * (`constructor`, `toString`, `__proto__`, `hasOwnProperty`, `valueOf`) give the orders, sagas and
 * stock that any other ids give. The same input runs twice, once with those ids and once with each
 * renamed; the outcomes must be equal up to the renaming.
 */
import { createEmbeddedApp, type LedgerInput } from '../../local/app';
import type { Report } from '../../local/report';
import type { Entry } from '../../src/domain/entry';
import { expectAccountAddsUp } from '../support/account';

type Name = 'constructor' | 'toString' | '__proto__' | 'hasOwnProperty' | 'valueOf';
const PREFIX = 'Renamed-';

function inputs(id: (name: Name) => string): LedgerInput[] {
  const o1 = id('constructor');
  const o2 = id('toString');
  const o3 = id('__proto__');
  const batch = (batchId: string, entries: Entry[]): LedgerInput => ({
    messageId: batchId,
    sessionId: 'main',
    body: { batchId, entries },
  });
  return [
    batch('B-1', [
      {
        transactionId: id('constructor'),
        orderId: o1,
        sequence: 1,
        type: 'OrderCreated',
        data: { customerId: 'C-1', currency: 'EUR' },
      },
      {
        transactionId: id('toString'),
        orderId: o1,
        sequence: 2,
        type: 'TransactionAdded',
        data: { sku: id('__proto__'), quantity: 2, unitPrice: 10 },
      },
      {
        transactionId: id('__proto__'),
        orderId: o1,
        sequence: 3,
        type: 'TransactionAdded',
        data: { sku: 'SKU-1', quantity: 1, unitPrice: 5 },
      },
      {
        transactionId: id('hasOwnProperty'),
        orderId: o1,
        sequence: 4,
        type: 'TransactionAmended',
        final: true,
        data: { targetTransactionId: id('toString'), quantity: 3 },
      },
    ]),
    batch('B-2', [
      {
        transactionId: id('hasOwnProperty'),
        orderId: o2,
        sequence: 1,
        type: 'OrderCreated',
        data: { customerId: 'C-2', currency: 'EUR' },
      },
      {
        transactionId: id('valueOf'),
        orderId: o2,
        sequence: 2,
        type: 'TransactionAdded',
        final: true,
        data: { sku: id('toString'), quantity: 1, unitPrice: 7 },
      },
    ]),
    // A repeat of an entry of B-1 under another batch: a duplicate, whatever its transactionId.
    batch('B-3', [
      {
        transactionId: id('__proto__'),
        orderId: o1,
        sequence: 3,
        type: 'TransactionAdded',
        data: { sku: 'SKU-1', quantity: 1, unitPrice: 5 },
      },
      {
        transactionId: id('toString'),
        orderId: o3,
        sequence: 2,
        type: 'TransactionAdded',
        final: true,
        data: { sku: id('constructor'), quantity: 1, unitPrice: 1 },
      },
      {
        transactionId: id('constructor'),
        orderId: o3,
        sequence: 1,
        type: 'OrderCreated',
        data: { customerId: 'C-3', currency: 'EUR' },
      },
    ]),
  ];
}

async function run(id: (name: Name) => string): Promise<{ report: Report; stock: Record<string, number> }> {
  // The catalog as the CLI reads it: JSON, so a `__proto__` key is an own property.
  const catalog = JSON.parse(
    JSON.stringify({ [id('__proto__')]: 10, [id('constructor')]: 4, 'SKU-1': 50 }),
  ) as Record<string, number>;
  const app = createEmbeddedApp({
    lockDurationMs: 30,
    log: () => undefined,
    clock: { mode: 'virtual' },
    catalog,
    creditLimit: 10_000,
    retry: { firstIntervalMs: 1000, backoffCoefficient: 2, maxIntervalMs: 10_000, maxAttempts: 3 },
  });
  try {
    await app.sendLedger(inputs(id));
    await app.drain();
    const report = await app.report();
    expectAccountAddsUp(report);
    const stock: Record<string, number> = {};
    for (const sku of [id('__proto__'), id('constructor'), 'SKU-1', id('toString')]) {
      const stored = await app.store
        .container('inventory', '/sku')
        .read<{ id: string; available: number }>(sku, sku);
      Object.defineProperty(stock, sku.replace(PREFIX, ''), {
        value: stored?.document.available ?? null,
        enumerable: true,
      });
    }
    return { report, stock };
  } finally {
    await app.stop();
  }
}

describe('ids named like Object.prototype members', () => {
  it('give the same orders, sagas, parked list and stock as any other ids', async () => {
    const [plain, renamed] = await Promise.all([run((name) => name), run((name) => `${PREFIX}${name}`)]);
    const unrenamed = JSON.parse(JSON.stringify(renamed.report).split(PREFIX).join('')) as Report;
    expect(renamed.report.deadLettered).toEqual([]);
    expect(renamed.report.orders.map((order) => order.status)).toEqual([
      'submitted',
      'submitted',
      'submitted',
    ]);
    // The stats count redeliveries too, which depend on timing; what the input became does not.
    const outcome = (report: Report): Omit<Report, 'stats'> => ({
      orders: report.orders,
      parked: report.parked,
      deadLettered: report.deadLettered,
    });
    expect(outcome(JSON.parse(JSON.stringify(plain.report)) as Report)).toEqual(outcome(unrenamed));
    expect(plain.stock).toEqual(renamed.stock);
    // What the input means, so that equal is also right: stock held, an unknown sku refused.
    expect(plain.stock).toEqual({ ['__proto__']: 7, constructor: 3, 'SKU-1': 49, toString: null });
    expect(plain.report.orders.map((order) => [order.orderId, order.saga?.status])).toEqual([
      ['__proto__', 'completed'],
      ['constructor', 'completed'],
      ['toString', 'compensated'],
    ]);
  });
});
