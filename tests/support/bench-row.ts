/** A convoy row of the bench made up for a test: 16 sessions at 2 ms, correct, beside a twin of equal speed. */
import type { BenchRow } from '../../bench/results';

export function convoyRow(change: Partial<BenchRow> = {}): BenchRow {
  return {
    design: 'convoy',
    concurrency: 16,
    latencyMs: 2,
    messages: 100,
    deliveries: 105,
    seconds: 1,
    messagesPerSecond: 2000,
    latencyMs50: 1,
    latencyMs99: 2,
    idealMessagesPerSecond: 8000,
    brokerRoundTripsPerMessage: 0,
    efficiency: 0.25,
    twin: { messagesPerSecond: 2000, ratio: 1, cpuMicrosPerMessage: 300, rounds: [1] },
    storeRoundTrips: {
      total: 100,
      storeCounter: 100,
      meanMs: 2,
      perMessage: 1,
      firstDeliveries: 100,
      perFirstDelivery: 1,
      duplicates: 5,
      perDuplicate: 0,
    },
    sendCalls: {
      orderTransactions: 10,
      ledgerMessages: 10,
      ledgerDeliveries: 10,
      perLedgerMessage: 1,
      perLedgerDelivery: 1,
      minimumPerLedgerMessage: 1,
    },
    orderingViolations: 0,
    doubleEffects: 0,
    ordersWrong: 0,
    ordersChecked: 10,
    cpuMicrosPerMessage: 400,
    cpuBusy: 1,
    lockExpired: 0,
    hostWarnings: 0,
    ...change,
  };
}
