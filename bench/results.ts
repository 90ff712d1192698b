/** What `npm run bench` is asked (its options and defaults) and what it answers (rows, targets). */
import type { NpmStartRow } from './npm-start';
import type { SessionTableRow } from './session-table';
import type { OrderLengthRow } from './order-length';
import type { ColdStartRow } from './cold-start';
import type { HostSettingsComparison } from './azure-settings';
import type { DeploymentSizing } from './deployment-sizing';

export interface BenchOptions {
  /** Simulated store round-trip latency, ms. */
  latencyMs: number;
  orders: number;
  entriesPerOrder: number;
  /** Entries per ledger message. */
  batchSize: number;
  /** Orders open at once in the generated ledger. */
  activeOrders: number;
  seed: number;
  /** Probability of the broker's `duplicate` fault, the same for every design. */
  duplicate: number;
  /** maxConcurrentSessions of each convoy run. */
  sessions: number[];
  /** Competing calls of the naive design without sessions. */
  competingCalls: number;
  /** maxConcurrentSessions of the zero-latency convoy run; 0 skips it. */
  zeroLatencySessions: number;
  /** Runs the naive designs too (`--no-naive`: the convoy only). */
  naive: boolean;
  /** host.json `sessionIdleTimeout` of every run: how long a pump keeps an empty session. */
  sessionIdleTimeoutMs: number;
  /** Long enough that no lock expires during a run: the bench injects no crash. */
  lockDurationMs: number;
  /** Orders of unreported warm-up runs (see `warmUp`), so that no measured run pays for JIT warm-up; 0: none. */
  warmupOrders: number;
  /** Prints the session settings table (./session-table), in virtual time (`--no-sessions-table`: not). */
  sessionsTable: boolean;
  /** Runs each convoy row with latency beside its runtime-only twin (`--no-twin`: not). */
  twin: boolean;
  /** Rounds of row and twin for the rows a target judges (16 sessions, and zero latency); others run once. */
  twinRounds: number;
  /** Entries per order of each row of the order-length table (./order-length); empty skips it. */
  orderLengths: number[];
  /** About how many entries each row of the order-length table runs, in orders of its length. */
  orderLengthEntries: number;
  /** Orders (of 10 entries) of the `npm start` row (./npm-start); 0 skips it. */
  npmStartOrders: number;
  /** Fresh processes per entry of the cold-start row (./cold-start); 0 skips it. */
  coldStartRounds: number;
  /** Models host.json and the deployment's ceilings at Azure's round trips (`--no-model`: not). */
  azureModel: boolean;
  /**
   * Runs only this part of the bench; undefined: all of it. `model`: host.json's settings at Azure's
   * round trips (./azure-settings) and the deployment's ceilings (./deployment-sizing).
   */
  only?: BenchPart;
}

export const BENCH_PARTS = ['order-length', 'npm-start', 'cold-start', 'model'] as const;
export type BenchPart = (typeof BENCH_PARTS)[number];

export const BENCH_DEFAULTS: BenchOptions = {
  latencyMs: 2,
  orders: 2000,
  entriesPerOrder: 10,
  batchSize: 100,
  activeOrders: 200,
  seed: 1,
  duplicate: 0.05,
  sessions: [1, 4, 16, 64],
  competingCalls: 16,
  zeroLatencySessions: 16,
  naive: true,
  sessionIdleTimeoutMs: 0,
  lockDurationMs: 30_000,
  warmupOrders: 200,
  sessionsTable: true,
  twin: true,
  twinRounds: 5,
  orderLengths: [10, 50, 200, 1000],
  orderLengthEntries: 10_000,
  npmStartOrders: 20_000,
  coldStartRounds: 5,
  azureModel: true,
};

export type Design = 'one consumer' | 'competing consumers' | 'convoy';

export interface BenchRow {
  design: Design;
  /** Sessions for the convoy, concurrent calls for the naive designs. */
  concurrency: number;
  latencyMs: number;
  /** Distinct entries applied. */
  messages: number;
  /** Deliveries on `order-transactions`: first deliveries and duplicates. */
  deliveries: number;
  /** First ledger send to the last entry applied (order committed). */
  seconds: number;
  messagesPerSecond: number;
  latencyMs50: number;
  latencyMs99: number;
  /**
   * min(concurrency, orders with work) / ((store + broker round trips per message) x latency): what
   * the slots could do if nothing but the network took time; null at zero latency.
   */
  idealMessagesPerSecond: number | null;
  /** The consumer's pumps' Service Bus round trips (receive, settlement, accept) per distinct entry. */
  brokerRoundTripsPerMessage: number;
  efficiency: number | null;
  /**
   * The runtime-only twin of a convoy row (./twin): same broker, host, store and clock,
   * a handler that only waits one round trip; ratio = this row's msg/s over the twin's. null: no twin.
   */
  twin: {
    messagesPerSecond: number;
    ratio: number;
    /** The twin's process CPU (all threads) per entry: the runtime's cost, which the row's CPU less this leaves the app's. */
    cpuMicrosPerMessage: number;
    /** Each round's row msg/s over the twin's that ran right after it (./rounds); `ratio` is of the medians. */
    rounds: number[];
  } | null;
  storeRoundTrips: {
    /** Calls the bench counted on the consumer's container; `storeCounter` is the store's own count of them. */
    total: number;
    storeCounter: number;
    /** Mean time a store call took, as the consumer saw it: the simulated latency, timer granularity and waiting for the CPU. */
    meanMs: number;
    perMessage: number;
    firstDeliveries: number;
    perFirstDelivery: number;
    duplicates: number;
    perDuplicate: number | null;
  };
  sendCalls: {
    orderTransactions: number;
    ledgerMessages: number;
    ledgerDeliveries: number;
    perLedgerMessage: number;
    perLedgerDelivery: number;
    minimumPerLedgerMessage: number;
  };
  /** Entries applied while their predecessor was not (in the state the consumer applied them to). */
  orderingViolations: number;
  /** Applications beyond the first of one entry. */
  doubleEffects: number;
  /** Orders whose document at the end differs from the domain's reference (lost, doubled or misordered lines). */
  ordersWrong: number;
  ordersChecked: number;
  cpuMicrosPerMessage: number;
  /** CPU time / wall time of the run; over 1 when V8's helper threads (GC) use another core. */
  cpuBusy: number;
  lockExpired: number;
  hostWarnings: number;
}

export interface BenchTarget {
  target: string;
  pass: boolean;
  detail: string;
}

export interface BenchResult {
  options: BenchOptions;
  environment: {
    node: string;
    nodeFlags: string;
    cpu: string;
    cores: number;
  };
  workload: {
    orders: number;
    entries: number;
    ledgerMessages: number;
    minimumSendCallsPerLedgerMessage: number;
  };
  rows: BenchRow[];
  /** The session settings table, at the bench's round trip; null with `--no-sessions-table`. */
  sessions: SessionTableRow[] | null;
  /** The order-length table; null when not run. */
  orderLength: OrderLengthRow[] | null;
  /** The `npm start` row; null when not run. */
  npmStart: NpmStartRow | null;
  /** The cold-start row; null when not run. */
  coldStart: ColdStartRow | null;
  /** host.json's session settings at Azure's round trips: `shipped` beside `previous`; null when not run. */
  hostSettings: HostSettingsComparison | null;
  /** The rate each deployment configuration carries and its instance ceiling; null when not run. */
  deployment: DeploymentSizing | null;
  targets: BenchTarget[];
}
