/** The bench's result as the text `npm run bench` prints. */
import { textTable } from '../tools/cli/text-table';
import type { BenchResult } from './results';
import { appCpuMicrosPerMessage, fixed } from './targets';
import { formatSessionTable, sessionTableOptions } from './session-table';
import { formatOrderLengthTable } from './order-length';
import { formatHostSettings } from './azure-settings';
import { formatDeploymentSizing } from './deployment-sizing';
import { formatColdStart } from './cold-start';

/** A number to one decimal, or '-' where there is none. */
const orDash = (value: number | null): string => (value === null ? '-' : fixed(value, 1));

export function formatBench(result: BenchResult): string {
  const { options, workload } = result;
  const header = [
    'design',
    'conc',
    'lat ms',
    'msg/s',
    'p50 ms',
    'p99 ms',
    'eff',
    'twin msg/s',
    'vs twin',
    'RT/first',
    'RT/dup',
    'RT ms',
    'sends/ledger (min)',
    'order viol',
    'double',
    'wrong orders',
    'CPU µs/msg',
    'twin CPU',
    'app CPU',
    'CPU %',
  ];
  const rows = result.rows.map((row) => [
    row.design,
    String(row.concurrency),
    String(row.latencyMs),
    String(Math.round(row.messagesPerSecond)),
    fixed(row.latencyMs50, 0),
    fixed(row.latencyMs99, 0),
    row.efficiency === null ? '-' : fixed(row.efficiency),
    row.twin === null ? '-' : String(Math.round(row.twin.messagesPerSecond)),
    row.twin === null ? '-' : fixed(row.twin.ratio),
    fixed(row.storeRoundTrips.perFirstDelivery),
    row.storeRoundTrips.perDuplicate === null ? '-' : fixed(row.storeRoundTrips.perDuplicate),
    fixed(row.storeRoundTrips.meanMs),
    `${fixed(row.sendCalls.perLedgerDelivery)} (${fixed(row.sendCalls.minimumPerLedgerMessage)})`,
    String(row.orderingViolations),
    String(row.doubleEffects),
    `${row.ordersWrong}/${row.ordersChecked}`,
    fixed(row.cpuMicrosPerMessage, 1),
    row.twin === null ? '-' : fixed(row.twin.cpuMicrosPerMessage, 1),
    orDash(appCpuMicrosPerMessage(row)),
    String(Math.round(row.cpuBusy * 100)),
  ]);
  const warnings = result.rows.filter((row) => row.hostWarnings > 0 || row.lockExpired > 0);
  const orderLength =
    result.orderLength === null ? [] : ['', formatOrderLengthTable(options, result.orderLength)];
  const parts = [
    ...orderLength,
    ...(result.hostSettings === null ? [] : ['', formatHostSettings(result.hostSettings)]),
    ...(result.deployment === null ? [] : ['', formatDeploymentSizing(result.deployment)]),
    ...(result.coldStart === null ? [] : ['', formatColdStart(result.coldStart)]),
  ];
  const targets = result.targets.map(
    (target) => `${target.pass ? 'PASS' : 'FAIL'}  ${target.target}: ${target.detail}`,
  );
  if (options.only !== undefined) {
    return [
      `node ${result.environment.node} ${result.environment.nodeFlags}, ${result.environment.cores} cores (${result.environment.cpu})`,
      ...parts,
      '',
      ...targets,
    ].join('\n');
  }
  return [
    `workload: ${workload.orders} orders x ${options.entriesPerOrder} entries = ${workload.entries} entries in ` +
      `${workload.ledgerMessages} ledger messages of ${options.batchSize} (${options.activeOrders} orders open at once, seed ${options.seed}), all sent at the start`,
    `fault on every design: duplicate=${options.duplicate} (seeded, seed ${options.seed}); store and Service Bus round trips ` +
      `${options.latencyMs} ms simulated (setTimeout); sessionIdleTimeout ${options.sessionIdleTimeoutMs} ms; sagas not started (record-only)`,
    `node ${result.environment.node} ${result.environment.nodeFlags}, ${result.environment.cores} cores (${result.environment.cpu})`,
    '',
    textTable([header, ...rows], Number.POSITIVE_INFINITY, (column) => (column === 0 ? 'left' : 'right')),
    '',
    'conc: sessions (convoy) or concurrent calls (naive). msg/s: distinct entries from the first ledger send to the last',
    'order committed. p50/p99: ledger send to applied, per entry, backlog wait included. eff: msg/s / ideal, ideal =',
    'min(conc, orders) / ((store + Service Bus round trips per message) x latency); a delivery waits for its receive',
    'and its completion (prefetchCount 0), a session slot for each accept. twin msg/s: the runtime-only twin (same broker,',
    'host, store and clock; a handler that only waits one round trip); vs twin: msg/s / twin msg/s. RT/first, RT/dup:',
    'store round trips per first and per duplicate delivery. RT ms: mean store call as the consumer saw it. sends/ledger: order-transactions send calls',
    'per ledger delivery (min: what the 256 KB batch limit allows). order viol: entries applied before their predecessor.',
    'double: extra applications of an entry. wrong orders: order documents differing from the domain reference at the end.',
    "CPU µs/msg: process CPU time (all threads) per entry; twin CPU: the twin's; app CPU: the difference, what the app's",
    'own code costs per entry. CPU %: CPU time / wall time (over 100: GC threads on a 2nd core).',
    ...(warnings.length > 0
      ? [
          '',
          ...warnings.map(
            (row) =>
              `warning: ${row.design} x${row.concurrency}: ${row.hostWarnings} host warnings, ${row.lockExpired} locks expired`,
          ),
        ]
      : []),
    ...(result.sessions === null
      ? []
      : ['', formatSessionTable(sessionTableOptions(options), result.sessions)]),
    ...parts,
    '',
    ...targets,
  ].join('\n');
}
