// The Flex Consumption plan and the Function App. Its app settings are exactly what the code and the
// host read (src/adapters/settings.ts SETTING, plus the runtime's identity-based connection settings);
// tests/contract/bicep-consistency.test.ts fails when the two drift apart.

param planName string
param appName string
param location string
param tags object = {}

param identityId string
param identityClientId string

param storageAccountName string
param storageBlobEndpoint string
param deploymentContainerName string

param appInsightsName string
param serviceBusFullyQualifiedNamespace string
param cosmosEndpoint string
param cosmosDatabaseName string

@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 2048

@minValue(1)
@maxValue(1000)
param maximumInstanceCount int

@description('Always-ready instances of each of the convoy\'s functions; 0 for none.')
@minValue(0)
@maxValue(1000)
param convoyAlwaysReadyInstances int = 0

// The convoy's two Service Bus functions (src/functions/ledger-processor.ts LEDGER_PROCESSOR and
// src/functions/order-transactions.ts); Flex Consumption names a single function `function:<name>`
// (https://learn.microsoft.com/azure/azure-functions/flex-consumption-how-to#set-always-ready-instance-counts).
var convoyFunctions = [
  'ledgerProcessor'
  'orderTransactions'
]

// Values of the app's own settings (defaults as in src/adapters/settings.ts DEFAULTS).
param durableTaskHubName string
param inventoryCatalog object
param paymentCreditLimit int
param cancellationFeePercent int
param retryFirstIntervalMs int
param retryBackoffCoefficient string
param retryMaxIntervalMs int
param retryMaxAttempts int
param reviewTimeoutMinutes int
@description('The queues\' duplicate-detection window, which replay reads from this setting (no Manage right needed).')
param duplicateDetectionHistoryTimeWindow string
@description('The queues\' message size limit in bytes, by the Service Bus tier (main.bicep maxMessageBytesBySku).')
param serviceBusMaxMessageBytes int
@description('The share of orders whose whole trace goes to Application Insights, 0 to 1 (src/adapters/settings.ts telemetrySamplingRatio); metrics, events, warnings and failures go whatever it is.')
param telemetrySamplingRatio string = '0.01'

@description('Subnet (delegated to Microsoft.App/environments) for VNet integration; empty for none.')
param virtualNetworkSubnetId string = ''

@description('Client id of the Microsoft Entra app registration operators sign in to, with the app roles Operations.Read and Operations.Write (docs/deploy.md, "Operator sign-in"); empty: no identity provider, the function and admin keys only.')
param operatorsAppClientId string = ''

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

resource plan 'Microsoft.Web/serverfarms@2024-11-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    name: 'FC1'
    tier: 'FlexConsumption'
  }
  properties: {
    // Linux.
    reserved: true
  }
}

resource site 'Microsoft.Web/sites@2024-11-01' = {
  name: appName
  location: location
  // azd finds the app to deploy the service `api` of azure.yaml by this tag.
  tags: union(tags, { 'azd-service-name': 'api' })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    virtualNetworkSubnetId: empty(virtualNetworkSubnetId) ? null : virtualNetworkSubnetId
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storageBlobEndpoint}${deploymentContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        instanceMemoryMB: instanceMemoryMB
        maximumInstanceCount: maximumInstanceCount
        alwaysReady: convoyAlwaysReadyInstances == 0
          ? []
          : map(convoyFunctions, name => {
              name: 'function:${name}'
              instanceCount: convoyAlwaysReadyInstances
            })
      }
      // Flex Consumption takes the runtime here; FUNCTIONS_WORKER_RUNTIME and
      // FUNCTIONS_EXTENSION_VERSION are not app settings on this plan.
      runtime: {
        name: 'node'
        version: '22'
      }
    }
    siteConfig: {
      minTlsVersion: '1.2'
      appSettings: [
        // Host storage and Durable's Azure Storage provider (host.json connectionName AzureWebJobsStorage),
        // reached with the user-assigned identity.
        {
          name: 'AzureWebJobsStorage__accountName'
          value: storageAccountName
        }
        {
          name: 'AzureWebJobsStorage__credential'
          value: 'managedidentity'
        }
        {
          name: 'AzureWebJobsStorage__clientId'
          value: identityClientId
        }
        // The triggers' connection (`connection: 'ServiceBusConnection'`); the code's sender reads the
        // namespace from the same setting.
        {
          name: 'ServiceBusConnection__fullyQualifiedNamespace'
          value: serviceBusFullyQualifiedNamespace
        }
        {
          name: 'ServiceBusConnection__credential'
          value: 'managedidentity'
        }
        {
          name: 'ServiceBusConnection__clientId'
          value: identityClientId
        }
        {
          name: 'CosmosDb__accountEndpoint'
          value: cosmosEndpoint
        }
        {
          name: 'CosmosDb__databaseName'
          value: cosmosDatabaseName
        }
        // The code's credential (src/adapters/azure/credential.ts) is this user-assigned identity.
        {
          name: 'AZURE_CLIENT_ID'
          value: identityClientId
        }
        // Identifies the resource only; with DisableLocalAuth ingestion also needs an Entra token,
        // which the host gets from the authentication string below.
        {
          name: 'APPLICATIONINSIGHTS_CONNECTION_STRING'
          value: appInsights.properties.ConnectionString
        }
        {
          name: 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING'
          value: 'ClientId=${identityClientId};Authorization=AAD'
        }
        {
          name: 'DURABLE_TASK_HUB_NAME'
          value: durableTaskHubName
        }
        {
          name: 'INVENTORY_CATALOG'
          value: string(inventoryCatalog)
        }
        {
          name: 'PAYMENT_CREDIT_LIMIT'
          value: string(paymentCreditLimit)
        }
        {
          name: 'CANCELLATION_FEE_PERCENT'
          value: string(cancellationFeePercent)
        }
        {
          name: 'RETRY_FIRST_INTERVAL_MS'
          value: string(retryFirstIntervalMs)
        }
        {
          name: 'RETRY_BACKOFF_COEFFICIENT'
          value: retryBackoffCoefficient
        }
        {
          name: 'RETRY_MAX_INTERVAL_MS'
          value: string(retryMaxIntervalMs)
        }
        {
          name: 'RETRY_MAX_ATTEMPTS'
          value: string(retryMaxAttempts)
        }
        {
          name: 'REVIEW_TIMEOUT_MINUTES'
          value: string(reviewTimeoutMinutes)
        }
        {
          name: 'SERVICE_BUS_DUPLICATE_DETECTION_WINDOW'
          value: duplicateDetectionHistoryTimeWindow
        }
        {
          name: 'SERVICE_BUS_MAX_MESSAGE_BYTES'
          value: string(serviceBusMaxMessageBytes)
        }
        {
          name: 'TELEMETRY_SAMPLING_RATIO'
          value: telemetrySamplingRatio
        }
      ]
    }
  }
}

// App Service authentication ("Easy Auth") with Microsoft Entra ID in front of the HTTP functions,
// when an app registration is named: the platform refuses a caller who has not signed in (a browser
// is sent to the sign-in page, a client must bring a token for `api://<client id>`), injects
// X-MS-CLIENT-PRINCIPAL with the caller's app roles, and says it is on by WEBSITE_AUTH_ENABLED; the
// functions then ask for no key and check the role (src/functions/http/actor.ts). Microsoft Learn,
// "Authentication and authorization in Azure App Service and Azure Functions" and the
// `Microsoft.Web/sites/config authsettingsV2` reference. The Service Bus triggers are not HTTP
// requests and never meet it. The Functions host's own endpoints (`/admin`, which takes the master
// key, and `/runtime/webhooks`, which takes system keys) keep their keys as their guard.
// Secret-free: sign-in uses ID tokens (the registration issues them), and nothing here holds a
// client secret.
resource authentication 'Microsoft.Web/sites/config@2024-11-01' = if (!empty(operatorsAppClientId)) {
  parent: site
  name: 'authsettingsV2'
  properties: {
    platform: {
      enabled: true
    }
    globalValidation: {
      requireAuthentication: true
      unauthenticatedClientAction: 'RedirectToLoginPage'
      redirectToProvider: 'azureactivedirectory'
      excludedPaths: [
        '/admin'
        '/runtime/webhooks'
      ]
    }
    httpSettings: {
      requireHttps: true
    }
    identityProviders: {
      azureActiveDirectory: {
        enabled: true
        registration: {
          clientId: operatorsAppClientId
          openIdIssuer: '${environment().authentication.loginEndpoint}${tenant().tenantId}/v2.0'
        }
        validation: {
          // A token for the API (the ops CLI, a script) and the sign-in's own ID token (the console).
          allowedAudiences: [
            'api://${operatorsAppClientId}'
            operatorsAppClientId
          ]
        }
      }
    }
    login: {
      tokenStore: {
        enabled: false
      }
    }
  }
}

// Basic publishing credentials (user name and password for FTP and for the SCM site) off: deploys
// authenticate with Microsoft Entra ID (azd, `func azure functionapp publish` on Flex Consumption
// and `az functionapp deployment` all do).
resource ftpCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-11-01' = {
  parent: site
  name: 'ftp'
  properties: {
    allow: false
  }
}

resource scmCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-11-01' = {
  parent: site
  name: 'scm'
  properties: {
    allow: false
  }
}

output id string = site.id
output name string = site.name
output defaultHostName string = site.properties.defaultHostName
