/**
 * The order-length table of `npm run bench`: what one entry costs as its order grows. Each row
 * runs the same number of entries in total (`orderLengthEntries`), cut into orders of 10, 50, 200
 * or 1,000 entries (the ledger's sequence is bounded to 1..1000), through the embedded app at zero
 * latency, and reports per entry: CPU, the store meter's deterministic counts (calls, item
 * operations by kind, bytes written and read) and the request units Cosmos DB would charge for
 * them (./request-units, from Microsoft's published figures). Targets: each within 1.5x from the
 * shortest orders to the longest.
 */
import { queriedFieldsOf } from '../src/adapters/indexing-policy';
import { textTable } from '../tools/cli/text-table';
import { ORDERS_CONTAINER } from '../src/services/order-documents';
import type { BenchOptions, BenchTarget } from './results';
import { runConvoy } from './runs';
import { meteredContainer, OPERATION_KINDS, type MeterTotals, type OperationKind } from './store-meter';
import { fixed } from './targets';
import { generateBenchWorkload } from './workload';

/** Sessions of every run of the table: enough that no order waits for a session. */
export const ORDER_LENGTH_SESSIONS = 16;

/** The order length whose request units per entry size the deployment (./deployment-sizing): the sample's. */
export const ORDER_LENGTH_SIZING_ENTRIES_PER_ORDER = 10;

/** The most a metric per entry may grow from the shortest orders to the longest. */
export const ORDER_LENGTH_MAX_RATIO = 1.5;

export interface OrderLengthRow {
  entriesPerOrder: number;
  orders: number;
  entries: number;
  /** Process CPU (all threads) per entry, less the time the store meter spent on itself. */
  cpuMicrosPerEntry: number;
  /** Calls on the orders container per entry (a batch is one). */
  requestsPerEntry: number;
  operationsPerEntry: Record<OperationKind, number>;
  bytesWrittenPerEntry: number;
  bytesReadPerEntry: number;
  /** The deterministic count of work: bytes the consumer hands the store and gets back, per entry. */
  storeBytesPerEntry: number;
  requestUnitsPerEntry: number;
  /** The background TTL deletions of what the entries left to expire, per entry: 0 since the transaction records replaced the inbox markers, which expired. */
  ttlRequestUnitsPerEntry: number;
  ordersWrong: number;
  doubleEffects: number;
  orderingViolations: number;
}

export function orderLengthRowOf(
  entriesPerOrder: number,
  orders: number,
  entries: number,
  cpuMicros: number,
  totals: MeterTotals,
  checks: { ordersWrong: number; doubleEffects: number; orderingViolations: number },
): OrderLengthRow {
  const per = (value: number): number => (entries > 0 ? value / entries : 0);
  return {
    entriesPerOrder,
    orders,
    entries,
    cpuMicrosPerEntry: per(Math.max(0, cpuMicros - totals.overheadMs * 1000)),
    requestsPerEntry: per(totals.requests),
    operationsPerEntry: Object.fromEntries(
      OPERATION_KINDS.map((kind) => [kind, per(totals.operations[kind])]),
    ) as Record<OperationKind, number>,
    bytesWrittenPerEntry: per(totals.bytesWritten),
    bytesReadPerEntry: per(totals.bytesRead),
    storeBytesPerEntry: per(totals.bytesWritten + totals.bytesRead),
    requestUnitsPerEntry: per(totals.requestUnits),
    ttlRequestUnitsPerEntry: per(totals.ttlRequestUnits),
    ...checks,
  };
}

/**
 * One row: about `totalEntries` entries in orders of `entriesPerOrder`, through the embedded app at
 * zero latency with the store meter on the orders container.
 */
export async function runOrderLengthRow(
  options: BenchOptions,
  entriesPerOrder: number,
  totalEntries: number,
  seed: number,
): Promise<OrderLengthRow> {
  const queried = queriedFieldsOf(ORDERS_CONTAINER);
  const orders = Math.max(1, Math.round(totalEntries / entriesPerOrder));
  const workload = generateBenchWorkload({
    orders,
    entriesPerOrder,
    batchSize: options.batchSize,
    activeOrders: options.activeOrders,
    seed,
  });
  let meter: ReturnType<typeof meteredContainer>['meter'] | undefined;
  globalThis.gc?.();
  const output = await runConvoy(
    workload,
    options,
    { design: 'convoy', concurrency: ORDER_LENGTH_SESSIONS, latencyMs: 0 },
    (inner) => {
      const metered = meteredContainer(inner, queried);
      meter = metered.meter;
      return metered.container;
    },
  );
  if (meter === undefined) throw new Error('bench: the order-length run never built its container');
  return orderLengthRowOf(
    entriesPerOrder,
    orders,
    workload.entries.length,
    output.cpuMicros,
    meter.totals(),
    {
      ordersWrong: output.ordersWrong,
      doubleEffects: output.recorded.doubleEffects,
      orderingViolations: output.recorded.orderingViolations,
    },
  );
}

export async function runOrderLengthTable(
  options: BenchOptions,
  progress: (line: string) => void,
): Promise<OrderLengthRow[]> {
  const run = (entriesPerOrder: number, totalEntries: number, seed: number): Promise<OrderLengthRow> =>
    runOrderLengthRow(options, entriesPerOrder, totalEntries, seed);

  if (options.warmupOrders > 0) {
    progress('order-length table warm-up, not reported ...');
    for (const length of options.orderLengths) {
      await run(length, Math.min(options.orderLengthEntries, Math.max(length, 1000)), options.seed + 1);
    }
  }
  const rows: OrderLengthRow[] = [];
  for (const length of options.orderLengths) {
    progress(`order-length table: orders of ${length} entries ...`);
    const row = await run(length, options.orderLengthEntries, options.seed);
    progress(
      `  ${fixed(row.cpuMicrosPerEntry, 1)} µs, ${Math.round(row.bytesWrittenPerEntry)} B written, ${fixed(row.requestUnitsPerEntry, 1)} RU per entry`,
    );
    rows.push(row);
  }
  return rows;
}

const METRICS: ReadonlyArray<[string, (row: OrderLengthRow) => number, number]> = [
  ['CPU per entry (µs)', (row) => row.cpuMicrosPerEntry, 1],
  ['store bytes per entry, written + read (the stable count)', (row) => row.storeBytesPerEntry, 0],
  ['bytes written per entry', (row) => row.bytesWrittenPerEntry, 0],
  ['store calls per entry', (row) => row.requestsPerEntry, 3],
  ['estimated RU per entry', (row) => row.requestUnitsPerEntry, 2],
];

/** PASS or FAIL for each metric: the largest row over the smallest at most ORDER_LENGTH_MAX_RATIO. */
export function orderLengthTargets(rows: readonly OrderLengthRow[]): BenchTarget[] {
  if (rows.length === 0) return [];
  const lengths = rows.map((row) => row.entriesPerOrder);
  const span = `${Math.min(...lengths)} to ${Math.max(...lengths)} entries per order`;
  const targets: BenchTarget[] = METRICS.map(([name, value, digits]) => {
    const values = rows.map(value);
    const low = Math.min(...values);
    const high = Math.max(...values);
    const ratio = low > 0 ? high / low : high > 0 ? Infinity : 1;
    return {
      target: `order length: ${name} within ${ORDER_LENGTH_MAX_RATIO}x from ${span}`,
      pass: ratio <= ORDER_LENGTH_MAX_RATIO,
      detail: `${rows.map((row) => `${row.entriesPerOrder}: ${fixed(value(row), digits)}`).join(', ')} (${fixed(ratio)}x)`,
    };
  });
  targets.push({
    target: 'order length: 0 ordering violations, 0 double effects, every order equal to the reference',
    pass: rows.every(
      (row) => row.orderingViolations === 0 && row.doubleEffects === 0 && row.ordersWrong === 0,
    ),
    detail: rows
      .map(
        (row) => `${row.entriesPerOrder}: ${row.orderingViolations}/${row.doubleEffects}/${row.ordersWrong}`,
      )
      .join(', '),
  });
  return targets;
}

const SHORT: Record<OperationKind, string> = {
  create: 'c',
  replace: 'r',
  upsert: 'u',
  delete: 'd',
  read: 'rd',
  query: 'q',
};

export function formatOrderLengthTable(
  options: Pick<BenchOptions, 'orderLengthEntries' | 'duplicate' | 'seed'>,
  rows: readonly OrderLengthRow[],
): string {
  const header = [
    'entries/order',
    'orders',
    'CPU µs/entry',
    'store B/entry',
    'written B/entry',
    'read B/entry',
    'calls/entry',
    `ops/entry (${OPERATION_KINDS.map((kind) => SHORT[kind]).join(' ')})`,
    'RU/entry',
    'TTL RU/entry',
    'wrong orders',
  ];
  const body = rows.map((row) => [
    String(row.entriesPerOrder),
    String(row.orders),
    fixed(row.cpuMicrosPerEntry, 1),
    String(Math.round(row.storeBytesPerEntry)),
    String(Math.round(row.bytesWrittenPerEntry)),
    String(Math.round(row.bytesReadPerEntry)),
    fixed(row.requestsPerEntry, 3),
    OPERATION_KINDS.map((kind) => fixed(row.operationsPerEntry[kind], 2)).join(' '),
    fixed(row.requestUnitsPerEntry, 2),
    fixed(row.ttlRequestUnitsPerEntry, 2),
    `${row.ordersWrong}/${row.orders}`,
  ]);
  return [
    `order-length table: about ${options.orderLengthEntries} entries per row, in orders of each length; convoy at ` +
      `${ORDER_LENGTH_SESSIONS} sessions, zero latency, duplicate=${options.duplicate}, seed ${options.seed}`,
    textTable([header, ...body], Number.POSITIVE_INFINITY, (column) => (column === 7 ? 'left' : 'right')),
    "CPU µs/entry: process CPU per entry, less the meter's own time. store B/entry: UTF-8 bytes of the JSON of the",
    'items written (created, replaced, upserted) and read back (reads, batch reads, queries) per entry, the stable,',
    'deterministic count of work; written/read B: its two halves. calls/entry: calls on the orders container (a batch',
    'is one). ops/entry: item operations by kind, batch items included: create, replace, upsert, delete, read, query.',
    "RU/entry: request units Cosmos DB would charge, estimated from those sizes and the Bicep's indexing policy",
    '(bench/request-units.ts, Microsoft Learn figures); TTL RU/entry: the background deletion of what expires.',
  ].join('\n');
}
