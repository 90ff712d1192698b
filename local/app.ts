/**
 * The whole app on one machine: the embedded broker and Functions host run the very same function
 * definitions as Azure, against the embedded document store, with seeded faults when asked.
 */
import { createEmbeddedStore, type EmbeddedStore } from './store/document-store';
import { createRecordingTelemetry, type RecordedTelemetry } from './recording-telemetry';
import type { MeasuredTelemetry } from './telemetry-bytes';
import {
  createBuiltInDownstream,
  DOWNSTREAM_CONTAINER,
  DOWNSTREAM_PARTITION_KEY_PATH,
  INVENTORY_CONTAINER,
  INVENTORY_PARTITION_KEY_PATH,
} from '../src/adapters/downstream';
import { DEFAULTS, type RetrySettings } from '../src/adapters/settings';
import { queriedFieldsOf, uniqueKeysOf } from '../src/adapters/indexing-policy';
import { sagaDefinitions, type SagaPolicy } from '../src/functions/fulfill-order';
import { ledgerProcessor } from '../src/functions/ledger-processor';
import { orderTransactions } from '../src/functions/order-transactions';
import type { ServiceBusQueueFunction } from '../src/functions/definition';
import { createOrderCache } from '../src/services/convoy/order-cache';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../src/services/order-documents';
import { fulfillmentStarter } from '../src/services/fulfillment/starter';
import { QUEUE } from '../src/services/queues';
import type { DocumentContainer, FulfillmentStarter, MessageSender, Telemetry } from '../src/services/ports';
import type { Downstream } from '../src/services/fulfillment/downstream-ports';
import { createDurableDriver, type ClockOption, type DurableDriver } from './durable/driver';
import { createEmbeddedBroker, type EmbeddedBroker } from './broker/broker';
import type { InvocationContext } from '@azure/functions';
import { durableOrchestrationClient } from '../src/adapters/azure/durable-client';
import { createEmbeddedOperations } from './store/message-operations';
import { ordersHttp } from '../src/functions/http/orders-http';
import { operationsHttp } from '../src/functions/http/operations-http';
import { consoleHttp } from '../src/functions/http/console-http';
import { LOCAL_PLATFORM } from '../src/functions/http/actor';
import {
  createOperationsJournal,
  OPERATIONS_CONTAINER,
  OPERATIONS_PARTITION_KEY_PATH,
} from '../src/services/operations/operations-journal';
import { createFunctionsHost, type FunctionsHost, type HostLog } from './functions-host';
import {
  httpFunctionsOf,
  invokeHttp,
  routeRequest,
  type EmbeddedHttpRequest,
  type EmbeddedHttpResponse,
} from './host/http-function';
import type { InputBinder } from './worker/bindings';
import type { WorkerLog } from './worker/invoke';
import { registerAndCapture } from './worker/register';
import type { RegisteredFunction } from './worker/core';
import { withRecordConflicts } from './record-conflicts';
import { faultRandom, keyedRandom, withReorderFaults, withTransientFaults, type FaultSpec } from './faults';
import type { AccountInput } from './entry-account';
import {
  createAuthorizationDelay,
  createOutage,
  scaledClock,
  withSendAuthorization,
  withSendOutage,
  withStartOutage,
  withStoreAuthorization,
  withStoreOutage,
  type AppClock,
  type Outage,
} from './outages';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../src/services/message-size';
import { HANDLER_BACKOFF, type Backoff, type BackoffPolicy } from '../src/services/backoff';
import type { Report } from './report';
import { buildRunReport } from './run-report';
import { createAppQueues, sendLedger, type LedgerInput } from './app-queues';

export type { LedgerInput };

export interface EmbeddedAppOptions {
  seed?: number;
  faults?: FaultSpec;
  maxConcurrentSessions?: number;
  /** Simulated store round-trip latency. */
  storeLatencyMs?: number;
  /**
   * Simulated Service Bus round-trip latency: what each receive, settlement and session accept of the
   * Functions host's pumps waits (./functions-host). None by default.
   */
  brokerLatencyMs?: number;
  /**
   * The queues' message size limit (Service Bus tier, src/services/message-size.ts): what the broker
   * refuses over and what the ledger parks by, as SERVICE_BUS_MAX_MESSAGE_BYTES on Azure.
   */
  maxMessageBytes?: number;
  /** Short locally, so that a crashed delivery comes back soon. */
  lockDurationMs?: number;
  maxDeliveryCount?: number;
  /** Stock per sku and the credit limit of the built-in downstream services. */
  catalog?: Record<string, number>;
  creditLimit?: number;
  cancellationFeePercent?: number;
  /** Saga activity retries; short by default locally, so a transient fault costs milliseconds. */
  retry?: RetrySettings;
  reviewTimeoutMinutes?: number;
  /** Real time for `npm start`, virtual time for tests that drive timers themselves. */
  clock?: ClockOption;
  /**
   * How many times faster than real time the convoy's clock runs: the handlers' backoff and the
   * outages (1 for `npm start`; tests ride out minutes of outage in milliseconds).
   */
  timeScale?: number;
  /** How the Service Bus functions back off on transient failures before giving a message back. */
  handlerBackoff?: BackoffPolicy;
  /** Wraps the built-in downstream services, e.g. to make one fail in a test. */
  downstream?: (builtIn: Downstream) => Downstream;
  /** 'record-only' notes each submitted order in `submitted` and starts no saga: the bench times the convoy alone. */
  fulfillment?: 'run' | 'record-only';
  /** How long a session pump waits on an empty session before taking another (host.json `sessionIdleTimeout`). */
  sessionIdleTimeoutMs?: number;
  /** Wraps what the Service Bus functions write through and report to, e.g. so that the bench can observe them. */
  instrument?: {
    orders?: (orders: DocumentContainer) => DocumentContainer;
    telemetry?: (telemetry: Telemetry) => Telemetry;
    /**
     * Wraps the `orderTransactions` definition before it is registered (its name, trigger and inputs
     * kept): the bench's runtime-only twin gives it a handler that only waits.
     */
    orderTransactions?: (definition: ServiceBusQueueFunction) => ServiceBusQueueFunction;
  };
  log?: HostLog;
  /**
   * Purge finished orchestrations (Completed, Failed, Terminated) created more than this long ago, as
   * a timer function calling the Durable client's `purgeInstanceHistoryBy` would; kept for ever when
   * unset. The saga records in the store are the audit trail; the driver's history is not needed.
   */
  purgeFinishedAfterMs?: number;
  /** false: `telemetry` keeps the metric totals and a bounded tail, not every record (long runs). */
  keepTelemetryRecords?: boolean;
  /** Measures what the app would export to Application Insights, for the report (./telemetry-bytes.ts). */
  measureTelemetry?: MeasuredTelemetry;
  /** Orders the convoy's cache holds (src/services/convoy/order-cache.ts); its own default unless given. */
  orderCacheCapacity?: number;
  /**
   * Where the report's account reads the input from, for a caller that can read it again (`npm start`
   * rereads its input file): the ledger messages `sendLedger` was given, in the same order. Unset, the
   * app keeps every message it sends for the account, which costs their size for the whole run.
   */
  accountInputs?: () => Iterable<AccountInput>;
}

export interface EmbeddedApp {
  broker: EmbeddedBroker;
  store: EmbeddedStore;
  orders: DocumentContainer;
  host: FunctionsHost;
  telemetry: RecordedTelemetry;
  durable: DurableDriver;
  /** Order ids whose fulfillment was requested, in request order (repeats included). */
  submitted: string[];
  /**
   * The outages asked for (`storeOutage`, `sendOutage`, `durableOutage`, `authorizationDelay`), to see
   * when each was down.
   */
  outages: Outage[];
  /** The convoy's clock: the outages' windows and the handlers' backoff run on it. */
  convoyClock: AppClock;
  /** Sends ledger messages as a producer would, one send per message. */
  sendLedger(messages: readonly LedgerInput[]): Promise<void>;
  /** Resolves when every queue is drained, held-back sends included, and every saga is finished or waits for a person. */
  drain(): Promise<void>;
  /** One purge of the finished orchestrations past `purgeFinishedAfterMs` (0 when unset); how many went. */
  purgeFinished(): number;
  /** Every function as `@azure/functions` registered it: what the host and the durable driver run. */
  functions: readonly RegisteredFunction[];
  /** Calls an HTTP function as the host would route the request (`/api/<path>`); 404 when none matches. */
  http(request: EmbeddedHttpRequest): Promise<EmbeddedHttpResponse>;
  report(): Promise<Report>;
  stop(): Promise<void>;
}

export const EMBEDDED_DEFAULTS = {
  seed: 1,
  maxConcurrentSessions: 8,
  storeLatencyMs: 0,
  lockDurationMs: 200,
  maxDeliveryCount: 10,
  retry: { firstIntervalMs: 20, backoffCoefficient: 2, maxIntervalMs: 200, maxAttempts: 5 },
} as const;

export function createEmbeddedApp(options: EmbeddedAppOptions = {}): EmbeddedApp {
  const seed = options.seed ?? EMBEDDED_DEFAULTS.seed;
  const faults = options.faults ?? {};
  const queueOptions = {
    lockDurationMs: options.lockDurationMs ?? EMBEDDED_DEFAULTS.lockDurationMs,
    maxDeliveryCount: options.maxDeliveryCount ?? EMBEDDED_DEFAULTS.maxDeliveryCount,
  };

  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const broker = createEmbeddedBroker({
    draw: keyedRandom(seed, 'duplicate'),
    faults: { duplicate: faults.duplicate },
    maxBatchBytes: maxMessageBytes,
  });
  createAppQueues(broker, queueOptions);

  const store = createEmbeddedStore({
    latencyMs: options.storeLatencyMs ?? EMBEDDED_DEFAULTS.storeLatencyMs,
  });
  // TTL off, as bicep/modules/cosmos.bicep declares the container: nothing of the app's expires.
  const orders = store.container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH, {
    queriedFields: queriedFieldsOf(ORDERS_CONTAINER),
    uniqueKeys: uniqueKeysOf(ORDERS_CONTAINER),
  });
  // The consumer's store, counting the 409s on its records that no cache answered (the report's
  // `recordConflicts`).
  const consumerOrders = withRecordConflicts(orders);
  // The operators' audit and archive, as the `operations` container on Azure.
  const journal = createOperationsJournal(
    store.container(OPERATIONS_CONTAINER, OPERATIONS_PARTITION_KEY_PATH, {
      queriedFields: queriedFieldsOf(OPERATIONS_CONTAINER),
    }),
  );
  const instrumentedOrders = options.instrument?.orders?.(consumerOrders) ?? consumerOrders;
  const convoyClock = scaledClock(options.timeScale ?? 1);
  const backoff: Backoff = { policy: options.handlerBackoff ?? HANDLER_BACKOFF, sleep: convoyClock.sleep };
  const outage = (name: 'storeOutage' | 'sendOutage' | 'durableOutage'): Outage =>
    createOutage(name, faults[name] ?? 0, faultRandom(seed, name), convoyClock);
  const authorization = createAuthorizationDelay(faults.authorizationDelay ?? 0, convoyClock);
  const outages = [outage('storeOutage'), outage('sendOutage'), outage('durableOutage'), authorization];
  const [storeOutage, sendOutage, durableOutage] = outages;
  const faultyOrders = withStoreAuthorization(
    withStoreOutage(
      withTransientFaults(instrumentedOrders, faults.transient ?? 0, keyedRandom(seed, 'transient')),
      storeOutage,
    ),
    authorization,
  );
  const producer = withReorderFaults(broker, faults.reorder ?? 0, keyedRandom(seed, 'reorder'));
  const outageQueues = [QUEUE.orderTransactions, QUEUE.parked];
  const sender: MessageSender = withSendAuthorization(
    withSendOutage(producer, sendOutage, outageQueues),
    authorization,
  );
  const telemetry = createRecordingTelemetry({
    keepRecords: options.keepTelemetryRecords,
    measure: options.measureTelemetry,
  });
  const functionTelemetry = options.instrument?.telemetry?.(telemetry) ?? telemetry;
  // The consumer instance's memory: a recycled instance (the recycleAfterCommit fault) starts anew.
  let cache = createOrderCache(options.orderCacheCapacity);

  const policy: SagaPolicy = {
    retry: options.retry ?? EMBEDDED_DEFAULTS.retry,
    reviewTimeoutMinutes: options.reviewTimeoutMinutes ?? DEFAULTS.reviewTimeoutMinutes,
    cancellationFeePercent: options.cancellationFeePercent ?? DEFAULTS.cancellationFeePercent,
  };
  const saga = sagaDefinitions(
    {
      orders,
      downstream: (options.downstream ?? ((builtIn) => builtIn))(
        createBuiltInDownstream({
          inventory: store.container(INVENTORY_CONTAINER, INVENTORY_PARTITION_KEY_PATH, {
            queriedFields: queriedFieldsOf(INVENTORY_CONTAINER),
          }),
          records: store.container(DOWNSTREAM_CONTAINER, DOWNSTREAM_PARTITION_KEY_PATH, {
            queriedFields: queriedFieldsOf(DOWNSTREAM_CONTAINER),
          }),
          catalog: options.catalog ?? {},
          creditLimit: options.creditLimit ?? DEFAULTS.creditLimit,
        }),
      ),
      telemetry,
      now: Date.now,
    },
    policy,
  );
  const submitted: string[] = [];
  /** The ledger messages the input sent, for the report's account of every entry, unless the caller rereads them. */
  const sentLedger: AccountInput[] = [];
  const keepsSentLedger = options.accountInputs === undefined;
  const startsSagas = (options.fulfillment ?? 'run') === 'run';
  /** The starter as on Azure, on the durable client the invocation was bound to; noted for the run. */
  const fulfillmentFor = (context: InvocationContext): FulfillmentStarter => {
    const starter = startsSagas
      ? fulfillmentStarter(withStartOutage(durableOrchestrationClient(context), durableOutage))
      : undefined;
    return {
      async start(input) {
        submitted.push(input.orderId);
        await starter?.start(input);
      },
    };
  };

  // Registered through @azure/functions exactly as src/functions/index.ts registers them.
  const registered = registerAndCapture({
    serviceBus: [
      ledgerProcessor({ sender, telemetry: functionTelemetry, maxMessageBytes }, backoff),
      (options.instrument?.orderTransactions ?? ((definition) => definition))(
        orderTransactions(
          (context) => ({
            orders: faultyOrders,
            sender: withSendAuthorization(withSendOutage(broker, sendOutage, outageQueues), authorization),
            telemetry: functionTelemetry,
            cache,
            fulfillment: fulfillmentFor(context),
            maxMessageBytes,
          }),
          backoff,
        ),
      ),
    ],
    http: [
      ...ordersHttp(
        (context) => ({
          orders,
          orchestrations: durableOrchestrationClient(context),
          cancellationFeePercent: policy.cancellationFeePercent,
          now: Date.now,
        }),
        { platform: LOCAL_PLATFORM, journal, now: Date.now },
      ),
      ...operationsHttp(
        () => ({ operations: createEmbeddedOperations(broker), orders, journal, now: Date.now }),
        LOCAL_PLATFORM,
      ),
      ...consoleHttp(
        () => ({ operations: createEmbeddedOperations(broker), orders, now: Date.now }),
        LOCAL_PLATFORM,
      ),
    ],
    ...saga,
  });

  const durable = createDurableDriver({
    functions: registered,
    clock: options.clock ?? { mode: 'real' },
    faults: {
      activityTransient: faults.activityTransient,
      activityResultLost: faults.activityResultLost,
      seed,
    },
    log: options.log,
  });
  durable.start();

  /** The host binds the durable client as the Durable extension does: where its management API is. */
  const bindInput: InputBinder = async ({ binding }, functionName) => {
    if (binding.type === 'durableClient') return durable.durableClientInput();
    throw new Error(`function ${functionName}: no embedded binding for input type ${String(binding.type)}`);
  };

  const host = createFunctionsHost({
    broker,
    functions: registered,
    maxConcurrentSessions: options.maxConcurrentSessions ?? EMBEDDED_DEFAULTS.maxConcurrentSessions,
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs,
    draw: keyedRandom(seed, 'crashAfterCommit'),
    recycleDraw: keyedRandom(seed, 'recycleAfterCommit'),
    faults: {
      crashAfterCommit: faults.crashAfterCommit,
      recycleAfterCommit: faults.recycleAfterCommit,
      aimed: { queue: QUEUE.orderTransactions, ...faults.at },
    },
    recycleInstance: () => {
      cache = createOrderCache(options.orderCacheCapacity);
    },
    log: options.log,
    bindInput,
    brokerLatencyMs: options.brokerLatencyMs,
  });
  const purgeFinished = (): number => {
    const retention = options.purgeFinishedAfterMs;
    if (retention === undefined) return 0;
    return durable.purgeInstances({
      createdTimeFrom: 0,
      createdTimeTo: durable.now() - retention,
      runtimeStatus: ['Completed', 'Failed', 'Terminated'],
    });
  };
  // Housekeeping only: it must not keep the process alive once the run is over.
  const purgeTimer =
    options.purgeFinishedAfterMs === undefined
      ? undefined
      : setInterval(purgeFinished, Math.max(1000, options.purgeFinishedAfterMs / 2)).unref();
  const httpFunctions = httpFunctionsOf(registered);
  const httpLog: WorkerLog = (functionName, level, category, message) => {
    if (category === 'user' && level !== 'none')
      (options.log ?? (() => undefined))(functionName, level, message);
  };
  host.start();

  const drain = async (): Promise<void> => {
    do await host.whenIdle();
    while (await producer.flush());
    // On virtual time nobody else moves the clock: retry backoffs are driven here.
    await (options.clock?.mode === 'virtual' ? durable.runUntilIdle() : durable.whenIdle());
  };

  return {
    broker,
    store,
    orders,
    host,
    telemetry,
    durable,
    submitted,
    outages,
    convoyClock,
    async sendLedger(messages) {
      for (const message of messages) {
        await sendLedger(broker, [message]);
        if (keepsSentLedger) sentLedger.push({ messageId: message.messageId, body: message.body });
      }
    },
    drain,
    purgeFinished,
    functions: registered,
    async http(request) {
      const routed = routeRequest(httpFunctions, request);
      if (!routed) return { status: 404, headers: {}, body: '' };
      return invokeHttp(routed.fn, request, routed.params, bindInput, httpLog);
    },
    report: () =>
      buildRunReport({
        broker,
        orders,
        telemetry,
        inputs: options.accountInputs?.() ?? sentLedger,
        recordConflicts: consumerOrders.conflicts(),
      }),
    async stop() {
      clearInterval(purgeTimer);
      await host.stop();
      await durable.stop();
      broker.close();
    },
  };
}
