/**
 * The saga under seeded activity faults (docs/cli.md): with `activityTransient` and
 * `activityResultLost`, every saga ends with the outcome, the charges, the refunds and the stock of
 * the fault-free run, and one seed gives one run.
 */
import { createEmbeddedApp, type EmbeddedAppOptions, type LedgerInput } from '../../local/app';
import type { Entry } from '../../src/domain/entry';
import { expectAccountAddsUp } from '../support/account';

type Line = [sku: string, quantity: number, unitPrice: number];

function orderMessages(orderId: string, lines: readonly Line[]): LedgerInput {
  const entries: Entry[] = [
    {
      transactionId: `${orderId}-1`,
      orderId,
      sequence: 1,
      type: 'OrderCreated',
      data: { customerId: `C-${orderId}`, currency: 'EUR' },
    },
    ...lines.map(([sku, quantity, unitPrice], index): Entry => ({
      transactionId: `${orderId}-${index + 2}`,
      orderId,
      sequence: index + 2,
      type: 'TransactionAdded',
      ...(index === lines.length - 1 ? { final: true as const } : {}),
      data: { sku, quantity, unitPrice },
    })),
  ];
  return { messageId: `B-${orderId}`, sessionId: 'main', body: { batchId: `B-${orderId}`, entries } };
}

const INPUTS: LedgerInput[] = [
  ...Array.from({ length: 12 }, (_, i) => orderMessages(`O-OK-${i}`, [['SKU-1', 1 + (i % 3), 100 + i]])),
  orderMessages('O-NOSKU', [['SKU-X', 1, 100]]),
  orderMessages('O-CREDIT', [['SKU-2', 1, 50_000]]),
  orderMessages('O-ALT', [['SKU-BIG', 40, 10]]),
  orderMessages('O-SHIP', [['SKU-BIG', 90, 10]]),
];

/** Everything a saga leaves behind: its outcome, and the money and stock it moved. */
async function outcomes(options: EmbeddedAppOptions): Promise<{ state: unknown; faults: number }> {
  const app = createEmbeddedApp({
    lockDurationMs: 30,
    log: () => undefined,
    clock: { mode: 'virtual' },
    catalog: { 'SKU-1': 500, 'SKU-2': 50, 'SKU-BIG': 500 },
    creditLimit: 10_000,
    // Retries that do not run out at these rates, so every outcome must equal the fault-free one.
    retry: { firstIntervalMs: 1000, backoffCoefficient: 2, maxIntervalMs: 10_000, maxAttempts: 12 },
    ...options,
  });
  try {
    await app.sendLedger(INPUTS);
    await app.drain();
    const report = await app.report();
    expectAccountAddsUp(report);
    const documents = async (container: string, key: string) =>
      (await app.store.container(container, key).query({}))
        .map(({ document }) => {
          const { id, available, holds, amount, refunded, status, carrier } = document;
          return { id, available, holds, amount, refunded, status, carrier };
        })
        .sort((a, b) => (a.id < b.id ? -1 : 1));
    return {
      state: {
        sagas: report.orders.map((order) => [order.orderId, order.saga]),
        stock: await documents('inventory', '/sku'),
        downstream: await documents('downstream', '/orderId'),
      },
      faults: app.durable.stats().faultsInjected,
    };
  } finally {
    await app.stop();
  }
}

describe('saga outcomes under activity faults', () => {
  it('activityResultLost and activityTransient leave the outcomes, charges, refunds and stock of the fault-free run', async () => {
    const clean = await outcomes({ seed: 5 });
    for (const faults of [
      { activityResultLost: 0.3 },
      { activityResultLost: 0.25, activityTransient: 0.25 },
    ]) {
      const faulty = await outcomes({ seed: 5, faults });
      expect(faulty.faults).toBeGreaterThan(10);
      expect(faulty.state).toEqual(clean.state);
    }
  });

  it('one seed gives one run', async () => {
    const faults = { activityResultLost: 0.2, activityTransient: 0.2 };
    const first = await outcomes({ seed: 9, faults });
    expect(await outcomes({ seed: 9, faults })).toEqual(first);
  });
});
