/**
 * The Azure entry point (`main` in package.json): reads the settings once, builds the adapters,
 * and registers every function definition with the Functions host.
 */
import { app } from '@azure/functions';
import * as df from 'durable-functions';
import { DefaultAzureCredential } from '@azure/identity';
import { readSettings } from '../adapters/settings';
import { createCosmosClient, createCosmosContainer } from '../adapters/azure/cosmos-store';
import {
  createBuiltInDownstream,
  DOWNSTREAM_CONTAINER,
  DOWNSTREAM_PARTITION_KEY_PATH,
  INVENTORY_CONTAINER,
  INVENTORY_PARTITION_KEY_PATH,
} from '../adapters/downstream';
import { createServiceBusSender } from '../adapters/azure/service-bus-sender';
import { createApplicationInsightsTelemetry } from '../adapters/telemetry';
import { durableClientInput, durableOrchestrationClient } from '../adapters/azure/durable-client';
import { fulfillmentStarter } from '../services/fulfillment/starter';
import { createOrderCache } from '../services/convoy/order-cache';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../services/order-documents';
import { ledgerProcessor } from './ledger-processor';
import { orderTransactions } from './order-transactions';
import { ordersHttp } from './http/orders-http';
import { operationsHttp } from './http/operations-http';
import { connectServiceBus, createServiceBusOperations } from '../adapters/azure/service-bus-operations';
import { sagaDefinitions } from './fulfill-order';

const settings = readSettings(process.env);
const credential = new DefaultAzureCredential({ managedIdentityClientId: settings.managedIdentityClientId });
const database = createCosmosClient({ endpoint: settings.cosmosEndpoint, credential }).database(
  settings.cosmosDatabase,
);
const orders = createCosmosContainer(database.container(ORDERS_CONTAINER), ORDERS_PARTITION_KEY_PATH);
const sender = createServiceBusSender(settings.serviceBusNamespace, credential);
const telemetry = createApplicationInsightsTelemetry(
  settings.applicationInsightsConnectionString,
  credential,
);
const cache = createOrderCache();

for (const definition of [
  ledgerProcessor({ sender, telemetry }),
  orderTransactions((context) => ({
    orders,
    sender,
    telemetry,
    cache,
    fulfillment: fulfillmentStarter(durableOrchestrationClient(context)),
    inboxMarkerTtlSeconds: settings.inboxMarkerTtlSeconds,
  })),
]) {
  app.serviceBusQueue(definition.name, {
    queueName: definition.queueName,
    connection: definition.connection,
    isSessionsEnabled: definition.isSessionsEnabled,
    extraInputs: definition.name === 'orderTransactions' ? [durableClientInput] : undefined,
    handler: definition.handler,
  });
}

const saga = sagaDefinitions(
  {
    orders,
    downstream: createBuiltInDownstream({
      inventory: createCosmosContainer(database.container(INVENTORY_CONTAINER), INVENTORY_PARTITION_KEY_PATH),
      records: createCosmosContainer(database.container(DOWNSTREAM_CONTAINER), DOWNSTREAM_PARTITION_KEY_PATH),
      catalog: settings.fulfillment.catalog,
      creditLimit: settings.fulfillment.creditLimit,
    }),
    telemetry,
    now: Date.now,
  },
  settings.fulfillment,
);
for (const orchestration of saga.orchestrations)
  df.app.orchestration(orchestration.name, orchestration.handler);
for (const activity of saga.activities) df.app.activity(activity.name, { handler: activity.handler });

for (const definition of ordersHttp((context) => ({
  orders,
  orchestrations: durableOrchestrationClient(context),
  cancellationFeePercent: settings.fulfillment.cancellationFeePercent,
  now: Date.now,
}))) {
  app.http(definition.name, {
    route: definition.route,
    methods: definition.methods,
    authLevel: definition.authLevel,
    extraInputs: [durableClientInput],
    handler: definition.handler,
  });
}

// Operations: the same Service Bus identity, plus Data Owner on the namespace for queue settings and
// counts. Registered exactly as the order functions are, durable client input included, so that every
// HTTP function has one shape.
const operations = createServiceBusOperations(connectServiceBus(settings.serviceBusNamespace, credential));
for (const definition of operationsHttp(() => ({ operations, orders, now: Date.now }))) {
  app.http(definition.name, {
    route: definition.route,
    methods: definition.methods,
    authLevel: definition.authLevel,
    extraInputs: [durableClientInput],
    handler: definition.handler,
  });
}
