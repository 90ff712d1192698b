// The one identity the Function App runs as. User-assigned rather than system-assigned so that its
// role assignments exist before the site starts (no first-start failures while RBAC propagates)
// and so that its client id can be written into the app settings in the same deployment.

param name string
param location string
param tags object = {}

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: name
  location: location
  tags: tags
}

output id string = identity.id
output name string = identity.name
output clientId string = identity.properties.clientId
output principalId string = identity.properties.principalId
