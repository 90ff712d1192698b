// Private networking (main.bicep `privateNetworking = true`): a virtual network with a subnet for
// the Function App's VNet integration and one for private endpoints; a private endpoint for the
// Service Bus namespace (Premium only), the Cosmos DB account, and the storage account's blob, queue
// and table services; and the private DNS zones that make their usual host names resolve to those
// endpoints inside the network. The services themselves then turn public network access off.

param namePrefix string
param location string
param tags object = {}

param serviceBusNamespaceId string
param cosmosAccountId string
param storageAccountId string

@description('Address space of the virtual network; the two subnets take its first two /24s.')
param addressPrefix string = '10.20.0.0/16'

var appSubnetPrefix = cidrSubnet(addressPrefix, 24, 0)
var endpointSubnetPrefix = cidrSubnet(addressPrefix, 24, 1)

resource vnet 'Microsoft.Network/virtualNetworks@2024-05-01' = {
  name: 'vnet-${namePrefix}'
  location: location
  tags: tags
  properties: {
    addressSpace: {
      addressPrefixes: [
        addressPrefix
      ]
    }
    subnets: [
      {
        // Flex Consumption's VNet integration needs a subnet delegated to Microsoft.App/environments.
        name: 'app'
        properties: {
          addressPrefix: appSubnetPrefix
          delegations: [
            {
              name: 'flex'
              properties: {
                serviceName: 'Microsoft.App/environments'
              }
            }
          ]
        }
      }
      {
        name: 'endpoints'
        properties: {
          addressPrefix: endpointSubnetPrefix
          privateEndpointNetworkPolicies: 'Disabled'
        }
      }
    ]
  }
}

// One endpoint per (resource, sub-resource), each with its zone.
var endpoints = [
  {
    name: 'servicebus'
    resourceId: serviceBusNamespaceId
    groupId: 'namespace'
    zone: 'privatelink.servicebus.windows.net'
  }
  {
    name: 'cosmos'
    resourceId: cosmosAccountId
    groupId: 'Sql'
    zone: 'privatelink.documents.azure.com'
  }
  {
    name: 'blob'
    resourceId: storageAccountId
    groupId: 'blob'
    zone: 'privatelink.blob.${environment().suffixes.storage}'
  }
  {
    name: 'queue'
    resourceId: storageAccountId
    groupId: 'queue'
    zone: 'privatelink.queue.${environment().suffixes.storage}'
  }
  {
    name: 'table'
    resourceId: storageAccountId
    groupId: 'table'
    zone: 'privatelink.table.${environment().suffixes.storage}'
  }
]

resource zones 'Microsoft.Network/privateDnsZones@2024-06-01' = [
  for endpoint in endpoints: {
    name: endpoint.zone
    location: 'global'
    tags: tags
  }
]

resource zoneLinks 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2024-06-01' = [
  for (endpoint, i) in endpoints: {
    parent: zones[i]
    name: 'vnet-${namePrefix}'
    location: 'global'
    tags: tags
    properties: {
      registrationEnabled: false
      virtualNetwork: {
        id: vnet.id
      }
    }
  }
]

resource privateEndpoints 'Microsoft.Network/privateEndpoints@2024-05-01' = [
  for endpoint in endpoints: {
    name: 'pe-${namePrefix}-${endpoint.name}'
    location: location
    tags: tags
    properties: {
      subnet: {
        id: vnet.properties.subnets[1].id
      }
      privateLinkServiceConnections: [
        {
          name: endpoint.name
          properties: {
            privateLinkServiceId: endpoint.resourceId
            groupIds: [
              endpoint.groupId
            ]
          }
        }
      ]
    }
  }
]

resource zoneGroups 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups@2024-05-01' = [
  for (endpoint, i) in endpoints: {
    parent: privateEndpoints[i]
    name: 'default'
    properties: {
      privateDnsZoneConfigs: [
        {
          name: replace(endpoint.zone, '.', '-')
          properties: {
            privateDnsZoneId: zones[i].id
          }
        }
      ]
    }
  }
]

output appSubnetId string = vnet.properties.subnets[0].id
output vnetId string = vnet.id
