// Cosmos DB (NoSQL) account, the database and the `orders` container (src/services/order-documents.ts).

param accountName string
param location string

@description('Disabled when main.bicep privateNetworking is on: reached through a private endpoint only.')
@allowed([
  'Enabled'
  'Disabled'
])
param publicNetworkAccess string = 'Enabled'
param tags object = {}
param databaseName string

@description('serverless: pay per request; provisioned: autoscale throughput on the container. Fixed once the account exists.')
@allowed([
  'serverless'
  'provisioned'
])
param capacityMode string = 'serverless'

@description('Autoscale ceiling in RU/s when capacityMode is provisioned.')
@minValue(1000)
param autoscaleMaxThroughput int = 1000

var serverless = capacityMode == 'serverless'

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: accountName
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    locations: [
      {
        locationName: location
        failoverPriority: 0
        isZoneRedundant: false
      }
    ]
    // Session consistency: a handler reads its own writes, which the etag checks rely on.
    consistencyPolicy: {
      defaultConsistencyLevel: 'Session'
    }
    capabilities: serverless ? [{ name: 'EnableServerless' }] : []
    // Entra ID only for data; keys are refused.
    disableLocalAuth: true
    // Databases and containers change only through ARM (this file), never from a data-plane client.
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: publicNetworkAccess
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' = {
  parent: account
  name: databaseName
  properties: {
    resource: {
      id: databaseName
    }
  }
}

// One partition per order: the order header, its transaction records and its saga record share a
// partition, so one transactional batch writes a transaction's record and the header atomically
// (docs/documents.md). No document expires (a transaction record is kept for ever, so a duplicate
// is told from a reused id however late it comes), so TTL stays off.
resource ordersContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: 'orders'
  properties: {
    resource: {
      id: 'orders'
      partitionKey: {
        paths: [
          '/orderId'
        ]
        kind: 'Hash'
        version: 2
      }
      // Only the paths the app queries (src/adapters/indexing-policy.ts, QUERIED_FIELDS): every
      // other path excluded, so a write is charged for a few index terms rather than one per field
      // of the order (Microsoft Learn, "Indexing policies in Azure Cosmos DB",
      // https://learn.microsoft.com/azure/cosmos-db/index-policy). With `/*` excluded the partition
      // key is not indexed unless included; id and _ts are always indexed.
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: [
          {
            path: '/orderId/?'
          }
          {
            path: '/kind/?'
          }
          {
            path: '/slot/?'
          }
          {
            path: '/status/?'
          }
        ]
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
      // One document per sequence slot of an order (src/adapters/indexing-policy.ts, UNIQUE_KEYS):
      // a transaction record written without the header, and the gap document, are arbitrated by it
      // (docs/documents.md). A unique key is set only when a container is created (Microsoft Learn,
      // "Unique key constraints in Azure Cosmos DB"): docs/documents.md says how to upgrade.
      uniqueKeyPolicy: {
        uniqueKeys: [
          {
            paths: [
              '/slot'
            ]
          }
        ]
      }
    }
    // Serverless accounts take no throughput setting.
    options: serverless ? {} : { autoscaleSettings: { maxThroughput: autoscaleMaxThroughput } }
  }
}

// The built-in downstream services (src/adapters/downstream.ts): stock per sku, shared by every
// order, hence its own partition key; and the records of charges, shipments and confirmations,
// kept apart from the orders as an external system would keep them.
resource inventoryContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: 'inventory'
  properties: {
    resource: {
      id: 'inventory'
      partitionKey: {
        paths: [
          '/sku'
        ]
        kind: 'Hash'
        version: 2
      }
      // Stock is read by sku (a point read) and never queried: the partition key only.
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: [
          {
            path: '/sku/?'
          }
        ]
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
    options: serverless ? {} : { autoscaleSettings: { maxThroughput: autoscaleMaxThroughput } }
  }
}

resource downstreamContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: 'downstream'
  properties: {
    resource: {
      id: 'downstream'
      partitionKey: {
        paths: [
          '/orderId'
        ]
        kind: 'Hash'
        version: 2
      }
      // The records are looked up by kind within an order (QUERIED_FIELDS).
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: [
          {
            path: '/orderId/?'
          }
          {
            path: '/kind/?'
          }
        ]
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
    options: serverless ? {} : { autoscaleSettings: { maxThroughput: autoscaleMaxThroughput } }
  }
}

// The operators' journal (src/services/operations/operations-journal.ts): the audit of every operator
// action and the archive of every discarded message, by `/partition`: one order's archive, one day's
// audit. Kept for ever, as the orders are: TTL off. The app may only add to it and read it
// (journalAppenderRole below).
resource operationsContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: 'operations'
  properties: {
    resource: {
      id: 'operations'
      partitionKey: {
        paths: [
          '/partition'
        ]
        kind: 'Hash'
        version: 2
      }
      // An order's archive and a day's audit are read by kind within their partition (QUERIED_FIELDS).
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: [
          {
            path: '/partition/?'
          }
          {
            path: '/kind/?'
          }
        ]
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
    options: serverless ? {} : { autoscaleSettings: { maxThroughput: autoscaleMaxThroughput } }
  }
}

// The operators' journal is appended to and read, never rewritten: a data-plane role that creates,
// reads and queries items and nothing else, assignable on the journal alone (modules/roles.bicep).
// Microsoft Learn, "Use data plane role-based access control with Azure Cosmos DB for NoSQL".
resource journalAppenderRole 'Microsoft.DocumentDB/databaseAccounts/sqlRoleDefinitions@2024-11-15' = {
  parent: account
  name: guid(account.id, databaseName, 'operations-journal-appender')
  properties: {
    roleName: 'Operations journal appender'
    type: 'CustomRole'
    assignableScopes: [
      '${account.id}/dbs/${databaseName}/colls/${operationsContainer.name}'
    ]
    permissions: [
      {
        dataActions: [
          'Microsoft.DocumentDB/databaseAccounts/readMetadata'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/create'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/read'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/executeQuery'
        ]
      }
    ]
  }
}

output id string = account.id
output name string = account.name
output endpoint string = account.properties.documentEndpoint
output databaseName string = database.name
output containerName string = ordersContainer.name
@description('The containers the app reads and writes: every one but the operators\' journal.')
output appContainerNames array = [
  ordersContainer.name
  inventoryContainer.name
  downstreamContainer.name
]
output journalContainerName string = operationsContainer.name
output journalAppenderRoleId string = journalAppenderRole.id
