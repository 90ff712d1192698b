// Parameters for bicep/main.bicep. Copy and edit per environment; every value not given here
// takes the default in main.bicep (which equals the code's default in src/adapters/settings.ts).
using 'main.bicep'

param baseName = 'orderconvoy'

// Premium isolates capacity; Standard is cheaper and has the same session and duplicate-detection semantics.
param serviceBusSku = 'Premium'
param duplicateDetectionHistoryTimeWindow = 'PT1H'
param maxDeliveryCount = 10

param cosmosCapacityMode = 'serverless'
param cosmosDatabaseName = 'orderpipeline'

param instanceMemoryMB = 2048
param maximumInstanceCount = 100

param inventoryCatalog = {
  'SKU-1': 100
  'SKU-2': 50
}
param paymentCreditLimit = 100000

param alertEmail = 'operators@example.com'

// `az ad signed-in-user show --query id -o tsv`, to run the app locally against these resources.
param developerPrincipalId = ''
