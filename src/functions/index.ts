/**
 * The Azure entry point (`main` in package.json): reads the settings once, builds the adapters,
 * and registers every function definition with the Functions host.
 */
import { app, type LogLevel } from '@azure/functions';
import { readSettings } from '../adapters/settings';
import { appCredential } from '../adapters/azure/credential';
import { createCosmosClient, createCosmosContainer } from '../adapters/azure/cosmos-store';
import { COSMOS_JOURNAL_APPENDER_ROLE } from '../adapters/azure/cosmos-failures';
import {
  createBuiltInDownstream,
  DOWNSTREAM_CONTAINER,
  DOWNSTREAM_PARTITION_KEY_PATH,
  INVENTORY_CONTAINER,
  INVENTORY_PARTITION_KEY_PATH,
} from '../adapters/downstream';
import { createServiceBusSender } from '../adapters/azure/service-bus-sender';
import { createApplicationInsightsTelemetry, type ExportedTelemetry } from '../adapters/telemetry';
import { OrderSampler } from '../adapters/tracing';
import type { TraceLevel } from '../services/ports';
import { durableOrchestrationClient } from '../adapters/azure/durable-client';
import { fulfillmentStarter } from '../services/fulfillment/starter';
import { createOrderCache } from '../services/convoy/order-cache';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../services/order-documents';
import { ledgerProcessor } from './ledger-processor';
import { orderTransactions } from './order-transactions';
import { ordersHttp } from './http/orders-http';
import { operationsHttp } from './http/operations-http';
import { consoleHttp } from './http/console-http';
import { platformOf } from './http/actor';
import {
  createOperationsJournal,
  OPERATIONS_CONTAINER,
  OPERATIONS_PARTITION_KEY_PATH,
} from '../services/operations/operations-journal';
import { connectServiceBus, createServiceBusOperations } from '../adapters/azure/service-bus-operations';
import { sagaDefinitions } from './fulfill-order';
import { registerFunctions } from './registration';
import { queriedFieldsOf } from '../adapters/indexing-policy';

const LOG_LEVELS: Partial<Record<LogLevel, TraceLevel>> = {
  trace: 'information',
  debug: 'information',
  information: 'information',
  warning: 'warning',
  error: 'error',
  critical: 'error',
};

/**
 * As `@azure/functions-opentelemetry-instrumentation` does (Microsoft Learn "Use OpenTelemetry with
 * Azure Functions"): the worker exports its functions' own log lines (`context.log`), in the trace
 * of the span they were written in, so the host, told so, does not send them again; and what is
 * buffered is exported before the worker ends.
 */
function exportFunctionLogs(telemetry: ExportedTelemetry): void {
  app.setup({ capabilities: { WorkerOpenTelemetryEnabled: true } });
  app.hook.log(({ level, category, message }) => {
    const traceLevel = level === undefined ? undefined : LOG_LEVELS[level];
    if (category === 'user' && traceLevel !== undefined && message !== undefined)
      telemetry.trace(traceLevel, message);
  });
  app.hook.appTerminate(() => telemetry.shutdown());
}

const settings = readSettings(process.env);
const credential = appCredential(settings.managedIdentityClientId);
const telemetry = createApplicationInsightsTelemetry(settings.applicationInsightsConnectionString, {
  credential,
  // The platform sets it to the app's name (App Service environment variables): the cloud role name.
  serviceName: process.env.WEBSITE_SITE_NAME ?? 'order-convoy',
  sampler: new OrderSampler(settings.telemetrySamplingRatio),
});
if (settings.applicationInsightsConnectionString !== undefined) exportFunctionLogs(telemetry);
const database = createCosmosClient({ endpoint: settings.cosmosEndpoint, credential }).database(
  settings.cosmosDatabase,
);
const orders = createCosmosContainer(database.container(ORDERS_CONTAINER), ORDERS_PARTITION_KEY_PATH, {
  queriedFields: queriedFieldsOf(ORDERS_CONTAINER),
  telemetry,
});
const journal = createOperationsJournal(
  createCosmosContainer(database.container(OPERATIONS_CONTAINER), OPERATIONS_PARTITION_KEY_PATH, {
    queriedFields: queriedFieldsOf(OPERATIONS_CONTAINER),
    telemetry,
    role: COSMOS_JOURNAL_APPENDER_ROLE,
  }),
);
// Whether App Service authentication is on, as the platform tells the process (./http/actor.ts).
const platform = platformOf(process.env);
const sender = createServiceBusSender(settings.serviceBusNamespace, credential);
const cache = createOrderCache();

const fulfillment = settings.fulfillment;
const operations = createServiceBusOperations(connectServiceBus(settings.serviceBusNamespace, credential), {
  duplicateDetectionWindowMs: settings.duplicateDetectionWindowMs,
});
const saga = sagaDefinitions(
  {
    orders,
    downstream: createBuiltInDownstream({
      inventory: createCosmosContainer(
        database.container(INVENTORY_CONTAINER),
        INVENTORY_PARTITION_KEY_PATH,
        {
          queriedFields: queriedFieldsOf(INVENTORY_CONTAINER),
          telemetry,
        },
      ),
      records: createCosmosContainer(
        database.container(DOWNSTREAM_CONTAINER),
        DOWNSTREAM_PARTITION_KEY_PATH,
        {
          queriedFields: queriedFieldsOf(DOWNSTREAM_CONTAINER),
          telemetry,
        },
      ),
      catalog: fulfillment.catalog,
      creditLimit: fulfillment.creditLimit,
    }),
    telemetry,
    now: Date.now,
  },
  fulfillment,
);

registerFunctions({
  serviceBus: [
    ledgerProcessor({ sender, telemetry, maxMessageBytes: settings.maxMessageBytes }),
    orderTransactions((context) => ({
      orders,
      sender,
      telemetry,
      cache,
      fulfillment: fulfillmentStarter(durableOrchestrationClient(context)),
      maxMessageBytes: settings.maxMessageBytes,
    })),
  ],
  http: [
    ...ordersHttp(
      (context) => ({
        orders,
        orchestrations: durableOrchestrationClient(context),
        cancellationFeePercent: fulfillment.cancellationFeePercent,
        now: Date.now,
      }),
      { platform, journal, now: Date.now },
    ),
    // Operations: the same Service Bus identity, plus Data Owner on the namespace for queue
    // settings and counts.
    ...operationsHttp(() => ({ operations, orders, journal, now: Date.now }), platform),
    // The operators' console and its reads (docs/operations.md, "The console").
    ...consoleHttp(() => ({ operations, orders, now: Date.now }), platform),
  ],
  ...saga,
});

// Once per worker process, when it has loaded the app: its cold starts, and how long Node took from
// the process's start to the functions registered (docs/operations.md, "Cold starts").
telemetry.metric('worker.started', 1);
telemetry.metric('worker.startupMs', Math.round(process.uptime() * 1000));
