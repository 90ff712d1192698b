// The Service Bus namespace and the three queues of CONTRACTS 1. Each queue is written out in full
// (no loop) so that a reader, and tests/contract/bicep-consistency.test.ts, sees its flags at a glance.

param name string
param location string

@description('Disabled when main.bicep privateNetworking is on: reached through a private endpoint only.')
@allowed([
  'Enabled'
  'Disabled'
])
param publicNetworkAccess string = 'Enabled'
param tags object = {}

// Both tiers support sessions and duplicate detection; Premium gives isolated capacity.
@allowed([
  'Standard'
  'Premium'
])
param sku string = 'Standard'

@description('Messaging units, Premium only.')
@allowed([
  1
  2
  4
  8
  16
])
param premiumCapacity int = 1

@description('How long the broker remembers a messageId to drop a repeat (ISO 8601 duration, 20 seconds to 7 days).')
param duplicateDetectionHistoryTimeWindow string = 'PT1H'

@description('Deliveries before a message that keeps failing is dead-lettered.')
@minValue(1)
@maxValue(2000)
param maxDeliveryCount int = 10

// Lock held per delivery; the host renews it (host.json maxAutoLockRenewalDuration) while a handler runs.
var lockDuration = 'PT1M'

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: sku
    tier: sku
    capacity: sku == 'Premium' ? premiumCapacity : null
  }
  properties: {
    // Entra ID only: no SAS keys can be used, so none need guarding or rotating.
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
    publicNetworkAccess: publicNetworkAccess
    // A Premium namespace with more than one partition partitions every entity, which the batched
    // multi-session sends to order-transactions cannot use. Standard ignores the setting.
    premiumMessagingPartitions: sku == 'Premium' ? 1 : null
  }
}

// The serial part of the convoy: one session per ledger stream (sessionId `main` by default).
resource ledgerQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: 'ledger'
  properties: {
    requiresSession: true
    // messageId = batchId: a producer's resend of a batch is dropped by the broker.
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: duplicateDetectionHistoryTimeWindow
    maxDeliveryCount: maxDeliveryCount
    lockDuration: lockDuration
    deadLetteringOnMessageExpiration: true
    // A partitioned entity refuses a batch whose messages carry different session ids.
    enablePartitioning: false
  }
}

// FIFO per order (sessionId = orderId), parallel across orders.
resource orderTransactionsQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: 'order-transactions'
  properties: {
    requiresSession: true
    // messageId = `<transactionId>:<digest prefix>`: a re-forwarded entry is dropped, a reused
    // transactionId with other content is not (it reaches the handler and is parked).
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: duplicateDetectionHistoryTimeWindow
    maxDeliveryCount: maxDeliveryCount
    lockDuration: lockDuration
    deadLetteringOnMessageExpiration: true
    // The ledger processor packs entries of many orders (sessions) into one batch.
    enablePartitioning: false
  }
}

// Messages that can never succeed, kept with a reason for a person; no consumer in the app.
resource parkedQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: 'parked'
  properties: {
    requiresSession: false
    // A handler that parks and then crashes before completing parks again on redelivery.
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: duplicateDetectionHistoryTimeWindow
    maxDeliveryCount: maxDeliveryCount
    lockDuration: lockDuration
    deadLetteringOnMessageExpiration: true
    enablePartitioning: false
  }
}

output id string = namespace.id
output name string = namespace.name
// serviceBusEndpoint is `https://<name>.servicebus.windows.net:443/`; the host name is what the
// SDK and the Functions extension take as fullyQualifiedNamespace (and works in every cloud).
output fullyQualifiedNamespace string = split(split(namespace.properties.serviceBusEndpoint, '//')[1], ':')[0]
output ledgerQueueName string = ledgerQueue.name
output orderTransactionsQueueName string = orderTransactionsQueue.name
output parkedQueueName string = parkedQueue.name
