/** The bench's targets (the README's Performance section), evaluated on the rows: PASS or FAIL with the numbers. */
import type { BenchRow, BenchTarget } from './results';

export const fixed = (value: number, digits = 2): string => value.toFixed(digits);

export function evaluateTargets(rows: readonly BenchRow[]): BenchTarget[] {
  const convoy = rows.filter((row) => row.design === 'convoy');
  const withLatency = convoy.filter((row) => row.latencyMs > 0);
  const label = (row: BenchRow): string => `${row.concurrency}@${row.latencyMs}ms`;
  const list = (selected: readonly BenchRow[], value: (row: BenchRow) => string): string =>
    selected.map((row) => `${label(row)}: ${value(row)}`).join(', ');
  const targets: BenchTarget[] = [
    {
      target: 'convoy: 0 ordering violations at every concurrency',
      pass: convoy.length > 0 && convoy.every((row) => row.orderingViolations === 0),
      detail: list(convoy, (row) => String(row.orderingViolations)),
    },
    {
      target: 'convoy: 0 double effects, every order document equals the reference',
      pass: convoy.length > 0 && convoy.every((row) => row.doubleEffects === 0 && row.ordersWrong === 0),
      detail: list(
        convoy,
        (row) => `${row.doubleEffects} double, ${row.ordersWrong}/${row.ordersChecked} wrong`,
      ),
    },
  ];
  const at16 = withLatency.find((row) => row.concurrency === 16);
  if (at16 !== undefined && at16.efficiency !== null) {
    targets.push({
      target: 'convoy: efficiency >= 0.85 at 16 sessions',
      pass: at16.efficiency >= 0.85,
      detail: `${fixed(at16.efficiency)} (${Math.round(at16.messagesPerSecond)} of ${Math.round(
        at16.idealMessagesPerSecond ?? 0,
      )} msg/s)`,
    });
  }
  targets.push(
    {
      target: 'convoy: <= 1.2 store round trips per first delivery',
      pass: convoy.length > 0 && convoy.every((row) => row.storeRoundTrips.perFirstDelivery <= 1.2),
      detail: list(convoy, (row) => fixed(row.storeRoundTrips.perFirstDelivery, 3)),
    },
    {
      target: 'convoy: <= 2 store round trips per duplicate',
      pass: convoy.every((row) => (row.storeRoundTrips.perDuplicate ?? 0) <= 2),
      detail: list(convoy, (row) =>
        row.storeRoundTrips.perDuplicate === null
          ? 'no duplicate'
          : `${fixed(row.storeRoundTrips.perDuplicate, 3)} (${row.storeRoundTrips.duplicates})`,
      ),
    },
    {
      target: 'convoy: Service Bus send calls per ledger delivery at the batch-size minimum',
      pass:
        convoy.length > 0 &&
        convoy.every(
          (row) => row.sendCalls.perLedgerDelivery <= row.sendCalls.minimumPerLedgerMessage + 1e-9,
        ),
      detail: list(
        convoy,
        (row) =>
          `${fixed(row.sendCalls.perLedgerDelivery, 3)} vs ${fixed(row.sendCalls.minimumPerLedgerMessage, 3)}`,
      ),
    },
  );
  const zero = convoy.find((row) => row.latencyMs === 0);
  if (zero !== undefined) {
    // V8's GC threads may borrow a second core; the CPU time of every thread, spent on one core,
    // bounds what one core can do.
    const oneCore = zero.cpuMicrosPerMessage > 0 ? 1e6 / zero.cpuMicrosPerMessage : Infinity;
    targets.push({
      target: 'convoy at zero latency: >= 5,000 messages/s (ledger in, order committed) on one core',
      pass: Math.min(zero.messagesPerSecond, oneCore) >= 5000,
      detail:
        `${Math.round(zero.messagesPerSecond)} msg/s at ${zero.concurrency} sessions; ${fixed(zero.cpuMicrosPerMessage, 1)} ` +
        `µs CPU per message over all threads, so at most ${Math.round(oneCore)} msg/s on one core`,
    });
  }
  return targets;
}
