/**
 * The app's credential (src/adapters/azure/credential.ts): the managed identity on Azure and only it;
 * the developer's CLI logins under `func start`.
 */
import { ChainedTokenCredential, ManagedIdentityCredential } from '@azure/identity';
import { appCredential } from '../../src/adapters/azure/credential';

describe('appCredential', () => {
  it('is the user-assigned managed identity named by AZURE_CLIENT_ID, with no other credential to fall back to', () => {
    const credential = appCredential('11111111-2222-3333-4444-555555555555');
    expect(credential).toBeInstanceOf(ManagedIdentityCredential);
    expect(credential).not.toBeInstanceOf(ChainedTokenCredential);
  });

  it("is the Azure CLI login, then azd's, without AZURE_CLIENT_ID: never a managed identity", async () => {
    const credential = appCredential(undefined);
    expect(credential).toBeInstanceOf(ChainedTokenCredential);
    // With neither CLI on the PATH, the chain's error names what it tried, in order.
    const path = process.env.PATH;
    process.env.PATH = '';
    const tried = await credential
      .getToken('https://cosmos.azure.com/.default')
      .then(
        () => 'a token',
        (error: unknown) => String(error),
      )
      .finally(() => {
        process.env.PATH = path;
      });
    expect(tried.split('\n').slice(1)).toEqual([
      expect.stringMatching(/^CredentialUnavailableError: Azure CLI could not be found/),
      expect.stringMatching(/^CredentialUnavailableError: Azure Developer CLI couldn't be found/),
    ]);
  }, 30_000);
});
