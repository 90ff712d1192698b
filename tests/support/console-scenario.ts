/**
 * A run with something for every part of the operators' console, on the embedded runtime:
 * - `O-GAP`: its entry 2 fails on every delivery (a consumer bug, `breakEntry`) until it is
 *   dead-lettered, so entries 3 and 4 wait behind the gap; its entry 5 breaks a rule and is parked
 *   at the ledger (`invalid`). Once `fix()` is called, entry 2 is processed like any other.
 * - `O-STUCK`: no carrier takes 100 units, so the saga compensates, and its refund keeps failing
 *   (as in tests/e2e/saga.test.ts) until `fix()`: it needs a person's review.
 * - `O-OK`: a plain order, fulfilled.
 * - HOSTILE_ORDER: an id that is markup, with an entry parked `invalid`, so the page lists it; and an
 *   entry of SLASHED_ORDER, an id no order can have, parked `invalid` too.
 */
import type { InvocationContext } from '@azure/functions';
import { TransientError } from '../../src/domain/errors';
import type { Entry } from '../../src/domain/entry';
import type { ServiceBusQueueFunction } from '../../src/functions/definition';
import type { Downstream } from '../../src/services/fulfillment/downstream-ports';
import { createEmbeddedApp, type EmbeddedApp, type LedgerInput } from '../../local/app';
import { quiet } from './e2e';

export const GAP_ORDER = 'O-GAP';
export const STUCK_ORDER = 'O-STUCK';
export const PLAIN_ORDER = 'O-OK';
/** Markup, quotes and an ampersand are all allowed in an order id (docs/messages.md): the page shows it as text. */
/** An order id with a character no order id may hold. */
export const SLASHED_ORDER = 'O/BAD';
export const HOSTILE_ORDER = `O-<img src=x onerror="document.title='pwned'">&amp;'`;
/** The entry of GAP_ORDER the consumer fails on until the fix. */
export const BROKEN_TRANSACTION = 'O-GAP-2';

function entries(
  orderId: string,
  lines: ReadonlyArray<[sku: string, quantity: number, unitPrice: number]>,
): Entry[] {
  return [
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
}

export const CONSOLE_LEDGER: LedgerInput[] = [
  {
    messageId: 'B-GAP',
    sessionId: 'main',
    body: {
      batchId: 'B-GAP',
      entries: [
        ...entries(GAP_ORDER, [
          ['SKU-1', 1, 100],
          ['SKU-1', 2, 100],
          ['SKU-1', 1, 50],
        ]),
        // A quantity below 1 breaks an entry's rule: the ledger parks this one entry, `invalid`.
        {
          transactionId: 'O-GAP-5',
          orderId: GAP_ORDER,
          sequence: 5,
          type: 'TransactionAdded',
          data: { sku: 'SKU-1', quantity: -1, unitPrice: 100 },
        },
      ],
    },
  },
  {
    messageId: 'B-STUCK',
    sessionId: 'main',
    body: { batchId: 'B-STUCK', entries: entries(STUCK_ORDER, [['SKU-BIG', 100, 10]]) },
  },
  {
    messageId: 'B-HOSTILE',
    sessionId: 'main',
    body: {
      batchId: 'B-HOSTILE',
      entries: [
        ...entries(HOSTILE_ORDER, []),
        {
          transactionId: 'T-HOSTILE-2',
          orderId: HOSTILE_ORDER,
          sequence: 2,
          type: 'TransactionAdded',
          data: { sku: 'SKU-1', quantity: 0, unitPrice: 100 },
        },
        // No order can have this id (docs/messages.md): parked `invalid`, listed, but no order to open.
        {
          transactionId: 'T-SLASH-1',
          orderId: SLASHED_ORDER,
          sequence: 1,
          type: 'OrderCreated',
          data: { customerId: 'C-1', currency: 'EUR' },
        },
      ],
    },
  },
  {
    messageId: 'B-OK',
    sessionId: 'main',
    body: { batchId: 'B-OK', entries: entries(PLAIN_ORDER, [['SKU-1', 1, 100]]) },
  },
];

export interface ConsoleScenario {
  app: EmbeddedApp;
  /** The fix is deployed: the consumer takes O-GAP's entry 2, the refund service answers. */
  fix(): void;
}

function transactionIdOf(message: unknown): unknown {
  return typeof message === 'object' && message !== null && Object.hasOwn(message, 'transactionId')
    ? (message as { transactionId: unknown }).transactionId
    : undefined;
}

/** The app with both faults in place, the ledger sent and drained. */
export async function consoleScenario(): Promise<ConsoleScenario> {
  let broken = true;
  const breakEntry = (definition: ServiceBusQueueFunction): ServiceBusQueueFunction => ({
    ...definition,
    handler: async (message: unknown, context: InvocationContext) => {
      if (broken && transactionIdOf(message) === BROKEN_TRANSACTION)
        throw new TransientError('consumer-bug', `the consumer cannot take ${BROKEN_TRANSACTION} yet`);
      return definition.handler(message, context);
    },
  });
  const refundFailing = (builtIn: Downstream): Downstream => ({
    ...builtIn,
    payments: {
      ...builtIn.payments,
      refund: async (...args: Parameters<Downstream['payments']['refund']>) => {
        if (broken) throw new TransientError('downstream-unavailable', 'refund unavailable');
        return builtIn.payments.refund(...args);
      },
    },
  });
  const app = createEmbeddedApp({
    lockDurationMs: 200,
    timeScale: 1000,
    maxDeliveryCount: 3,
    log: quiet,
    catalog: { 'SKU-1': 50, 'SKU-BIG': 500 },
    creditLimit: 10_000,
    downstream: refundFailing,
    instrument: { orderTransactions: breakEntry },
  });
  await app.sendLedger(CONSOLE_LEDGER);
  await app.drain();
  return {
    app,
    fix: () => {
      broken = false;
    },
  };
}
