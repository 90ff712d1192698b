// Log Analytics workspace, a workspace-based Application Insights that accepts only Microsoft Entra
// authenticated ingestion, and the operations workbook (bicep/workbooks/operations.workbook.json;
// docs/operations.md says what each panel reads).

param logAnalyticsName string
param appInsightsName string
param location string
param tags object = {}

@minValue(30)
@maxValue(730)
param retentionInDays int = 30

@description('The namespace whose queue metrics the workbook charts.')
param serviceBusNamespaceId string

@description('The Cosmos DB account whose request metrics the workbook charts.')
param cosmosAccountId string

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: appInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    IngestionMode: 'LogAnalytics'
    // Instrumentation-key ingestion is refused: telemetry must carry an Entra token of an identity
    // holding Monitoring Metrics Publisher (APPLICATIONINSIGHTS_AUTHENTICATION_STRING on the app).
    DisableLocalAuth: true
  }
}

// The workbook's JSON names the resources it reads by placeholders, filled in here.
var workbookJson = replace(
  replace(
    replace(loadTextContent('../workbooks/operations.workbook.json'), '__APP_INSIGHTS_ID__', appInsights.id),
    '__SERVICE_BUS_NAMESPACE_ID__',
    serviceBusNamespaceId
  ),
  '__COSMOS_ACCOUNT_ID__',
  cosmosAccountId
)

// A shared workbook, listed under the Application Insights resource's Workbooks; its name is a GUID
// (the resource type requires one), stable per Application Insights resource so that deploying again
// updates it.
resource workbook 'Microsoft.Insights/workbooks@2023-06-01' = {
  name: guid(appInsights.id, 'operations-workbook')
  location: location
  tags: tags
  kind: 'shared'
  properties: {
    displayName: '${appInsightsName}: operations'
    category: 'workbook'
    sourceId: appInsights.id
    serializedData: workbookJson
  }
}

output appInsightsId string = appInsights.id
output workbookId string = workbook.id
output appInsightsName string = appInsights.name
output workspaceId string = workspace.id
output workspaceName string = workspace.name
