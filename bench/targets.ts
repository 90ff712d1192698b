/** The bench's targets (the README's Performance section), evaluated on the rows: PASS or FAIL with the numbers. */
import type { BenchRow, BenchTarget } from './results';

export const fixed = (value: number, digits = 2): string => value.toFixed(digits);

/** What the app's own code costs per entry: the row's process CPU less its twin's; null without a twin. */
export function appCpuMicrosPerMessage(row: BenchRow): number | null {
  return row.twin === null ? null : row.cpuMicrosPerMessage - row.twin.cpuMicrosPerMessage;
}

/** The most request units one entry may cost, by the store meter's estimate (./request-units), in orders of `RU_TARGET_ENTRIES_PER_ORDER`. */
export const MAX_REQUEST_UNITS_PER_ENTRY = 10;

/** The order length the request-unit target is judged at: the sample's, the one that sizes the deployment. */
export const RU_TARGET_ENTRIES_PER_ORDER = 10;

/**
 * What an entry costs the store: the order-length row of 10-entry orders at most
 * MAX_REQUEST_UNITS_PER_ENTRY estimated RU. No target without that row.
 */
export function requestUnitTargets(
  rows: ReadonlyArray<{ entriesPerOrder: number; requestUnitsPerEntry: number }>,
): BenchTarget[] {
  const row = rows.find((found) => found.entriesPerOrder === RU_TARGET_ENTRIES_PER_ORDER);
  if (row === undefined) return [];
  return [
    {
      target: `order length: <= ${MAX_REQUEST_UNITS_PER_ENTRY} estimated RU per entry in orders of ${RU_TARGET_ENTRIES_PER_ORDER} entries`,
      pass: row.requestUnitsPerEntry <= MAX_REQUEST_UNITS_PER_ENTRY,
      detail: `${fixed(row.requestUnitsPerEntry)} RU per entry`,
    },
  ];
}

/** The sessions of the convoy row the efficiency target judges. */
export const TARGET_SESSIONS = 16;

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
  // On Azure the broker, the host's Service Bus and Cosmos DB I/O run outside the Node worker; here
  // they share its one thread. So the app is measured against its runtime-only twin (./twin): the
  // same runtime, bindings and clock, a handler that only waits. The absolute efficiency is shown too.
  const at16 = withLatency.find((row) => row.concurrency === TARGET_SESSIONS);
  if (at16 !== undefined && at16.twin !== null) {
    targets.push({
      target: 'convoy: >= 0.85 of its runtime-only twin at 16 sessions (what the app costs)',
      pass: at16.twin.ratio >= 0.85,
      detail:
        `${fixed(at16.twin.ratio)} (${Math.round(at16.messagesPerSecond)} vs ${Math.round(at16.twin.messagesPerSecond)} msg/s, medians; ` +
        `rounds ${at16.twin.rounds.map((ratio) => fixed(ratio)).join(', ')}; ` +
        `efficiency ${at16.efficiency === null ? '-' : fixed(at16.efficiency)} of ${Math.round(at16.idealMessagesPerSecond ?? 0)} msg/s absolute)`,
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
  const app = zero === undefined ? null : appCpuMicrosPerMessage(zero);
  if (zero !== undefined && zero.twin !== null && app !== null) {
    const oneCore = app > 0 ? 1e6 / app : Infinity;
    targets.push({
      target:
        "convoy at zero latency: the app's own code >= 5,000 messages/s on one core (<= 200 µs CPU per entry beyond its twin's)",
      pass: oneCore >= 5000,
      detail:
        `${fixed(app, 1)} µs (${fixed(zero.cpuMicrosPerMessage, 1)} less the twin's ${fixed(zero.twin.cpuMicrosPerMessage, 1)}), so ${Math.round(oneCore)} msg/s on one core; ` +
        `the whole process: ${Math.round(zero.messagesPerSecond)} msg/s at ${zero.concurrency} sessions, at most ${Math.round(1e6 / zero.cpuMicrosPerMessage)} on one core`,
    });
  }
  return targets;
}
