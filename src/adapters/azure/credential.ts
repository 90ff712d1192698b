/**
 * The app's Microsoft Entra credential, chosen by where it runs, as Microsoft Learn's "Authentication
 * best practices with the Azure Identity library for JavaScript" advises ("Use deterministic
 * credentials in production environments"):
 * - on Azure, the user-assigned managed identity whose client id the Bicep sets as `AZURE_CLIENT_ID`,
 *   and nothing else: a CLI login on the instance can never stand in for it;
 * - under `func start` (`AZURE_CLIENT_ID` unset), the developer's Azure CLI login, else azd's.
 * It is also less to load at every cold start than `DefaultAzureCredential`, which holds every
 * credential of its chain (docs/performance.md, "Cold start").
 */
import {
  AzureCliCredential,
  AzureDeveloperCliCredential,
  ChainedTokenCredential,
  ManagedIdentityCredential,
  type TokenCredential,
} from '@azure/identity';

export function appCredential(managedIdentityClientId: string | undefined): TokenCredential {
  return managedIdentityClientId !== undefined
    ? new ManagedIdentityCredential({ clientId: managedIdentityClientId })
    : new ChainedTokenCredential(new AzureCliCredential(), new AzureDeveloperCliCredential());
}
