// Alerts that tell a person when a message needs them: anything dead-lettered (transient failures
// that never cleared), anything parked (CONTRACTS 1.3), a saga waiting in needs-attention, and the
// app waiting for a role for longer than a role assignment takes to apply.

param namePrefix string
param location string
param tags object = {}

@description('Where alert e-mails go.')
param alertEmail string

param serviceBusNamespaceId string
param appInsightsId string

resource actionGroup 'Microsoft.Insights/actionGroups@2022-04-01' = {
  name: '${namePrefix}-operators'
  location: 'global'
  tags: tags
  properties: {
    groupShortName: take(namePrefix, 12)
    enabled: true
    emailReceivers: [
      {
        name: 'operators'
        emailAddress: alertEmail
        useCommonAlertSchema: true
      }
    ]
  }
}

// DeadletteredMessages is a gauge of what sits in the dead-letter sub-queues; splitting on
// EntityName with '*' makes one alert per queue, naming the queue that needs a replay.
resource deadLettered 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: '${namePrefix}-dead-lettered'
  location: 'global'
  tags: tags
  properties: {
    description: 'Messages in a dead-letter sub-queue: transient failures exhausted maxDeliveryCount. Inspect and replay (docs/deploy.md).'
    severity: 2
    enabled: true
    scopes: [
      serviceBusNamespaceId
    ]
    targetResourceType: 'Microsoft.ServiceBus/namespaces'
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'dead-lettered'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'DeadletteredMessages'
          dimensions: [
            {
              name: 'EntityName'
              operator: 'Include'
              values: [
                '*'
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Maximum'
        }
      ]
    }
    autoMitigate: true
    actions: [
      {
        actionGroupId: actionGroup.id
      }
    ]
  }
}

// The app's own metric (src/services/convoy/parking.ts), split by reason: `digest-mismatch` and
// `sequence-conflict` usually need a person, `invalid` points at the producer.
resource parked 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${namePrefix}-parked'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: '${namePrefix}: messages parked'
    description: 'Messages were sent to the parked queue (CONTRACTS 1.3). The reason dimension says why.'
    severity: 2
    enabled: true
    scopes: [
      appInsightsId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    criteria: {
      allOf: [
        {
          query: 'customMetrics | where name == "messages.parked" | extend reason = tostring(customDimensions.reason)'
          timeAggregation: 'Total'
          metricMeasureColumn: 'valueSum'
          dimensions: [
            {
              name: 'reason'
              operator: 'Include'
              values: [
                '*'
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: 0
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: false
    actions: {
      actionGroups: [
        actionGroup.id
      ]
    }
  }
}

// A compensation that keeps failing puts the saga in needs-attention (CONTRACTS 2); the saga
// raises this event, and again when the review times out.
resource sagaNeedsAttention 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${namePrefix}-saga-needs-attention'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: '${namePrefix}: saga needs attention'
    description: 'A fulfillment saga could not compensate and waits for a person (review with retry or resolved).'
    severity: 1
    enabled: true
    scopes: [
      appInsightsId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    criteria: {
      allOf: [
        {
          query: 'customEvents | where name == "Alert.SagaNeedsAttention"'
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: false
    actions: {
      actionGroups: [
        actionGroup.id
      ]
    }
  }
}

// The handlers wait out a role not in effect yet (AuthorizationPendingError), raising this event once
// a delivery with the role and the resource. A new assignment applies within 30 minutes (Microsoft
// Learn, "Authorize access to blobs using Microsoft Entra ID": "Azure role assignments can take up to
// 30 minutes to propagate"); waiting for the same role for longer means it is missing. One alert per
// role and resource, naming them.
resource authorizationPending 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${namePrefix}-authorization-pending'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: '${namePrefix}: waiting for a role for over 30 minutes'
    description: 'The app has been refused by Service Bus or Cosmos DB for over 30 minutes: its identity lacks the role the role dimension names, on the resource dimension. Assign it (bicep/modules/roles.bicep), then replay what was dead-lettered (docs/deploy.md).'
    severity: 1
    enabled: true
    scopes: [
      appInsightsId
    ]
    evaluationFrequency: 'PT15M'
    windowSize: 'PT1H'
    criteria: {
      allOf: [
        {
          query: 'customEvents | where name == "AuthorizationPending" | extend role = tostring(customDimensions.role), resource = tostring(customDimensions.resource) | summarize waited = max(timestamp) - min(timestamp) by role, resource | where waited > 30m'
          timeAggregation: 'Count'
          dimensions: [
            {
              name: 'role'
              operator: 'Include'
              values: [
                '*'
              ]
            }
            {
              name: 'resource'
              operator: 'Include'
              values: [
                '*'
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: 0
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: false
    actions: {
      actionGroups: [
        actionGroup.id
      ]
    }
  }
}

output actionGroupId string = actionGroup.id
