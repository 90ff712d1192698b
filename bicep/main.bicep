// Everything the order pipeline needs on Azure, identity-based end to end: no connection string or
// key is created, read or handed to the app. Deploy with `azd up` (azure.yaml), or with
//   az deployment group create -g <rg> -f bicep/main.bicep -p bicep/main.bicepparam
// (docs/deploy.md). main.bicepparam maps the azd environment onto these parameters.

targetScope = 'resourceGroup'

@description('Lowercase letters and digits; starts every resource name.')
@minLength(3)
@maxLength(11)
param baseName string = 'orderconvoy'

@description('Region of every resource; it must offer the Flex Consumption plan. Empty: the resource group\'s.')
param location string = ''

param tags object = {}

// --- Service Bus

@description('Standard: the cheap default (sessions, duplicate detection; 256 KB messages; no private endpoints). Premium: isolated capacity, private endpoints, larger messages.')
@allowed([
  'Standard'
  'Premium'
])
param serviceBusSku string = 'Standard'

@allowed([
  1
  2
  4
  8
  16
])
param serviceBusPremiumCapacity int = 1

@description('Duplicate detection window of the three queues (ISO 8601 duration).')
param duplicateDetectionHistoryTimeWindow string = 'PT1H'

@minValue(1)
@maxValue(2000)
param maxDeliveryCount int = 10

@description('Grant the Manage right (Azure Service Bus Data Owner) on each queue, and only there: target-based scaling and the session backlog read queue counts (modules/roles.bicep). Off: incremental scaling, backlog refused.')
param grantQueueManageRight bool = true

// --- Networking

@description('Public network access off for Service Bus, Cosmos DB and Storage, reached through private endpoints in a new virtual network, with the Function App integrated into it (modules/network.bicep). Needs Service Bus Premium, which it then deploys whatever serviceBusSku says.')
param privateNetworking bool = false

@description('Address space of the virtual network when privateNetworking is on.')
param vnetAddressPrefix string = '10.20.0.0/16'

// --- Cosmos DB

@allowed([
  'serverless'
  'provisioned'
])
param cosmosCapacityMode string = 'serverless'

@minValue(1000)
param cosmosAutoscaleMaxThroughput int = 1000

param cosmosDatabaseName string = 'orderpipeline'

// --- Function App (Flex Consumption)

@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 2048

// Sized to the ceilings (docs/performance.md, "A deployment sized to its ceilings"): one instance of
// the order-transactions consumer already asks more of the serverless container (5,000 RU/s) and of
// a Standard namespace (1,000 credits/s) than they carry, so the default is the plan's lowest
// maximum. The cap applies to each per-function scale group's on-demand instances.
@description('On-demand instances per function scale group (Flex Consumption: 1 to 1,000). Raise it only with the store and namespace throughput that docs/performance.md lists for the count.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 1

// Always-ready instances come on top of maximumInstanceCount and are billed whether or not they work
// (docs/performance.md gives the baseline cost).
@description('Always-ready instances of each of the convoy\'s two functions (ledgerProcessor, orderTransactions); 0: scale from zero.')
@minValue(0)
@maxValue(1000)
param convoyAlwaysReadyInstances int = 0

// --- The app's settings (src/adapters/settings.ts; defaults equal to its DEFAULTS)

@description('Durable task hub: 3 to 45 letters and digits, starting with a letter.')
@minLength(3)
@maxLength(45)
param durableTaskHubName string = 'orderfulfillment'

@description('Stock per sku of the built-in inventory, e.g. {"SKU-1": 100}.')
param inventoryCatalog object = {}

@minValue(0)
param paymentCreditLimit int = 100000

@minValue(0)
@maxValue(100)
param cancellationFeePercent int = 10

@minValue(1)
param retryFirstIntervalMs int = 1000

// A string because Bicep has no decimal type; the code accepts any number >= 1.
param retryBackoffCoefficient string = '2'

@minValue(1)
param retryMaxIntervalMs int = 30000

@minValue(1)
@maxValue(100)
param retryMaxAttempts int = 5

@minValue(1)
param reviewTimeoutMinutes int = 1440

// --- Operations

@description('E-mail address that receives the alerts. Required: with azd, `azd env set ALERT_EMAIL you@example.com`.')
param alertEmail string

// The parameter file passes an unset ALERT_EMAIL through as empty (with @minLength instead,
// `bicep build-params` itself would fail wherever ALERT_EMAIL is unset, the compiler test included),
// so a deployment without an address stops here, naming it: fail() is evaluated at deployment (https://learn.microsoft.com/azure/azure-resource-manager/bicep/bicep-functions-flow-control).
// azd's preprovision hook (scripts/check-alert-email.js) says so before provisioning starts.
var checkedAlertEmail = empty(trim(alertEmail))
  ? fail('alertEmail is required: the address that receives the alerts (azd env set ALERT_EMAIL you@example.com)')
  : alertEmail

@description('Client id of the Microsoft Entra app registration operators sign in to (docs/deploy.md, "Operator sign-in"); empty: no identity provider, the function and admin keys only.')
param operatorsAppClientId string = ''

@description('Object id of a developer who runs `func start` against these resources; empty for none. azd passes the deploying principal.')
param developerPrincipalId string = ''

@description('What developerPrincipalId is: a person (User) or, deploying from CI, a service principal.')
@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
param developerPrincipalType string = 'User'

// azd passes AZURE_LOCATION, `az deployment group create` usually nothing: one parameter serves both.
var region = empty(location) ? resourceGroup().location : location
var suffix = uniqueString(resourceGroup().id, baseName)
var prefix = toLower(baseName)
var names = {
  identity: 'id-${prefix}-${suffix}'
  logAnalytics: 'log-${prefix}-${suffix}'
  appInsights: 'appi-${prefix}-${suffix}'
  serviceBus: 'sb-${prefix}-${suffix}'
  cosmos: 'cosmos-${prefix}-${suffix}'
  // Storage account names: 3 to 24 lowercase letters and digits.
  storage: 'st${take(replace(prefix, '-', ''), 9)}${suffix}'
  plan: 'plan-${prefix}-${suffix}'
  functionApp: 'func-${prefix}-${suffix}'
}
var deploymentContainerName = 'app-package'
// Service Bus private endpoints exist on Premium only.
var effectiveServiceBusSku = privateNetworking ? 'Premium' : serviceBusSku
// The largest message a queue takes on each tier: Standard 256 KB; Premium 1 MB, the default of a
// queue's maxMessageSizeInKilobytes, which modules/servicebus.bicep leaves as is
// (learn.microsoft.com/azure/service-bus-messaging/service-bus-quotas, "Maximum message size").
// The app reads it (SERVICE_BUS_MAX_MESSAGE_BYTES) to park an entry that would not fit.
var maxMessageBytesBySku = {
  Standard: 262144
  Premium: 1048576
}
var publicNetworkAccess = privateNetworking ? 'Disabled' : 'Enabled'

module identity 'modules/identity.bicep' = {
  name: 'identity'
  params: {
    name: names.identity
    location: region
    tags: tags
  }
}


module serviceBus 'modules/servicebus.bicep' = {
  name: 'serviceBus'
  params: {
    name: names.serviceBus
    location: region
    tags: tags
    sku: effectiveServiceBusSku
    publicNetworkAccess: publicNetworkAccess
    premiumCapacity: serviceBusPremiumCapacity
    duplicateDetectionHistoryTimeWindow: duplicateDetectionHistoryTimeWindow
    maxDeliveryCount: maxDeliveryCount
  }
}

module cosmos 'modules/cosmos.bicep' = {
  name: 'cosmos'
  params: {
    accountName: names.cosmos
    location: region
    tags: tags
    databaseName: cosmosDatabaseName
    capacityMode: cosmosCapacityMode
    autoscaleMaxThroughput: cosmosAutoscaleMaxThroughput
    publicNetworkAccess: publicNetworkAccess
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  params: {
    logAnalyticsName: names.logAnalytics
    appInsightsName: names.appInsights
    location: region
    tags: tags
    serviceBusNamespaceId: serviceBus.outputs.id
    cosmosAccountId: cosmos.outputs.id
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  params: {
    name: names.storage
    location: region
    tags: tags
    deploymentContainerName: deploymentContainerName
    publicNetworkAccess: publicNetworkAccess
  }
}

module network 'modules/network.bicep' = if (privateNetworking) {
  name: 'network'
  params: {
    namePrefix: '${prefix}-${suffix}'
    location: region
    tags: tags
    addressPrefix: vnetAddressPrefix
    serviceBusNamespaceId: serviceBus.outputs.id
    cosmosAccountId: cosmos.outputs.id
    storageAccountId: storage.outputs.id
  }
}

module appRoles 'modules/roles.bicep' = {
  name: 'appRoles'
  params: {
    principalId: identity.outputs.principalId
    principalType: 'ServicePrincipal'
    serviceBusNamespaceName: serviceBus.outputs.name
    ledgerQueueName: serviceBus.outputs.ledgerQueueName
    orderTransactionsQueueName: serviceBus.outputs.orderTransactionsQueueName
    parkedQueueName: serviceBus.outputs.parkedQueueName
    storageAccountName: storage.outputs.name
    appInsightsName: monitoring.outputs.appInsightsName
    cosmosAccountName: cosmos.outputs.name
    cosmosDatabaseName: cosmos.outputs.databaseName
    cosmosContainerNames: cosmos.outputs.appContainerNames
    cosmosJournalContainerName: cosmos.outputs.journalContainerName
    cosmosJournalRoleDefinitionId: cosmos.outputs.journalAppenderRoleId
    grantQueueManageRight: grantQueueManageRight
  }
}

// The same data roles for a developer's own login (the Azure CLI or azd login under `func start`, and the ops CLI's DefaultAzureCredential).
module developerRoles 'modules/roles.bicep' = if (!empty(developerPrincipalId)) {
  name: 'developerRoles'
  params: {
    principalId: developerPrincipalId
    principalType: developerPrincipalType
    serviceBusNamespaceName: serviceBus.outputs.name
    ledgerQueueName: serviceBus.outputs.ledgerQueueName
    orderTransactionsQueueName: serviceBus.outputs.orderTransactionsQueueName
    parkedQueueName: serviceBus.outputs.parkedQueueName
    storageAccountName: storage.outputs.name
    appInsightsName: monitoring.outputs.appInsightsName
    cosmosAccountName: cosmos.outputs.name
    cosmosDatabaseName: cosmos.outputs.databaseName
    cosmosContainerNames: cosmos.outputs.appContainerNames
    cosmosJournalContainerName: cosmos.outputs.journalContainerName
    cosmosJournalRoleDefinitionId: cosmos.outputs.journalAppenderRoleId
  }
}

module functionApp 'modules/functionapp.bicep' = {
  name: 'functionApp'
  // The app starts polling its triggers as soon as it exists: grant its roles first.
  dependsOn: [
    appRoles
  ]
  params: {
    planName: names.plan
    appName: names.functionApp
    location: region
    tags: tags
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageAccountName: storage.outputs.name
    storageBlobEndpoint: storage.outputs.blobEndpoint
    deploymentContainerName: storage.outputs.deploymentContainerName
    appInsightsName: monitoring.outputs.appInsightsName
    serviceBusFullyQualifiedNamespace: serviceBus.outputs.fullyQualifiedNamespace
    cosmosEndpoint: cosmos.outputs.endpoint
    cosmosDatabaseName: cosmos.outputs.databaseName
    instanceMemoryMB: instanceMemoryMB
    maximumInstanceCount: maximumInstanceCount
    convoyAlwaysReadyInstances: convoyAlwaysReadyInstances
    durableTaskHubName: durableTaskHubName
    inventoryCatalog: inventoryCatalog
    paymentCreditLimit: paymentCreditLimit
    cancellationFeePercent: cancellationFeePercent
    retryFirstIntervalMs: retryFirstIntervalMs
    retryBackoffCoefficient: retryBackoffCoefficient
    retryMaxIntervalMs: retryMaxIntervalMs
    retryMaxAttempts: retryMaxAttempts
    reviewTimeoutMinutes: reviewTimeoutMinutes
    duplicateDetectionHistoryTimeWindow: duplicateDetectionHistoryTimeWindow
    serviceBusMaxMessageBytes: maxMessageBytesBySku[effectiveServiceBusSku]
    virtualNetworkSubnetId: privateNetworking ? network!.outputs.appSubnetId : ''
    operatorsAppClientId: operatorsAppClientId
  }
}

module alerts 'modules/alerts.bicep' = {
  name: 'alerts'
  params: {
    namePrefix: prefix
    location: region
    tags: tags
    alertEmail: checkedAlertEmail
    serviceBusNamespaceId: serviceBus.outputs.id
    appInsightsId: monitoring.outputs.appInsightsId
    cosmosAccountId: cosmos.outputs.id
    ledgerQueueName: serviceBus.outputs.ledgerQueueName
    orderTransactionsQueueName: serviceBus.outputs.orderTransactionsQueueName
  }
}

output functionAppName string = functionApp.outputs.name
output functionAppHostName string = functionApp.outputs.defaultHostName
output serviceBusNamespace string = serviceBus.outputs.name
output serviceBusFullyQualifiedNamespace string = serviceBus.outputs.fullyQualifiedNamespace
output cosmosAccountName string = cosmos.outputs.name
output cosmosEndpoint string = cosmos.outputs.endpoint
output cosmosDatabaseName string = cosmos.outputs.databaseName
output storageAccountName string = storage.outputs.name
output identityClientId string = identity.outputs.clientId
output identityPrincipalId string = identity.outputs.principalId
output appInsightsName string = monitoring.outputs.appInsightsName
output logAnalyticsWorkspaceName string = monitoring.outputs.workspaceName
