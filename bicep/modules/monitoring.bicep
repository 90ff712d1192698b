// Log Analytics workspace and a workspace-based Application Insights that accepts only
// Microsoft Entra authenticated ingestion.

param logAnalyticsName string
param appInsightsName string
param location string
param tags object = {}

@minValue(30)
@maxValue(730)
param retentionInDays int = 30

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

output appInsightsId string = appInsights.id
output appInsightsName string = appInsights.name
output workspaceId string = workspace.id
output workspaceName string = workspace.name
