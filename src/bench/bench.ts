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
import { performance } from 'node:perf_hooks';
import { canonicalJson } from '../domain/digest';
import type { OrderState } from '../domain/order';
import type { OrderDocument } from '../services/order-documents';
import { QUEUE } from '../services/queues';
import type { Document, DocumentContainer, Telemetry, TelemetryProperties } from '../services/ports';
import { partitionKeyField } from '../adapters/document-rules';
import type { RoundTripWait } from '../adapters/embedded/document-store';
import { createNaivePipeline, type NaiveApplication, type NaiveOrder } from './naive';
import { generateBenchWorkload, transactionAt, type BenchWorkload } from './workload';
import type { QueueStats } from '../embedded/broker/broker';
import { createEmbeddedApp, type LedgerInput } from '../embedded/app';
import type { FunctionsHostStats, HostLog } from '../embedded/functions-host';
import { integerFlag, UsageError } from '../cli/start-args';
import { createNetworkClock } from '../embedded/network-clock';
import { runMain } from '../cli/run-main';

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
  /**
   * What a simulated round trip waits on: `network`, a worker thread that wakes when the wait is
   * due, as a response arrives (see network-clock.ts); `timer`, `setTimeout`, which ends a wait
   * up to a millisecond late and ends all waits begun in one millisecond together.
   */
  latencyClock: LatencyClock;
}

export type LatencyClock = 'network' | 'timer';

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
  latencyClock: 'network',
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
  /** min(concurrency, orders with work) / (store round trips per message x latency); null at zero latency. */
  idealMessagesPerSecond: number | null;
  efficiency: number | null;
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
    /** How early the network clock's worker wakes (calibrated at start); null with the timer clock. */
    clockLeadMs: number | null;
  };
  workload: {
    orders: number;
    entries: number;
    ledgerMessages: number;
    minimumSendCallsPerLedgerMessage: number;
  };
  rows: BenchRow[];
  targets: BenchTarget[];
}

// ---------------------------------------------------------------------------------------------
// Recording one run
// ---------------------------------------------------------------------------------------------

type Outcome = 'first' | 'duplicate';

interface Recorder {
  sent(message: LedgerInput, at: number): void;
  /** One application of one entry. */
  applied(orderId: string, sequence: number, predecessorApplied: boolean | undefined, at: number): void;
  roundTrip(partitionKey: string): void;
  roundTripTook(ms: number): void;
  /** A delivery ended; its round trips are `explicit`, or else those counted on its order since the last one ended. */
  outcome(orderId: string, outcome: Outcome, trips?: number): void;
  log: HostLog;
  lastAppliedAt(): number;
  result(): Recorded;
}

interface Recorded {
  latencies: number[];
  messages: number;
  orderingViolations: number;
  doubleEffects: number;
  trips: Record<Outcome, number>;
  outcomes: Record<Outcome, number>;
  totalTrips: number;
  tripMs: number;
  warnings: number;
}

function createRecorder(workload: BenchWorkload): Recorder {
  const sentAt = new Map<string, number>();
  const appliedAt = new Map<string, number>();
  const applications = new Map<string, number>();
  const appliedSequences = new Map<string, Set<number>>();
  const pending = new Map<string, number>();
  const trips: Record<Outcome, number> = { first: 0, duplicate: 0 };
  const outcomes: Record<Outcome, number> = { first: 0, duplicate: 0 };
  let totalTrips = 0;
  let tripMs = 0;
  let lastAppliedAt = 0;
  let orderingViolations = 0;
  let doubleEffects = 0;
  let warnings = 0;

  return {
    sent(message, at) {
      sentAt.set(message.messageId, at);
    },
    applied(orderId, sequence, predecessorApplied, at) {
      const transactionId = transactionAt(workload, orderId, sequence);
      if (transactionId === undefined) throw new Error(`bench: no entry ${orderId} #${sequence}`);
      let sequences = appliedSequences.get(orderId);
      if (sequences === undefined) {
        sequences = new Set();
        appliedSequences.set(orderId, sequences);
      }
      const count = (applications.get(transactionId) ?? 0) + 1;
      applications.set(transactionId, count);
      if (count > 1) doubleEffects += 1;
      const inOrder = predecessorApplied ?? (sequence === 1 || sequences.has(sequence - 1));
      if (!inOrder) orderingViolations += 1;
      sequences.add(sequence);
      if (!appliedAt.has(transactionId)) appliedAt.set(transactionId, at);
      lastAppliedAt = Math.max(lastAppliedAt, at);
    },
    roundTrip(partitionKey) {
      totalTrips += 1;
      pending.set(partitionKey, (pending.get(partitionKey) ?? 0) + 1);
    },
    roundTripTook(ms) {
      tripMs += ms;
    },
    outcome(orderId, outcome, explicit) {
      outcomes[outcome] += 1;
      if (explicit !== undefined) {
        trips[outcome] += explicit;
        return;
      }
      trips[outcome] += pending.get(orderId) ?? 0;
      pending.delete(orderId);
    },
    log(_functionName, level) {
      if (level === 'warning' || level === 'error' || level === 'critical') warnings += 1;
    },
    lastAppliedAt: () => lastAppliedAt,
    result() {
      const latencies: number[] = [];
      for (const [transactionId, at] of appliedAt) {
        const batchId = workload.batchOf.get(transactionId);
        const sent = batchId === undefined ? undefined : sentAt.get(batchId);
        if (sent !== undefined) latencies.push(at - sent);
      }
      latencies.sort((a, b) => a - b);
      return {
        latencies,
        messages: appliedAt.size,
        orderingViolations,
        doubleEffects,
        trips,
        outcomes,
        totalTrips,
        tripMs,
        warnings,
      };
    },
  };
}

/** Counts and times every call, by partition key, so that a convoy delivery's round trips can be told apart. */
function countingContainer(inner: DocumentContainer, recorder: Recorder): DocumentContainer {
  const field = partitionKeyField(inner.partitionKeyPath);
  const keyOf = (document: Document): string => String(document[field]);
  const timed = <T>(partitionKey: string, call: () => Promise<T>): Promise<T> => {
    recorder.roundTrip(partitionKey);
    const started = performance.now();
    return call().finally(() => recorder.roundTripTook(performance.now() - started));
  };
  return {
    name: inner.name,
    partitionKeyPath: inner.partitionKeyPath,
    create: (document) => timed(keyOf(document), () => inner.create(document)),
    read: <T extends Document>(partitionKey: string, id: string) =>
      timed(partitionKey, () => inner.read<T>(partitionKey, id)),
    replace: (document, options) => timed(keyOf(document), () => inner.replace(document, options)),
    upsert: (document, options) => timed(keyOf(document), () => inner.upsert(document, options)),
    delete: (partitionKey, id, options) => timed(partitionKey, () => inner.delete(partitionKey, id, options)),
    batch: (partitionKey, operations) => timed(partitionKey, () => inner.batch(partitionKey, operations)),
    query: <T extends Document>(spec: Parameters<DocumentContainer['query']>[0]) =>
      timed(spec.partitionKey ?? '', () => inner.query<T>(spec)),
  };
}

/**
 * The convoy's outcomes, from the metrics the consumer records after each commit. An
 * `entries.applied` of n at sequence s applied s..s+n-1: the bench's entries are never rejected,
 * so entries released from the buffer follow the one that filled the gap without a hole.
 */
function observingTelemetry(inner: Telemetry, recorder: Recorder): Telemetry {
  return {
    trace: (level, message, properties) => inner.trace(level, message, properties),
    event: (name, properties) => inner.event(name, properties),
    metric(name: string, value: number, properties?: TelemetryProperties) {
      inner.metric(name, value, properties);
      const orderId = properties?.orderId;
      if (typeof orderId !== 'string') return;
      if (name === 'entries.applied') {
        const at = performance.now();
        const sequence = Number(properties?.sequence);
        for (let i = 0; i < value; i++) recorder.applied(orderId, sequence + i, undefined, at);
        recorder.outcome(orderId, 'first');
      } else if (name === 'entries.buffered') {
        recorder.outcome(orderId, 'first');
      } else if (name === 'entries.duplicate') {
        recorder.outcome(orderId, 'duplicate');
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Checking the end state
// ---------------------------------------------------------------------------------------------

function sameAs(actual: object, expected: object, fields: readonly string[]): boolean {
  const pick = (value: object): Record<string, unknown> =>
    Object.fromEntries(fields.map((name) => [name, (value as Record<string, unknown>)[name]]));
  return canonicalJson(pick(actual)) === canonicalJson(pick(expected));
}

const BUSINESS_FIELDS = ['status', 'customerId', 'currency', 'lines', 'total'] as const;
const CONVOY_FIELDS = [...BUSINESS_FIELDS, 'appliedSequence', 'finalSequence', 'transactions', 'buffered'];

function ordersWrong(
  reference: ReadonlyMap<string, string>,
  documents: ReadonlyArray<{ orderId: string } & object>,
  fields: readonly string[],
): number {
  const byId = new Map(documents.map((document) => [document.orderId, document]));
  let wrong = 0;
  for (const [orderId, expected] of reference) {
    const actual = byId.get(orderId);
    if (actual === undefined || !sameAs(actual, JSON.parse(expected) as OrderState, fields)) wrong += 1;
  }
  return wrong;
}

// ---------------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------------

interface RunSetup {
  design: Design;
  concurrency: number;
  latencyMs: number;
}

/** How a run's simulated round trips wait; undefined: a timer. */
type StoreWait = RoundTripWait | undefined;

interface Measured {
  /** First ledger send to the last entry applied. */
  seconds: number;
  /** First ledger send to drained. */
  wallSeconds: number;
  /** Process CPU time (all threads) over the wall time. */
  cpuMicros: number;
}

interface RunOutput extends Measured {
  recorded: Recorded;
  /** The embedded store's own round-trip counter for the consumer's container, before the end-state check. */
  storeCounter: number;
  ordersWrong: number;
  ordersChecked: number;
  host: FunctionsHostStats;
  broker: Record<string, QueueStats>;
}

async function drive(
  workload: BenchWorkload,
  recorder: Recorder,
  send: (messages: readonly LedgerInput[]) => Promise<void>,
  drain: () => Promise<void>,
): Promise<Measured> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const message of workload.ledger) {
    recorder.sent(message, performance.now());
    await send([message]);
  }
  await drain();
  const used = process.cpuUsage(cpu);
  const drained = performance.now();
  return {
    seconds: (Math.max(recorder.lastAppliedAt(), started) - started) / 1000,
    wallSeconds: (drained - started) / 1000,
    cpuMicros: used.user + used.system,
  };
}

async function runConvoy(
  workload: BenchWorkload,
  options: BenchOptions,
  setup: RunSetup,
  storeWait: StoreWait,
): Promise<RunOutput> {
  const recorder = createRecorder(workload);
  const app = createEmbeddedApp({
    seed: options.seed,
    faults: { duplicate: options.duplicate },
    maxConcurrentSessions: setup.concurrency,
    storeLatencyMs: setup.latencyMs,
    storeWait,
    lockDurationMs: options.lockDurationMs,
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs,
    fulfillment: 'record-only',
    instrument: {
      orders: (orders) => countingContainer(orders, recorder),
      telemetry: (telemetry) => observingTelemetry(telemetry, recorder),
    },
    log: recorder.log,
    // The bench reads the totals only; 20,000 kept traces would be garbage the collector copies.
    keepTelemetryRecords: false,
  });
  try {
    const measured = await drive(workload, recorder, app.sendLedger, app.drain);
    const recorded = recorder.result();
    const storeCounter = app.store.roundTrips.byContainer[app.orders.name] ?? 0;
    const documents = await app.orders.query<OrderDocument>({ where: { kind: 'order' } });
    return {
      ...measured,
      recorded,
      storeCounter,
      ordersWrong: ordersWrong(
        workload.reference,
        documents.map((stored) => stored.document),
        CONVOY_FIELDS,
      ),
      ordersChecked: workload.reference.size,
      host: app.host.stats(),
      broker: app.broker.stats(),
    };
  } finally {
    await app.stop();
  }
}

async function runNaive(
  workload: BenchWorkload,
  options: BenchOptions,
  setup: RunSetup,
  storeWait: StoreWait,
): Promise<RunOutput> {
  const recorder = createRecorder(workload);
  const seen = new Set<string>();
  const onApplied = (application: NaiveApplication): void => {
    const at = performance.now();
    const { orderId, sequence, transactionId } = application;
    recorder.applied(orderId, sequence, application.predecessorApplied, at);
    recorder.outcome(orderId, seen.has(transactionId) ? 'duplicate' : 'first', application.roundTrips);
    seen.add(transactionId);
  };
  const pipeline = createNaivePipeline({
    seed: options.seed,
    duplicate: options.duplicate,
    maxConcurrentCalls: setup.concurrency,
    storeLatencyMs: setup.latencyMs,
    storeWait,
    lockDurationMs: options.lockDurationMs,
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs,
    wrapOrders: (orders) => countingContainer(orders, recorder),
    onApplied,
    log: recorder.log,
  });
  try {
    const measured = await drive(workload, recorder, pipeline.sendLedger, pipeline.drain);
    const recorded = recorder.result();
    const storeCounter = pipeline.store.roundTrips.byContainer[pipeline.orders.name] ?? 0;
    const documents = await pipeline.orders.query<NaiveOrder>({});
    return {
      ...measured,
      recorded,
      storeCounter,
      ordersWrong: ordersWrong(
        workload.reference,
        documents.map((stored) => stored.document),
        BUSINESS_FIELDS,
      ),
      ordersChecked: workload.reference.size,
      host: pipeline.host.stats(),
      broker: pipeline.broker.stats(),
    };
  } finally {
    await pipeline.stop();
  }
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

function rowOf(workload: BenchWorkload, setup: RunSetup, output: RunOutput): BenchRow {
  const { recorded, seconds } = output;
  const messages = recorded.messages;
  const perMessage = messages > 0 ? recorded.totalTrips / messages : 0;
  const ordersWithWork = workload.reference.size;
  const parallel =
    setup.design === 'convoy' ? Math.min(setup.concurrency, ordersWithWork) : setup.concurrency;
  const ideal =
    setup.latencyMs > 0 && perMessage > 0 ? parallel / ((perMessage * setup.latencyMs) / 1000) : null;
  const throughput = seconds > 0 ? messages / seconds : 0;
  const orderTransactions = output.broker[QUEUE.orderTransactions];
  const ledgerDeliveries = output.host.byFunction['ledgerProcessor']?.invocations ?? 0;
  const ledgerMessages = workload.ledger.length;
  return {
    design: setup.design,
    concurrency: setup.concurrency,
    latencyMs: setup.latencyMs,
    messages,
    deliveries: recorded.outcomes.first + recorded.outcomes.duplicate,
    seconds,
    messagesPerSecond: throughput,
    latencyMs50: percentile(recorded.latencies, 50),
    latencyMs99: percentile(recorded.latencies, 99),
    idealMessagesPerSecond: ideal,
    efficiency: ideal === null ? null : throughput / ideal,
    storeRoundTrips: {
      total: recorded.totalTrips,
      storeCounter: output.storeCounter,
      meanMs: recorded.totalTrips > 0 ? recorded.tripMs / recorded.totalTrips : 0,
      perMessage,
      firstDeliveries: recorded.outcomes.first,
      perFirstDelivery: recorded.outcomes.first > 0 ? recorded.trips.first / recorded.outcomes.first : 0,
      duplicates: recorded.outcomes.duplicate,
      perDuplicate:
        recorded.outcomes.duplicate > 0 ? recorded.trips.duplicate / recorded.outcomes.duplicate : null,
    },
    sendCalls: {
      orderTransactions: orderTransactions.sendCalls,
      ledgerMessages,
      ledgerDeliveries,
      perLedgerMessage: orderTransactions.sendCalls / ledgerMessages,
      perLedgerDelivery: ledgerDeliveries > 0 ? orderTransactions.sendCalls / ledgerDeliveries : 0,
      minimumPerLedgerMessage: workload.minimumSendCalls / ledgerMessages,
    },
    orderingViolations: recorded.orderingViolations,
    doubleEffects: recorded.doubleEffects,
    ordersWrong: output.ordersWrong,
    ordersChecked: output.ordersChecked,
    cpuMicrosPerMessage: messages > 0 ? output.cpuMicros / messages : 0,
    cpuBusy: output.wallSeconds > 0 ? output.cpuMicros / 1e6 / output.wallSeconds : 0,
    lockExpired: Object.values(output.broker).reduce((sum, stats) => sum + stats.lockExpired, 0),
    hostWarnings: recorded.warnings,
  };
}

// ---------------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------------

const fixed = (value: number, digits = 2): string => value.toFixed(digits);

function evaluateTargets(rows: readonly BenchRow[]): BenchTarget[] {
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
  if (options.naive) {
    setups.push({ design: 'one consumer', concurrency: 1, latencyMs: options.latencyMs });
    setups.push({
      design: 'competing consumers',
      concurrency: options.competingCalls,
      latencyMs: options.latencyMs,
    });
  }
  for (const sessions of options.sessions) {
    setups.push({ design: 'convoy', concurrency: sessions, latencyMs: options.latencyMs });
  }
  if (options.zeroLatencySessions > 0) {
    setups.push({ design: 'convoy', concurrency: options.zeroLatencySessions, latencyMs: 0 });
  }

  const clock =
    options.latencyClock === 'network' && setups.some((setup) => setup.latencyMs > 0)
      ? await createNetworkClock()
      : undefined;
  const storeWait: StoreWait = clock && ((ms) => clock.wait(ms));
  try {
    if (options.warmupOrders > 0) await warmUp(options, storeWait, progress);
    return await measure(options, workload, setups, storeWait, clock?.leadMs ?? null, progress);
  } finally {
    await clock?.close();
  }
}

/**
 * Unreported runs of each design first, so that no measured run pays for JIT warm-up: at zero
 * latency, and the convoy at the bench's latency too (its waits take other code paths), with the
 * most sessions asked for, which is quickest.
 */
async function warmUp(
  options: BenchOptions,
  storeWait: StoreWait,
  progress: (line: string) => void,
): Promise<void> {
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
    await runNaive(
      warmup,
      options,
      { design: 'competing consumers', concurrency: options.competingCalls, latencyMs: 0 },
      undefined,
    );
  }
  await runConvoy(warmup, options, { design: 'convoy', concurrency: sessions, latencyMs: 0 }, undefined);
  if (options.latencyMs > 0) {
    await runConvoy(
      warmup,
      options,
      { design: 'convoy', concurrency: sessions, latencyMs: options.latencyMs },
      storeWait,
    );
  }
}

async function measure(
  options: BenchOptions,
  workload: BenchWorkload,
  setups: readonly RunSetup[],
  storeWait: StoreWait,
  clockLeadMs: number | null,
  progress: (line: string) => void,
): Promise<BenchResult> {
  const rows: BenchRow[] = [];
  for (const setup of setups) {
    // Each run starts on a clean heap when node runs with --expose-gc (npm run bench does).
    globalThis.gc?.();
    progress(`${setup.design} x${setup.concurrency} at ${setup.latencyMs} ms ...`);
    const output =
      setup.design === 'convoy'
        ? await runConvoy(workload, options, setup, storeWait)
        : await runNaive(workload, options, setup, storeWait);
    const row = rowOf(workload, setup, output);
    progress(`  ${Math.round(row.messagesPerSecond)} msg/s in ${fixed(row.seconds)} s`);
    rows.push(row);
  }

  const cpu = cpus();
  return {
    options,
    environment: {
      node: process.version,
      nodeFlags: process.execArgv.join(' '),
      cpu: cpu[0]?.model ?? 'unknown',
      cores: cpu.length,
      clockLeadMs,
    },
    workload: {
      orders: workload.reference.size,
      entries: workload.entries.length,
      ledgerMessages: workload.ledger.length,
      minimumSendCallsPerLedgerMessage: workload.minimumSendCalls / workload.ledger.length,
    },
    rows,
    targets: evaluateTargets(rows),
  };
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function clockDescription(result: BenchResult): string {
  const lead = result.environment.clockLeadMs;
  if (lead !== null)
    return `network clock: a worker thread wakes ${fixed(lead, 3)} ms early to deliver on time`;
  return result.options.latencyClock === 'timer' ? 'timer clock: setTimeout' : 'no run waited';
}

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
    'RT/first',
    'RT/dup',
    'RT ms',
    'sends/ledger (min)',
    'order viol',
    'double',
    'wrong orders',
    'CPU µs/msg',
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
    fixed(row.storeRoundTrips.perFirstDelivery),
    row.storeRoundTrips.perDuplicate === null ? '-' : fixed(row.storeRoundTrips.perDuplicate),
    fixed(row.storeRoundTrips.meanMs),
    `${fixed(row.sendCalls.perLedgerDelivery)} (${fixed(row.sendCalls.minimumPerLedgerMessage)})`,
    String(row.orderingViolations),
    String(row.doubleEffects),
    `${row.ordersWrong}/${row.ordersChecked}`,
    fixed(row.cpuMicrosPerMessage, 1),
    String(Math.round(row.cpuBusy * 100)),
  ]);
  const warnings = result.rows.filter((row) => row.hostWarnings > 0 || row.lockExpired > 0);
  return [
    `workload: ${workload.orders} orders x ${options.entriesPerOrder} entries = ${workload.entries} entries in ` +
      `${workload.ledgerMessages} ledger messages of ${options.batchSize} (${options.activeOrders} orders open at once, seed ${options.seed}), all sent at the start`,
    `fault on every design: duplicate=${options.duplicate} (seeded, seed ${options.seed}); store round trip ` +
      `${options.latencyMs} ms simulated (${clockDescription(result)}); sessionIdleTimeout ${options.sessionIdleTimeoutMs} ms; sagas not started (record-only)`,
    `node ${result.environment.node} ${result.environment.nodeFlags}, ${result.environment.cores} cores (${result.environment.cpu})`,
    '',
    table([header, ...rows]),
    '',
    'conc: sessions (convoy) or concurrent calls (naive). msg/s: distinct entries from the first ledger send to the last',
    'order committed. p50/p99: ledger send to applied, per entry, backlog wait included. eff: msg/s / ideal, ideal =',
    'min(conc, orders) / (store round trips per message x latency). RT/first, RT/dup: store round trips per first delivery',
    'and per duplicate delivery. RT ms: mean store call as the consumer saw it. sends/ledger: order-transactions send calls',
    'per ledger delivery (min: what the 256 KB batch limit allows). order viol: entries applied before their predecessor.',
    'double: extra applications of an entry. wrong orders: order documents differing from the domain reference at the end.',
    'CPU µs/msg: process CPU time (all threads) per entry. CPU %: CPU time / wall time (over 100: GC threads on a 2nd core).',
    ...(warnings.length > 0
      ? [
          '',
          ...warnings.map(
            (row) =>
              `warning: ${row.design} x${row.concurrency}: ${row.hostWarnings} host warnings, ${row.lockExpired} locks expired`,
          ),
        ]
      : []),
    '',
    ...result.targets.map((target) => `${target.pass ? 'PASS' : 'FAIL'}  ${target.target}: ${target.detail}`),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

export const BENCH_USAGE = `usage: npm run bench -- [--latency-ms N] [--orders N] [--entries N] [--batch-size N] [--json FILE]
       [--sessions 1,4,16,64] [--calls N] [--duplicate P] [--seed N] [--active-orders N]
       [--zero-latency-sessions N] [--session-idle-ms N] [--warmup-orders N] [--no-naive]
       [--latency-clock network|timer]`;

export { UsageError as BenchUsageError } from '../cli/start-args';

export function parseBenchArgs(argv: readonly string[]): { options: Partial<BenchOptions>; json?: string } {
  const options: Partial<BenchOptions> = {};
  let json: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--help' || flag === '-h') throw new UsageError(BENCH_USAGE);
    if (flag === '--no-naive') {
      options.naive = false;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--'))
      throw new UsageError(`${flag} needs a value\n${BENCH_USAGE}`);
    i += 1;
    switch (flag) {
      case '--latency-ms': {
        const latency = Number(value);
        if (!(latency >= 0 && Number.isFinite(latency))) {
          throw new UsageError(`--latency-ms must be a number >= 0, got ${JSON.stringify(value)}`);
        }
        options.latencyMs = latency;
        break;
      }
      case '--orders':
        options.orders = integerFlag(flag, value, 1);
        break;
      case '--entries':
        options.entriesPerOrder = integerFlag(flag, value, 2);
        break;
      case '--batch-size':
        options.batchSize = integerFlag(flag, value, 1);
        break;
      case '--active-orders':
        options.activeOrders = integerFlag(flag, value, 1);
        break;
      case '--sessions':
        options.sessions = value.split(',').map((part) => integerFlag(flag, part.trim(), 1));
        break;
      case '--calls':
        options.competingCalls = integerFlag(flag, value, 1);
        break;
      case '--zero-latency-sessions':
        options.zeroLatencySessions = integerFlag(flag, value, 0);
        break;
      case '--session-idle-ms':
        options.sessionIdleTimeoutMs = integerFlag(flag, value, 0);
        break;
      case '--warmup-orders':
        options.warmupOrders = integerFlag(flag, value, 0);
        break;
      case '--seed':
        options.seed = integerFlag(flag, value, 0);
        break;
      case '--duplicate': {
        const probability = Number(value);
        if (!(probability >= 0 && probability <= 1)) {
          throw new UsageError(
            `--duplicate must be a probability between 0 and 1, got ${JSON.stringify(value)}`,
          );
        }
        options.duplicate = probability;
        break;
      }
      case '--latency-clock':
        if (value !== 'network' && value !== 'timer') {
          throw new UsageError(`--latency-clock must be network or timer, got ${JSON.stringify(value)}`);
        }
        options.latencyClock = value;
        break;
      case '--json':
        json = value;
        break;
      default:
        throw new UsageError(`unknown flag ${flag}\n${BENCH_USAGE}`);
    }
  }
  return { options, json };
}

export async function main(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parseBenchArgs>;
  try {
    parsed = parseBenchArgs(argv);
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

if (require.main === module) runMain(() => main(process.argv.slice(2)), 'the bench');
