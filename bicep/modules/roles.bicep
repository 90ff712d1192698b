// Data-plane role assignments for one principal: the Function App's managed identity, and optionally
// a developer who runs the app with `func start` against the same resources. Each role is scoped to
// the narrowest resource that covers what the code does.

param principalId string

@allowed([
  'ServicePrincipal'
  'User'
  'Group'
])
param principalType string = 'ServicePrincipal'

param serviceBusNamespaceName string
param ledgerQueueName string
param orderTransactionsQueueName string
param parkedQueueName string
param storageAccountName string
param appInsightsName string
param cosmosAccountName string
param cosmosDatabaseName string
@description('The Cosmos containers the principal reads and writes items of.')
param cosmosContainerNames array
@description('The operators\' journal, which the principal may only add to and read.')
param cosmosJournalContainerName string
param cosmosJournalRoleDefinitionId string

@description('Grant the Manage right (Azure Service Bus Data Owner) on each queue: target-based scaling and the session backlog read queue counts (see below).')
param grantQueueManageRight bool = true

// Built-in role definition ids (the same in every tenant).
var role = {
  serviceBusDataSender: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'
  serviceBusDataReceiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
  serviceBusDataOwner: '090c5cfd-751d-490a-894a-3ce6f1109419'
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  storageQueueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  storageTableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
}

// Cosmos DB Built-in Data Contributor: a Cosmos data-plane role, not an Azure RBAC role.
var cosmosDataContributorRoleId = '00000000-0000-0000-0000-000000000002'

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: serviceBusNamespaceName
}

resource ledgerQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' existing = {
  parent: namespace
  name: ledgerQueueName
}

resource orderTransactionsQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' existing = {
  parent: namespace
  name: orderTransactionsQueueName
}

resource parkedQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' existing = {
  parent: namespace
  name: parkedQueueName
}

resource storage 'Microsoft.Storage/storageAccounts@2024-01-01' existing = {
  name: storageAccountName
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

resource cosmos 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' existing = {
  name: cosmosAccountName
}

// --- Service Bus: the triggers receive from ledger and order-transactions; the code sends to
// order-transactions (ledger processor) and parked (both handlers). Nothing in the app sends to
// ledger (the producer does) or reads parked (a person does).

resource receiveLedger 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(ledgerQueue.id, principalId, role.serviceBusDataReceiver)
  scope: ledgerQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.serviceBusDataReceiver)
    principalId: principalId
    principalType: principalType
  }
}

resource receiveOrderTransactions 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(orderTransactionsQueue.id, principalId, role.serviceBusDataReceiver)
  scope: orderTransactionsQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.serviceBusDataReceiver)
    principalId: principalId
    principalType: principalType
  }
}

resource sendOrderTransactions 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(orderTransactionsQueue.id, principalId, role.serviceBusDataSender)
  scope: orderTransactionsQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.serviceBusDataSender)
    principalId: principalId
    principalType: principalType
  }
}

resource sendParked 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(parkedQueue.id, principalId, role.serviceBusDataSender)
  scope: parkedQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.serviceBusDataSender)
    principalId: principalId
    principalType: principalType
  }
}

// The operations functions (src/functions/http/operations-http.ts) list and replay parked
// messages, and replay a parked ledger entry into `ledger`: receive on `parked` (its dead-letter
// queue too), send on `ledger`. Dead-lettered messages of the trigger queues are covered by their
// receivers.
resource receiveParked 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(parkedQueue.id, principalId, role.serviceBusDataReceiver)
  scope: parkedQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.serviceBusDataReceiver)
    principalId: principalId
    principalType: principalType
  }
}

resource sendLedger 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(ledgerQueue.id, principalId, role.serviceBusDataSender)
  scope: ledgerQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.serviceBusDataSender)
    principalId: principalId
    principalType: principalType
  }
}

// The Manage right, on each queue and nowhere else. Two readers need a queue's message counts, which
// Service Bus gives only through its administration API (GetQueueRuntimeProperties, Manage right):
// - Flex Consumption's target-based scaling for the Service Bus trigger: the extension's scaler
//   (Microsoft.Azure.WebJobs.Extensions.ServiceBus, Listeners/ServiceBusMetricsProvider.cs,
//   GetMessageCountAsync) reads ActiveMessageCount of the trigger queue with the trigger's own
//   connection (this identity); without Manage it logs "does not have 'Manage Claim'" and falls
//   back to incremental scaling, one instance at a time.
// - The session backlog of the operations functions (`GET /api/ops/sessions/{queue}`), for any
//   of the three queues.
// Azure Service Bus Data Owner is the only built-in role that carries Manage; scoped to a queue it
// covers that queue only (no other entity, no namespace settings). Replay needs none of it: what it
// needs of a queue comes from the app settings the Bicep writes (src/adapters/settings.ts).
resource manageLedger 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (grantQueueManageRight) {
  name: guid(ledgerQueue.id, principalId, role.serviceBusDataOwner)
  scope: ledgerQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.serviceBusDataOwner)
    principalId: principalId
    principalType: principalType
  }
}

resource manageOrderTransactions 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (grantQueueManageRight) {
  name: guid(orderTransactionsQueue.id, principalId, role.serviceBusDataOwner)
  scope: orderTransactionsQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.serviceBusDataOwner)
    principalId: principalId
    principalType: principalType
  }
}

resource manageParked 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (grantQueueManageRight) {
  name: guid(parkedQueue.id, principalId, role.serviceBusDataOwner)
  scope: parkedQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.serviceBusDataOwner)
    principalId: principalId
    principalType: principalType
  }
}

// --- Storage: blob (host locks and keys, deployment package, Durable's large payloads and leases),
// queue (Durable's control and work-item queues), table (Durable's history and instances).
// As narrow as the runtime allows: the host's identity-based AzureWebJobsStorage needs Storage Blob
// Data Owner (Learn, "Connecting to host storage with an identity"); Durable's Azure Storage provider
// needs Queue and Table Data Contributor and creates its task hub's queues and tables at run time
// (names derived from the hub), so they cannot be scoped to entities that exist before it runs. All
// three are on this one account, which holds nothing else; no account-management role is granted.

resource storageBlob 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storage.id, principalId, role.storageBlobDataOwner)
  scope: storage
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.storageBlobDataOwner)
    principalId: principalId
    principalType: principalType
  }
}

resource storageQueue 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storage.id, principalId, role.storageQueueDataContributor)
  scope: storage
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.storageQueueDataContributor)
    principalId: principalId
    principalType: principalType
  }
}

resource storageTable 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storage.id, principalId, role.storageTableDataContributor)
  scope: storage
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.storageTableDataContributor)
    principalId: principalId
    principalType: principalType
  }
}

// --- Application Insights: Entra-authenticated ingestion (DisableLocalAuth) needs this role.

resource publishTelemetry 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(appInsights.id, principalId, role.monitoringMetricsPublisher)
  scope: appInsights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.monitoringMetricsPublisher)
    principalId: principalId
    principalType: principalType
  }
}

// --- Cosmos DB: read and write items of the app's containers only (not other containers or databases
// of the account); the operators' journal only appended to and read, so no identity of the app can
// rewrite or delete what operators did (src/services/operations/operations-journal.ts).

resource cosmosData 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = [
  for container in cosmosContainerNames: {
    parent: cosmos
    name: guid(cosmos.id, cosmosDatabaseName, container, principalId, cosmosDataContributorRoleId)
    properties: {
      roleDefinitionId: '${cosmos.id}/sqlRoleDefinitions/${cosmosDataContributorRoleId}'
      principalId: principalId
      scope: '${cosmos.id}/dbs/${cosmosDatabaseName}/colls/${container}'
    }
  }
]

resource cosmosJournal 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = {
  parent: cosmos
  name: guid(cosmos.id, cosmosDatabaseName, cosmosJournalContainerName, principalId, cosmosJournalRoleDefinitionId)
  properties: {
    roleDefinitionId: cosmosJournalRoleDefinitionId
    principalId: principalId
    scope: '${cosmos.id}/dbs/${cosmosDatabaseName}/colls/${cosmosJournalContainerName}'
  }
}
