/**
 * The scripts azd runs around provisioning (azure.yaml's hooks), on a fake azd environment:
 * scripts/azd-env.js reads it, scripts/write-local-settings.js maps it onto local.settings.json,
 * scripts/check-alert-email.js refuses to provision without ALERT_EMAIL.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

type Run = (command: string, args: string[]) => { status: number | null; stdout: string; stderr: string };
type Env = Record<string, string | undefined>;

const { parseAzdValues, azdValues, EnvironmentError } = require('../../scripts/azd-env.js') as {
  parseAzdValues: (text: string) => Record<string, string>;
  azdValues: (names: string[], env: Env, run: Run) => Record<string, string>;
  EnvironmentError: new (message: string) => Error;
};
const { localSettings, writeLocalSettings, SettingsError, PROVISIONED } =
  require('../../scripts/write-local-settings.js') as {
    localSettings: (sample: unknown, existing: unknown, values: Record<string, string>) => Settings;
    writeLocalSettings: (root: string, env: Env, run: Run) => string;
    SettingsError: new (message: string) => Error;
    PROVISIONED: Record<string, string>;
  };
const { alertEmailProblem } = require('../../scripts/check-alert-email.js') as {
  alertEmailProblem: (value: string | undefined) => string | null;
};

interface Settings {
  IsEncrypted: boolean;
  Values: Record<string, string>;
  [key: string]: unknown;
}

const ROOT = resolve(__dirname, '..', '..');
const SAMPLE = JSON.parse(readFileSync(join(ROOT, 'local.settings.sample.json'), 'utf8')) as Settings;

/** What `azd env get-values --output json` prints after `azd up`: the outputs under the template's names. */
const AZD = {
  AZURE_ENV_NAME: 'dev',
  AZURE_LOCATION: 'swedencentral',
  AZURE_RESOURCE_GROUP: 'rg-dev',
  ALERT_EMAIL: 'ops@contoso.com',
  serviceBusFullyQualifiedNamespace: 'sb-dev-abc.servicebus.windows.net',
  cosmosEndpoint: 'https://cosmos-dev-abc.documents.azure.com:443/',
  cosmosDatabaseName: 'orderpipeline',
  functionAppName: 'func-dev-abc',
  functionAppHostName: 'func-dev-abc.azurewebsites.net',
  identityClientId: '00000000-1111-2222-3333-444444444444',
  storageAccountName: 'stdevabc',
};

function fakeAzd(values: Record<string, string> = AZD): Run & { calls: string[][] } {
  const calls: string[][] = [];
  const run = ((command: string, args: string[]) => {
    calls.push([command, ...args]);
    return { status: 0, stdout: JSON.stringify(values), stderr: '' };
  }) as Run & { calls: string[][] };
  run.calls = calls;
  return run;
}

describe('the azd environment (scripts/azd-env.js)', () => {
  it('reads azd env get-values --output json, with the process environment over it', () => {
    const run = fakeAzd();
    const values = azdValues(
      ['serviceBusFullyQualifiedNamespace', 'cosmosEndpoint'],
      { cosmosEndpoint: 'https://mine/' },
      run,
    );
    expect(run.calls).toEqual([['azd', 'env', 'get-values', '--output', 'json']]);
    expect(values.serviceBusFullyQualifiedNamespace).toBe(AZD.serviceBusFullyQualifiedNamespace);
    expect(values.cosmosEndpoint).toBe('https://mine/');
  });

  it('asks azd nothing when the process environment has every value, as in a hook', () => {
    const run = fakeAzd();
    expect(azdValues(['cosmosEndpoint'], { cosmosEndpoint: 'https://c/' }, run)).toEqual({
      cosmosEndpoint: 'https://c/',
    });
    expect(run.calls).toEqual([]);
  });

  it('says in one line when azd cannot answer', () => {
    const failing: Run = () => ({ status: 1, stdout: '', stderr: 'ERROR: no project exists\n' });
    expect(() => azdValues(['x'], {}, failing)).toThrow(EnvironmentError);
    expect(() => azdValues(['x'], {}, failing)).toThrow(
      /azd env get-values: ERROR: no project exists\); .* set x/,
    );
    const absent: Run = () => ({ status: null, stdout: '', stderr: 'azd: not found on PATH' });
    expect(() => azdValues(['x'], {}, absent)).toThrow(/azd: not found on PATH/);
    expect(() => parseAzdValues('KEY="value"')).toThrow(/no JSON/);
    expect(() => parseAzdValues('[]')).toThrow(/no JSON object/);
    expect(parseAzdValues('{"a": "1", "n": 2}')).toEqual({ a: '1' });
  });
});

describe('local.settings.json from the azd environment (scripts/write-local-settings.js)', () => {
  it('maps the provisioned resources onto the app settings, the rest from the sample, no secret', () => {
    const settings = localSettings(SAMPLE, undefined, AZD);
    expect(settings.Values).toEqual({
      ...SAMPLE.Values,
      ServiceBusConnection__fullyQualifiedNamespace: 'sb-dev-abc.servicebus.windows.net',
      CosmosDb__accountEndpoint: 'https://cosmos-dev-abc.documents.azure.com:443/',
      CosmosDb__databaseName: 'orderpipeline',
    });
    expect(settings.Values.AzureWebJobsStorage).toBe('UseDevelopmentStorage=true');
    expect(settings.Values.FUNCTIONS_WORKER_RUNTIME).toBe('node');
    // The developer's own login, not the app's identity; no telemetry connection string.
    expect(settings.Values.AZURE_CLIENT_ID).toBe('');
    expect(settings.Values.APPLICATIONINSIGHTS_CONNECTION_STRING).toBe('');
    expect(JSON.stringify(settings)).not.toContain(AZD.identityClientId);
    expect(Object.values(settings.Values).join()).not.toMatch(/AccountKey|SharedAccessKey|Password/i);
  });

  it('keeps every other value of an existing file; the provisioned ones win for the resources only', () => {
    const existing = {
      IsEncrypted: false,
      Host: { LocalHttpPort: 7072 },
      Values: {
        ServiceBusConnection__fullyQualifiedNamespace: 'old.servicebus.windows.net',
        DURABLE_TASK_HUB_NAME: 'orderfulfillmentdev',
        INVENTORY_CATALOG: '{"SKU-1": 5}',
        MY_OWN: 'kept',
      },
    };
    const settings = localSettings(SAMPLE, existing, AZD);
    expect(settings.Host).toEqual({ LocalHttpPort: 7072 });
    expect(settings.Values).toMatchObject({
      ServiceBusConnection__fullyQualifiedNamespace: AZD.serviceBusFullyQualifiedNamespace,
      CosmosDb__accountEndpoint: AZD.cosmosEndpoint,
      DURABLE_TASK_HUB_NAME: 'orderfulfillmentdev',
      INVENTORY_CATALOG: '{"SKU-1": 5}',
      MY_OWN: 'kept',
      // What the file lacked comes from the sample.
      PAYMENT_CREDIT_LIMIT: '100000',
      AzureWebJobsStorage: 'UseDevelopmentStorage=true',
    });
  });

  it('leaves host storage by identity alone, and refuses a file it cannot merge', () => {
    const byIdentity = { Values: { AzureWebJobsStorage__accountName: 'stdevabc' } };
    const settings = localSettings(SAMPLE, byIdentity, AZD);
    expect(settings.Values.AzureWebJobsStorage__accountName).toBe('stdevabc');
    expect(settings.Values).not.toHaveProperty('AzureWebJobsStorage');
    expect(() => localSettings(SAMPLE, { IsEncrypted: true, Values: {} }, AZD)).toThrow(/encrypted/);
    expect(() => localSettings(SAMPLE, [], AZD)).toThrow(SettingsError);
  });

  it('maps exactly the settings the sample lists for the resources', () => {
    for (const setting of Object.values(PROVISIONED)) expect(Object.keys(SAMPLE.Values)).toContain(setting);
  });

  describe('the file', () => {
    let root: string;
    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), 'local-settings-'));
      copyFileSync(join(ROOT, 'local.settings.sample.json'), join(root, 'local.settings.sample.json'));
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));
    const written = (): Settings =>
      JSON.parse(readFileSync(join(root, 'local.settings.json'), 'utf8')) as Settings;

    it('is written from the sample, then merged into when written again', () => {
      expect(writeLocalSettings(root, {}, fakeAzd())).toContain('the rest from local.settings.sample.json');
      expect(written().Values.CosmosDb__accountEndpoint).toBe(AZD.cosmosEndpoint);
      writeFileSync(
        join(root, 'local.settings.json'),
        JSON.stringify({ ...written(), Values: { ...written().Values, MY_OWN: 'kept' } }),
      );
      const moved = { ...AZD, cosmosEndpoint: 'https://cosmos-new.documents.azure.com:443/' };
      expect(writeLocalSettings(root, {}, fakeAzd(moved))).toContain('its other values kept');
      expect(written().Values).toMatchObject({
        MY_OWN: 'kept',
        CosmosDb__accountEndpoint: moved.cosmosEndpoint,
      });
    });

    it('takes the values a hook gets in its environment, and names what the environment lacks', () => {
      const hookEnv = {
        serviceBusFullyQualifiedNamespace: 'sb-hook.servicebus.windows.net',
        cosmosEndpoint: 'https://cosmos-hook.documents.azure.com:443/',
        cosmosDatabaseName: 'orderpipeline',
      };
      const run = fakeAzd();
      writeLocalSettings(root, hookEnv, run);
      expect(run.calls).toEqual([]);
      expect(written().Values.ServiceBusConnection__fullyQualifiedNamespace).toBe(
        'sb-hook.servicebus.windows.net',
      );

      const unprovisioned: Record<string, string> = { ...AZD };
      delete unprovisioned.cosmosEndpoint;
      rmSync(join(root, 'local.settings.json'));
      expect(() => writeLocalSettings(root, {}, fakeAzd(unprovisioned))).toThrow(
        'the azd environment has no cosmosEndpoint: provision first (azd provision)',
      );
    });

    it('never overwrites a file it cannot read', () => {
      writeFileSync(join(root, 'local.settings.json'), '{ "Values": { oops');
      expect(() => writeLocalSettings(root, {}, fakeAzd())).toThrow(/cannot read local.settings.json/);
      expect(readFileSync(join(root, 'local.settings.json'), 'utf8')).toBe('{ "Values": { oops');
    });
  });
});

describe('ALERT_EMAIL before provisioning (scripts/check-alert-email.js)', () => {
  it('refuses none, a blank and a non-address in one line that says how to set it', () => {
    for (const value of [undefined, '', '  ', 'ops', 'ops@example', 'a b@c.d']) {
      const problem = alertEmailProblem(value);
      expect([value, problem]).toEqual([
        value,
        expect.stringContaining('azd env set ALERT_EMAIL you@example.com'),
      ]);
      expect(problem?.split('\n')).toHaveLength(1);
    }
    expect(alertEmailProblem('ops@contoso.com')).toBeNull();
  });
});

describe('azure.yaml hooks', () => {
  const manifest = parse(readFileSync(join(ROOT, 'azure.yaml'), 'utf8')) as {
    hooks: Record<
      string,
      Record<'posix' | 'windows', { shell: string; run: string; continueOnError?: boolean }>
    >;
    services: { api: { hooks: Record<string, unknown> } };
  };

  it('checks ALERT_EMAIL before provisioning and writes local.settings.json after, on both shells', () => {
    expect(manifest.hooks.preprovision.posix).toMatchObject({
      shell: 'sh',
      run: 'node scripts/check-alert-email.js',
    });
    expect(manifest.hooks.preprovision.windows).toMatchObject({
      shell: 'pwsh',
      run: 'node scripts/check-alert-email.js',
    });
    for (const os of ['posix', 'windows'] as const) {
      expect(manifest.hooks.postprovision[os].run).toBe('node scripts/write-local-settings.js');
      // A local convenience: it never stops a deployment.
      expect(manifest.hooks.postprovision[os].continueOnError).toBe(true);
    }
    expect(manifest.services.api.hooks).toHaveProperty('prepackage');
  });
});
