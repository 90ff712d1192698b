/**
 * The Azure entry point (`main` in package.json): reads the settings once, builds the adapters,
 * and registers every function definition with the Functions host.
 */
import { app } from '@azure/functions';
import { DefaultAzureCredential } from '@azure/identity';
import { readSettings } from '../adapters/settings';
import { createCosmosClient, createCosmosContainer } from '../adapters/cosmos-store';
import { createServiceBusSender } from '../adapters/service-bus-sender';
import { createApplicationInsightsTelemetry } from '../adapters/telemetry';
import { durableClientInput, durableOrchestrationClient } from '../adapters/durable-client';
import { fulfilmentStarter } from '../services/fulfilment-starter';
import { createOrderCache } from '../services/order-cache';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../services/order-documents';
import { ledgerProcessor } from './ledger-processor';
import { orderTransactions } from './order-transactions';
import type { ServiceBusQueueFunction } from './definition';

const settings = readSettings(process.env);
const credential = new DefaultAzureCredential({ managedIdentityClientId: settings.managedIdentityClientId });
const cosmos = createCosmosClient({ endpoint: settings.cosmosEndpoint, credential });
const orders = createCosmosContainer(
  cosmos.database(settings.cosmosDatabase).container(ORDERS_CONTAINER),
  ORDERS_PARTITION_KEY_PATH,
);
const sender = createServiceBusSender(settings.serviceBusNamespace, credential);
const telemetry = createApplicationInsightsTelemetry(settings.applicationInsightsConnectionString);
const cache = createOrderCache();

const orderTransactionsFunction: ServiceBusQueueFunction = {
  ...orderTransactions((context) => ({
    orders,
    sender,
    telemetry,
    cache,
    fulfilment: fulfilmentStarter(durableOrchestrationClient(context)),
    inboxMarkerTtlSeconds: settings.inboxMarkerTtlSeconds,
  })),
  extraInputs: [durableClientInput],
};

export const serviceBusFunctions: ServiceBusQueueFunction[] = [
  ledgerProcessor({ sender, telemetry }),
  orderTransactionsFunction,
];

for (const definition of serviceBusFunctions) {
  app.serviceBusQueue(definition.name, {
    queueName: definition.queueName,
    connection: definition.connection,
    isSessionsEnabled: definition.isSessionsEnabled,
    extraInputs: definition.extraInputs,
    handler: definition.handler,
  });
}
