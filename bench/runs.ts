/**
 * The runs: one design on one workload, on the embedded runtime, driven from the first ledger send
 * to the last order committed; the end state checked against the domain reference; a row of it.
 */
import { performance } from 'node:perf_hooks';
import { canonicalJson } from '../src/domain/digest';
import { linesOf, type OrderState } from '../src/domain/order';
import { readOrderStates } from '../src/services/order-documents';
import { transactionRecordsByOrder } from '../local/order-records';
import { QUEUE } from '../src/services/queues';
import { LEDGER_PROCESSOR } from '../src/functions/ledger-processor';
import type { DocumentContainer } from '../src/services/ports';
import { createNaivePipeline, type NaiveApplication, type NaiveOrder } from './naive';
import type { BenchWorkload } from './workload';
import type { QueueStats } from '../local/broker/broker';
import { createEmbeddedApp, type EmbeddedAppOptions, type LedgerInput } from '../local/app';
import type { FunctionsHostStats } from '../local/functions-host';
import type { BenchOptions, Design, BenchRow } from './results';
import {
  type Recorder,
  type Recorded,
  createRecorder,
  countingContainer,
  observingTelemetry,
} from './recorder';

// ---------------------------------------------------------------------------------------------
// Checking the end state
// ---------------------------------------------------------------------------------------------

function sameAs(actual: object, expected: object, fields: readonly string[]): boolean {
  const pick = (value: object): Record<string, unknown> =>
    Object.fromEntries(fields.map((name) => [name, (value as Record<string, unknown>)[name]]));
  return canonicalJson(pick(actual)) === canonicalJson(pick(expected));
}

const BUSINESS_FIELDS = ['status', 'customerId', 'currency', 'lines', 'total'] as const;
const CONVOY_FIELDS = [...BUSINESS_FIELDS, 'appliedSequence', 'finalSequence', 'lineCount', 'buffered'];

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

export interface RunSetup {
  design: Design;
  concurrency: number;
  latencyMs: number;
}

interface Measured {
  /** First ledger send to the last entry applied. */
  seconds: number;
  /** First ledger send to drained. */
  wallSeconds: number;
  /** Process CPU time (all threads) over the wall time. */
  cpuMicros: number;
}

export interface RunOutput extends Measured {
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

/** The embedded app of a convoy row; its runtime-only twin (./twin) is built from the same options. */
export function convoyAppOptions(options: BenchOptions, setup: RunSetup): EmbeddedAppOptions {
  return {
    seed: options.seed,
    faults: { duplicate: options.duplicate },
    maxConcurrentSessions: setup.concurrency,
    storeLatencyMs: setup.latencyMs,
    // One network for every call: Service Bus round trips cost what the store's do.
    brokerLatencyMs: setup.latencyMs,
    lockDurationMs: options.lockDurationMs,
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs,
    fulfillment: 'record-only',
    // The bench reads the totals only; 20,000 kept traces would be garbage the collector copies.
    keepTelemetryRecords: false,
  };
}

export async function runConvoy(
  workload: BenchWorkload,
  options: BenchOptions,
  setup: RunSetup,
  /** Wraps the consumer's container inside the bench's own counting, e.g. in the store meter. */
  wrapOrders: (orders: DocumentContainer) => DocumentContainer = (orders) => orders,
): Promise<RunOutput> {
  const recorder = createRecorder(workload);
  const app = createEmbeddedApp({
    ...convoyAppOptions(options, setup),
    instrument: {
      orders: (orders) => countingContainer(wrapOrders(orders), recorder),
      telemetry: (telemetry) => observingTelemetry(telemetry, recorder),
    },
    log: recorder.log,
  });
  try {
    const measured = await drive(workload, recorder, app.sendLedger, app.drain);
    const recorded = recorder.result();
    const storeCounter = app.store.roundTrips.byContainer[app.orders.name] ?? 0;
    const documents = await readOrderStates(app.orders);
    const records = await transactionRecordsByOrder(app.orders);
    return {
      ...measured,
      recorded,
      storeCounter,
      ordersWrong: ordersWrong(
        workload.reference,
        documents.map((document) => ({
          ...document,
          lines: linesOf(records.get(document.orderId)?.values() ?? []),
        })),
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

export async function runNaive(
  workload: BenchWorkload,
  options: BenchOptions,
  setup: RunSetup,
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
    // One network for every call: Service Bus round trips cost what the store's do.
    brokerLatencyMs: setup.latencyMs,
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

export function rowOf(workload: BenchWorkload, setup: RunSetup, output: RunOutput): BenchRow {
  const { recorded, seconds } = output;
  const messages = recorded.messages;
  const perMessage = messages > 0 ? recorded.totalTrips / messages : 0;
  // The consumer's pumps only: the ledger's one pump waits its own calls beside them.
  const brokerTrips = Object.entries(output.host.byFunction)
    .filter(([name]) => name !== LEDGER_PROCESSOR)
    .reduce((sum, [, stats]) => sum + stats.brokerRoundTrips, 0);
  const brokerPerMessage = messages > 0 ? brokerTrips / messages : 0;
  const ordersWithWork = workload.reference.size;
  const parallel =
    setup.design === 'convoy' ? Math.min(setup.concurrency, ordersWithWork) : setup.concurrency;
  const tripsPerMessage = perMessage + brokerPerMessage;
  const ideal =
    setup.latencyMs > 0 && tripsPerMessage > 0
      ? parallel / ((tripsPerMessage * setup.latencyMs) / 1000)
      : null;
  const throughput = seconds > 0 ? messages / seconds : 0;
  const orderTransactions = output.broker[QUEUE.orderTransactions];
  const ledgerDeliveries = output.host.byFunction[LEDGER_PROCESSOR]?.invocations ?? 0;
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
    brokerRoundTripsPerMessage: brokerPerMessage,
    efficiency: ideal === null ? null : throughput / ideal,
    twin: null,
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
