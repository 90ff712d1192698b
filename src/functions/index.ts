/**
 * The Azure entry point (`main` in package.json): reads the settings once, builds the adapters,
 * and registers every function definition with the Functions host.
 */
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
import { durableOrchestrationClient } from '../adapters/azure/durable-client';
import { fulfillmentStarter } from '../services/fulfillment/starter';
import { createOrderCache } from '../services/convoy/order-cache';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../services/order-documents';
import { ledgerProcessor } from './ledger-processor';
import { orderTransactions } from './order-transactions';
import { ordersHttp } from './http/orders-http';
import { operationsHttp } from './http/operations-http';
import { connectServiceBus, createServiceBusOperations } from '../adapters/azure/service-bus-operations';
import { sagaDefinitions } from './fulfill-order';
import { registerFunctions } from './registration';
import { queriedFieldsOf } from '../adapters/indexing-policy';

const settings = readSettings(process.env);
const credential = new DefaultAzureCredential({ managedIdentityClientId: settings.managedIdentityClientId });
const database = createCosmosClient({ endpoint: settings.cosmosEndpoint, credential }).database(
  settings.cosmosDatabase,
);
const orders = createCosmosContainer(database.container(ORDERS_CONTAINER), ORDERS_PARTITION_KEY_PATH, {
  queriedFields: queriedFieldsOf(ORDERS_CONTAINER),
});
const sender = createServiceBusSender(settings.serviceBusNamespace, credential);
const telemetry = createApplicationInsightsTelemetry(
  settings.applicationInsightsConnectionString,
  credential,
);
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
        },
      ),
      records: createCosmosContainer(
        database.container(DOWNSTREAM_CONTAINER),
        DOWNSTREAM_PARTITION_KEY_PATH,
        {
          queriedFields: queriedFieldsOf(DOWNSTREAM_CONTAINER),
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
    ...ordersHttp((context) => ({
      orders,
      orchestrations: durableOrchestrationClient(context),
      cancellationFeePercent: fulfillment.cancellationFeePercent,
      now: Date.now,
    })),
    // Operations: the same Service Bus identity, plus Data Owner on the namespace for queue
    // settings and counts.
    ...operationsHttp(() => ({ operations, orders, now: Date.now })),
  ],
  ...saga,
});
