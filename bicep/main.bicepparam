// Parameters for bicep/main.bicep, for `azd up` and for `az deployment group create` alike. Every
// value not given here takes the default in main.bicep (which equals the code's default in
// src/adapters/settings.ts). azd sets AZURE_ENV_NAME, AZURE_LOCATION and AZURE_PRINCIPAL_ID (the
// deploying principal) from its environment; `azd env set NAME VALUE` sets the others. Without
// them (plain `az`), the fallbacks below apply; ALERT_EMAIL has none.
using 'main.bicep'

// The azd environment's name, reduced to what a resource name allows (lowercase letters and digits).
param baseName = take(toLower(replace(replace(readEnvironmentVariable('AZURE_ENV_NAME', 'orderconvoy'), '-', ''), '_', '')), 11)

// Empty: the resource group's region.
param location = readEnvironmentVariable('AZURE_LOCATION', '')

// Standard is the cheap default (sessions and duplicate detection included; messages up to 256 KB);
// Premium isolates capacity and allows private endpoints (`azd env set SERVICE_BUS_SKU Premium`).
param serviceBusSku = readEnvironmentVariable('SERVICE_BUS_SKU', 'Standard')
param duplicateDetectionHistoryTimeWindow = 'PT1H'
param maxDeliveryCount = 10

param cosmosCapacityMode = 'serverless'
param cosmosDatabaseName = 'orderpipeline'

param instanceMemoryMB = 2048
// What the default store and namespace carry (docs/performance.md); always-ready instances off.
param maximumInstanceCount = 1
param convoyAlwaysReadyInstances = 0

param inventoryCatalog = {
  'SKU-1': 100
  'SKU-2': 50
}
param paymentCreditLimit = 100000

// Required: who gets the alerts (`azd env set ALERT_EMAIL you@example.com`, or the variable set for
// `az`). Without it the value is empty, which main.bicep refuses at deployment, naming alertEmail.
param alertEmail = readEnvironmentVariable('ALERT_EMAIL', '')

// The deploying principal gets the app's data roles, to run `func start` and `npm run ops` against
// these resources: azd passes its own (`az ad signed-in-user show --query id -o tsv` by hand).
param developerPrincipalId = readEnvironmentVariable('AZURE_PRINCIPAL_ID', '')
param developerPrincipalType = readEnvironmentVariable('AZURE_PRINCIPAL_TYPE', 'User')

// The Entra app registration operators sign in to (docs/deploy.md, "Operator sign-in"):
// `azd env set OPERATORS_APP_CLIENT_ID <client id>`. Empty: no identity provider, keys only.
param operatorsAppClientId = readEnvironmentVariable('OPERATORS_APP_CLIENT_ID', '')
