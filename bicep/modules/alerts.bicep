// Alerts for every way the pipeline fails, each to the operators' action group, each with a runbook
// paragraph in docs/operations.md under its name: a message that needs a person (dead-lettered,
// parked, a saga in needs-attention), the app waiting for a role, a backlog that grows or ages,
// failed deliveries, sagas that fail or never end, and a throttled store. The log alerts read only
// what the app exports whatever its sampling: metrics, the events of UNSAMPLED_EVENTS
// (src/adapters/telemetry.ts) and failed requests; the others are Azure Monitor platform metrics.
// tests/contract/telemetry-names.test.ts holds every name they use to one the app emits, and fails
// on an alert that reads what sampling may drop.

param namePrefix string
param location string
param tags object = {}

@description('Where alert e-mails go.')
param alertEmail string

param serviceBusNamespaceId string
param appInsightsId string
param cosmosAccountId string

@description('The queues a function consumes, whose backlog is watched (parked has no consumer).')
param ledgerQueueName string = 'ledger'
param orderTransactionsQueueName string = 'order-transactions'

@description('Active messages a consumed queue may hold throughout 15 minutes before it alerts.')
@minValue(1)
param backlogThreshold int = 1000

@description('Minutes a message of ledger or order-transactions may wait in its queue before a delivery takes it.')
@minValue(5)
param queueWaitMinutes int = 15

@description('Minutes a saga may stay pending, running or compensating before it alerts.')
@minValue(15)
param sagaOverdueMinutes int = 60

@description('Requests Cosmos DB may throttle (429) in 15 minutes, per container, before it alerts.')
@minValue(1)
param throttledRequestsThreshold int = 100

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
    description: 'Messages in a dead-letter sub-queue: transient failures exhausted maxDeliveryCount. Inspect and replay (docs/operations.md, dead-lettered).'
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
    description: 'Messages were sent to the parked queue (CONTRACTS 1.3). The reason dimension says why (docs/operations.md, parked).'
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
    description: 'A fulfillment saga could not compensate and waits for a person (review with retry or resolved; docs/operations.md, saga-needs-attention).'
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
    description: 'The app has been refused by Service Bus or Cosmos DB for over 30 minutes: its identity lacks the role the role dimension names, on the resource dimension. Assign it (bicep/modules/roles.bicep), then replay what was dead-lettered (docs/operations.md, authorization-pending).'
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

// ActiveMessages is a gauge per queue (EntityName). Its minimum over 15 minutes above the threshold
// means the queue never got below it: the functions are not keeping up, or not taking messages.
resource backlog 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: '${namePrefix}-backlog'
  location: 'global'
  tags: tags
  properties: {
    description: 'A queue held more than ${backlogThreshold} active messages throughout 15 minutes (docs/operations.md, backlog).'
    severity: 2
    enabled: true
    scopes: [
      serviceBusNamespaceId
    ]
    targetResourceType: 'Microsoft.ServiceBus/namespaces'
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'backlog'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'ActiveMessages'
          dimensions: [
            {
              name: 'EntityName'
              operator: 'Include'
              values: [
                ledgerQueueName
                orderTransactionsQueueName
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: backlogThreshold
          timeAggregation: 'Minimum'
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

// How old the oldest ledger message is: Service Bus has no such metric (Microsoft.ServiceBus/namespaces
// lists ActiveMessages but no message age), and a ledger message carries no span of its own before
// ledgerProcessor takes it. A ledger queue that never once emptied in 30 minutes stands in for it: a
// serial queue below its capacity empties between batches, so one that does not is behind or stuck.
resource ledgerNotDraining 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: '${namePrefix}-ledger-not-draining'
  location: 'global'
  tags: tags
  properties: {
    description: 'The ledger queue was never empty in 30 minutes: its oldest message may be that old (docs/operations.md, ledger-not-draining).'
    severity: 3
    enabled: true
    scopes: [
      serviceBusNamespaceId
    ]
    targetResourceType: 'Microsoft.ServiceBus/namespaces'
    evaluationFrequency: 'PT5M'
    windowSize: 'PT30M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'ledger-not-draining'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'ActiveMessages'
          dimensions: [
            {
              name: 'EntityName'
              operator: 'Include'
              values: [
                ledgerQueueName
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Minimum'
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

// How long a message waited in its queue before a delivery took it: every delivery records it
// (`messages.waitMs`, a distribution per queue: src/functions/delivery-wait.ts), whatever the
// sampling, and the exporter sends each minute's maximum (`valueMax`). One alert per queue. A message
// that no delivery takes is seen by the backlog, ledger-not-draining and dead-lettered alerts; every
// other one is seen at its first delivery, however late.
resource queueWait 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${namePrefix}-queue-wait'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: '${namePrefix}: a message waited over ${queueWaitMinutes} minutes in its queue'
    description: 'A message of ledger or order-transactions was delivered after waiting over ${queueWaitMinutes} minutes in its queue; the queue dimension names it (docs/operations.md, queue-wait).'
    severity: 2
    enabled: true
    scopes: [
      appInsightsId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      allOf: [
        {
          query: 'customMetrics | where name == \'messages.waitMs\' | extend queue = tostring(customDimensions.queue), waitedMinutes = valueMax / 60000.0'
          timeAggregation: 'Maximum'
          metricMeasureColumn: 'waitedMinutes'
          dimensions: [
            {
              name: 'queue'
              operator: 'Include'
              values: [
                '*'
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: queueWaitMinutes
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: true
    actions: {
      actionGroups: [
        actionGroup.id
      ]
    }
  }
}

// A delivery that failed (its span ended in error: the message goes back, and after maxDeliveryCount
// deliveries to the dead-letter sub-queue) or an HTTP function that answered 5xx. Transient failures
// ridden out inside a delivery do not fail it; the saga's activities have their own alerts. Every row
// with success == false is exported whatever the sampling (src/adapters/tracing.ts
// ExportSampledOrFailed), each counting once.
resource functionFailures 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${namePrefix}-function-failures'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: '${namePrefix}: function failures'
    description: 'A Service Bus delivery failed or an HTTP function answered 5xx; the functionName dimension names it (docs/operations.md, function-failures).'
    severity: 2
    enabled: true
    scopes: [
      appInsightsId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      allOf: [
        {
          query: 'requests | where success == false | where name startswith \'process \' or toint(resultCode) >= 500 | extend functionName = tostring(customDimensions[\'faas.name\'])'
          timeAggregation: 'Count'
          dimensions: [
            {
              name: 'functionName'
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

// A saga that failed: the app's orchestrations do not end Failed by design (a refusal compensates, a
// compensation that keeps failing waits for a person, a status write is retried until it lands), so a
// failed saga is one that compensated because a step's retries ran out (its reason reads `<step>
// failed after <n> attempts: ...`): a downstream service was out for longer than the retry policy.
// One that crashed or hangs is the overdue alert below.
resource sagaFailed 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${namePrefix}-saga-failed'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: '${namePrefix}: saga failed, retries ran out'
    description: 'A saga compensated because a step kept failing transiently until its retries ran out; the step dimension names it (docs/operations.md, saga-failed).'
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
          query: 'customEvents | where name == \'Saga.compensated\' | extend reason = tostring(customDimensions.reason) | where reason has \'failed after\' | extend step = tostring(split(reason, \' \')[0])'
          timeAggregation: 'Count'
          dimensions: [
            {
              name: 'step'
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

// A saga pending (submitted, `OrderSubmitted`, but no status recorded) or running or compensating for
// longer than the bound, from its own events: each status change is a `Saga.<status>` event with the
// order id. Durable's own instance status is not in Application Insights. Needs-attention sagas wait
// for a person and have their own alert. The query reads two days back.
resource sagaOverdue 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${namePrefix}-saga-overdue'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: '${namePrefix}: saga pending or running over ${sagaOverdueMinutes} minutes'
    description: 'Sagas have been pending, running or compensating for over ${sagaOverdueMinutes} minutes; the status dimension says which (docs/operations.md, saga-overdue).'
    severity: 2
    enabled: true
    scopes: [
      appInsightsId
    ]
    evaluationFrequency: 'PT15M'
    windowSize: 'PT15M'
    overrideQueryTimeRange: 'P2D'
    criteria: {
      allOf: [
        {
          query: format(
            '''
let events = customEvents
    | where name == 'OrderSubmitted' or name startswith 'Saga.'
    | extend orderId = tostring(customDimensions.orderId);
let submitted = events | where name == 'OrderSubmitted' | summarize submittedAt = min(timestamp) by orderId;
let latest = events | where name startswith 'Saga.' | summarize arg_max(timestamp, name) by orderId;
submitted
| join kind=fullouter latest on orderId
| extend orderId = coalesce(orderId, orderId1), status = iff(isempty(name), 'pending', substring(name, 5)),
    since = iff(isempty(name), submittedAt, timestamp)
| where status in ('pending', 'running', 'compensating') and since < ago({0}m)
| project orderId, status, since
''',
            sagaOverdueMinutes
          )
          timeAggregation: 'Count'
          dimensions: [
            {
              name: 'status'
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
    autoMitigate: true
    actions: {
      actionGroups: [
        actionGroup.id
      ]
    }
  }
}

// Requests Cosmos DB refused with 429 (Microsoft Learn, "Monitoring data reference for Azure Cosmos
// DB": TotalRequests, aggregation Count, dimensions StatusCode and CollectionName). The client
// retries them (src/adapters/handler-time.ts), so a few are harmless; many mean the account's
// throughput is what limits the convoy.
resource throttled 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: '${namePrefix}-cosmos-throttled'
  location: 'global'
  tags: tags
  properties: {
    description: 'Cosmos DB throttled more than ${throttledRequestsThreshold} requests (429) of a container in 15 minutes (docs/operations.md, cosmos-throttled).'
    severity: 3
    enabled: true
    scopes: [
      cosmosAccountId
    ]
    targetResourceType: 'Microsoft.DocumentDB/databaseAccounts'
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'throttled'
          metricNamespace: 'Microsoft.DocumentDB/databaseAccounts'
          metricName: 'TotalRequests'
          dimensions: [
            {
              name: 'StatusCode'
              operator: 'Include'
              values: [
                '429'
              ]
            }
            {
              name: 'CollectionName'
              operator: 'Include'
              values: [
                '*'
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: throttledRequestsThreshold
          timeAggregation: 'Count'
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

output actionGroupId string = actionGroup.id
