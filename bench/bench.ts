/**
 * `npm run bench`: the convoy against the naive designs on one generated ledger, on the embedded
 * runtime with a simulated store round-trip latency. Prints a table, checks it against the targets
 * (PASS/FAIL, never an exit code) and writes the numbers as JSON with `--json`.
 *
 * Every design gets the same workload and the same seeded `duplicate` fault. The ledger is sent
 * whole at the start, so throughput is how fast a backlog drains and latency (ledger send to
 * applied) includes the time an entry waits in that backlog.
 */
import { cpus } from 'node:os';
import { writeFileSync } from 'node:fs';
import { generateBenchWorkload, type BenchWorkload } from './workload';
import { UsageError } from '../local/cli/start-args';
import { runMain } from '../tools/cli/run-main';
import { type BenchOptions, BENCH_DEFAULTS, type BenchRow, type BenchResult } from './results';
import { type RunSetup, runConvoy, runNaive, rowOf } from './runs';
import { fixed, evaluateTargets, requestUnitTargets } from './targets';
import { formatBench } from './format';
import { BENCH_USAGE, parseBenchArgs } from './args';
import { sessionTable, sessionTableOptions } from './session-table';
import { runTwin } from './twin';
import { combineRounds, twinGoesFirst, type TwinRun } from './rounds';
import { TARGET_SESSIONS } from './targets';
import { orderLengthTargets, runOrderLengthTable } from './order-length';
import { npmStartTargets, runNpmStartRow } from './npm-start';
import { coldStartTargets, runColdStartRow } from './cold-start';
import { compareHostSettings, hostSettingsTargets, type HostSettingsComparison } from './azure-settings';
import {
  deploymentSizingTargets,
  sizeSupportedConfigurations,
  type DeploymentSizing,
} from './deployment-sizing';
import { readBicepDeployment } from './bicep-deployment';
import {
  ORDER_LENGTH_SIZING_ENTRIES_PER_ORDER,
  runOrderLengthRow,
  type OrderLengthRow,
} from './order-length';

export type { BenchOptions, BenchResult, BenchRow, BenchTarget, Design } from './results';
export { BENCH_DEFAULTS } from './results';
export { formatBench } from './format';
export { BENCH_USAGE, BenchUsageError, parseBenchArgs } from './args';

// ---------------------------------------------------------------------------------------------
// The bench
// ---------------------------------------------------------------------------------------------

export async function runBench(
  overrides: Partial<BenchOptions> = {},
  progress: (line: string) => void = () => undefined,
): Promise<BenchResult> {
  const options: BenchOptions = { ...BENCH_DEFAULTS, ...overrides };
  const workload = generateBenchWorkload({
    orders: options.orders,
    entriesPerOrder: options.entriesPerOrder,
    batchSize: options.batchSize,
    activeOrders: options.activeOrders,
    seed: options.seed,
  });
  const setups: RunSetup[] = [];
  const all = options.only === undefined;
  if (all && options.naive) {
    setups.push({ design: 'one consumer', concurrency: 1, latencyMs: options.latencyMs });
    setups.push({
      design: 'competing consumers',
      concurrency: options.competingCalls,
      latencyMs: options.latencyMs,
    });
  }
  for (const sessions of all ? options.sessions : []) {
    setups.push({ design: 'convoy', concurrency: sessions, latencyMs: options.latencyMs });
  }
  if (all && options.zeroLatencySessions > 0) {
    setups.push({ design: 'convoy', concurrency: options.zeroLatencySessions, latencyMs: 0 });
  }

  if (all && options.warmupOrders > 0) await warmUp(options, progress);
  return measure(options, workload, setups, progress);
}

/**
 * Unreported runs of each design first, so that no measured run pays for JIT warm-up: at zero
 * latency, and the convoy at the bench's latency too (its waits take other code paths), with the
 * most sessions asked for, which is quickest.
 */
async function warmUp(options: BenchOptions, progress: (line: string) => void): Promise<void> {
  progress(
    `warm-up: ${Math.min(options.warmupOrders, options.orders)} orders through each design, not reported ...`,
  );
  const warmup = generateBenchWorkload({
    orders: Math.min(options.warmupOrders, options.orders),
    entriesPerOrder: options.entriesPerOrder,
    batchSize: options.batchSize,
    activeOrders: options.activeOrders,
    seed: options.seed + 1,
  });
  const sessions = Math.max(16, ...options.sessions);
  if (options.naive) {
    await runNaive(warmup, options, {
      design: 'competing consumers',
      concurrency: options.competingCalls,
      latencyMs: 0,
    });
  }
  await runConvoy(warmup, options, { design: 'convoy', concurrency: sessions, latencyMs: 0 });
  if (options.latencyMs > 0) {
    await runConvoy(warmup, options, {
      design: 'convoy',
      concurrency: sessions,
      latencyMs: options.latencyMs,
    });
  }
}

async function measure(
  options: BenchOptions,
  workload: BenchWorkload,
  setups: readonly RunSetup[],
  progress: (line: string) => void,
): Promise<BenchResult> {
  const rows: BenchRow[] = [];
  for (const setup of setups) {
    const withTwin = options.twin && setup.design === 'convoy';
    // The rows a target judges run in rounds beside their twin (./rounds); the others once.
    const judged = setup.concurrency === TARGET_SESSIONS || setup.latencyMs === 0;
    const rounds = withTwin && judged ? options.twinRounds : 1;
    const runs: BenchRow[] = [];
    const twins: TwinRun[] = [];
    const runRow = async (): Promise<void> => {
      // Each run starts on a clean heap when node runs with --expose-gc (npm run bench does).
      globalThis.gc?.();
      const output =
        setup.design === 'convoy'
          ? await runConvoy(workload, options, setup)
          : await runNaive(workload, options, setup);
      const run = rowOf(workload, setup, output);
      runs.push(run);
      progress(`  ${Math.round(run.messagesPerSecond)} msg/s in ${fixed(run.seconds)} s`);
    };
    const runTwinOfRow = async (): Promise<void> => {
      globalThis.gc?.();
      const twin = await runTwin(workload, options, setup);
      twins.push(twin);
      progress(
        `  runtime-only twin: ${Math.round(twin.messagesPerSecond)} msg/s, ${fixed(twin.cpuMicrosPerMessage, 1)} µs CPU a message`,
      );
    };
    for (let round = 1; round <= rounds; round += 1) {
      const of = rounds > 1 ? ` (round ${round} of ${rounds})` : '';
      progress(`${setup.design} x${setup.concurrency} at ${setup.latencyMs} ms${of} ...`);
      if (!withTwin) await runRow();
      else if (twinGoesFirst(round)) {
        await runTwinOfRow();
        await runRow();
      } else {
        await runRow();
        await runTwinOfRow();
      }
    }
    rows.push(combineRounds(runs, twins));
  }

  let sessions = null;
  if (options.only === undefined && options.sessionsTable) {
    progress('session settings table, in virtual time ...');
    sessions = sessionTable(sessionTableOptions(options));
  }

  const orderLength =
    (options.only === undefined || options.only === 'order-length') && options.orderLengths.length > 0
      ? await runOrderLengthTable(options, progress)
      : null;

  const model = options.azureModel && (options.only === undefined || options.only === 'model');
  let hostSettings = null;
  let deployment = null;
  let bicep = null;
  if (model) {
    progress("host.json at Azure's round trips, in virtual time ...");
    hostSettings = compareHostSettings();
    deployment = await runDeploymentSizing(options, hostSettings, orderLength, progress);
    bicep = readBicepDeployment();
  }

  const npmStart =
    (options.only === undefined || options.only === 'npm-start') && options.npmStartOrders > 0
      ? await runNpmStartRow(options.npmStartOrders, options.seed, progress)
      : null;
  const coldStart =
    (options.only === undefined || options.only === 'cold-start') && options.coldStartRounds > 0
      ? await runColdStartRow(options.coldStartRounds, progress)
      : null;

  const cpu = cpus();
  return {
    options,
    environment: {
      node: process.version,
      nodeFlags: process.execArgv.join(' '),
      cpu: cpu[0]?.model ?? 'unknown',
      cores: cpu.length,
    },
    workload: {
      orders: workload.reference.size,
      entries: workload.entries.length,
      ledgerMessages: workload.ledger.length,
      minimumSendCallsPerLedgerMessage: workload.minimumSendCalls / workload.ledger.length,
    },
    rows,
    sessions,
    orderLength,
    npmStart,
    coldStart,
    hostSettings,
    deployment,
    targets: [
      ...(options.only === undefined ? evaluateTargets(rows) : []),
      ...orderLengthTargets(orderLength ?? []),
      ...requestUnitTargets(orderLength ?? []),
      ...hostSettingsTargets(hostSettings),
      ...deploymentSizingTargets(deployment, bicep),
      ...npmStartTargets(npmStart),
      ...coldStartTargets(coldStart),
    ],
  };
}

export async function main(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parseBenchArgs>;
  try {
    parsed = parseBenchArgs(argv);
    if (parsed.help === true) {
      process.stdout.write(`${BENCH_USAGE}\n`);
      return 0;
    }
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const result = await runBench(parsed.options, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`${formatBench(result)}\n`);
  if (parsed.json !== undefined) {
    writeFileSync(parsed.json, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`\nJSON written to ${parsed.json}\n`);
  }
  return 0;
}

/**
 * The deployment's ceilings from the shipped host.json's rate per instance and the request units of
 * an entry of a 10-entry order: the order-length table's row when it ran, else that row alone.
 */
async function runDeploymentSizing(
  options: BenchOptions,
  hostSettings: HostSettingsComparison,
  orderLength: readonly OrderLengthRow[] | null,
  progress: (line: string) => void,
): Promise<DeploymentSizing> {
  let row = orderLength?.find((found) => found.entriesPerOrder === ORDER_LENGTH_SIZING_ENTRIES_PER_ORDER);
  if (row === undefined) {
    progress(
      `request units of an entry (orders of ${ORDER_LENGTH_SIZING_ENTRIES_PER_ORDER}), store meter ...`,
    );
    row = await runOrderLengthRow(
      options,
      ORDER_LENGTH_SIZING_ENTRIES_PER_ORDER,
      options.orderLengthEntries,
      options.seed,
    );
  }
  const { shipped } = hostSettings;
  return sizeSupportedConfigurations(
    {
      instanceEntriesPerSecond: shipped.entriesPerSecond,
      requestUnitsPerEntry: row.requestUnitsPerEntry,
      entriesPerLedgerMessage: options.batchSize,
      entriesPerOrder: ORDER_LENGTH_SIZING_ENTRIES_PER_ORDER,
    },
    `prefetchCount ${shipped.prefetchCount}, sessionIdleTimeout ${shipped.sessionIdleTimeoutMs} ms, maxConcurrentSessions ${shipped.maxConcurrentSessions}`,
  );
}

if (require.main === module) runMain(() => main(process.argv.slice(2)), 'the bench');
