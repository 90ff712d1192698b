/**
 * The deployment's ceilings on made-up inputs: what each store and namespace carry, how many
 * instances fit under them (never fewer than the plan's lowest maximum, 1), and which ceiling binds.
 */
import {
  COSMOS_SERVERLESS_RU_PER_SECOND,
  deploymentProblems,
  deploymentSizingTargets,
  formatDeploymentSizing,
  serviceBusCreditsPerEntry,
  sizeDeployment,
  sizeSupportedConfigurations,
  SUPPORTED_CONFIGURATIONS,
  type DeploymentConfiguration,
  type SizingInputs,
} from '../../bench/deployment-sizing';
import { bicepDeployment } from '../../bench/bicep-deployment';

const inputs: SizingInputs = {
  instanceEntriesPerSecond: 1000,
  requestUnitsPerEntry: 20,
  entriesPerLedgerMessage: 100,
  entriesPerOrder: 10,
};
const serverlessStandard: DeploymentConfiguration = {
  cosmos: { mode: 'serverless' },
  serviceBus: { sku: 'Standard' },
};

describe('the deployment ceilings', () => {
  it('counts an entry as its send and receive, plus its share of its ledger message', () => {
    expect(serviceBusCreditsPerEntry(100)).toBeCloseTo(2.02, 9);
    expect(serviceBusCreditsPerEntry(1)).toBe(4);
    expect(() => serviceBusCreditsPerEntry(0)).toThrow(RangeError);
  });

  it('divides the store by the charge per entry and the namespace by the credits per entry', () => {
    const sizing = sizeDeployment(serverlessStandard, inputs);
    expect(sizing.storeEntriesPerSecond).toBe(COSMOS_SERVERLESS_RU_PER_SECOND / 20);
    expect(sizing.namespaceEntriesPerSecond).toBeCloseTo(1000 / 2.02, 9);
    // 250 entries/s: less than one instance's 1,000, so one instance and the store binds.
    expect(sizing).toMatchObject({
      maxInstances: 1,
      entriesPerSecond: 250,
      ordersPerSecond: 25,
      topsOut: 'store',
    });
  });

  it('lets the namespace bind where the store carries more', () => {
    const sizing = sizeDeployment(
      { cosmos: { mode: 'provisioned', autoscaleMaxThroughput: 20_000 }, serviceBus: { sku: 'Standard' } },
      inputs,
    );
    expect(sizing.topsOut).toBe('namespace');
    expect(sizing.entriesPerSecond).toBeCloseTo(1000 / 2.02, 9);
  });

  it('allows as many instances as fit under the store on Premium, whose rate is not published', () => {
    const sizing = sizeDeployment(
      {
        cosmos: { mode: 'provisioned', autoscaleMaxThroughput: 100_000 },
        serviceBus: { sku: 'Premium', messagingUnits: 2 },
      },
      inputs,
    );
    expect(sizing.namespaceEntriesPerSecond).toBeNull();
    // 5,000 entries/s of store: five instances of 1,000, exactly at the ceiling.
    expect(sizing).toMatchObject({ maxInstances: 5, entriesPerSecond: 5000, topsOut: 'store' });
    const short = sizeDeployment(
      {
        cosmos: { mode: 'provisioned', autoscaleMaxThroughput: 110_000 },
        serviceBus: { sku: 'Premium', messagingUnits: 2 },
      },
      inputs,
    );
    expect(short).toMatchObject({ maxInstances: 5, entriesPerSecond: 5000, topsOut: 'instances' });
  });

  it('never goes past the plan: 1 to 1,000 instances', () => {
    const huge = sizeDeployment(
      {
        cosmos: { mode: 'provisioned', autoscaleMaxThroughput: 1e12 },
        serviceBus: { sku: 'Premium', messagingUnits: 16 },
      },
      inputs,
    );
    expect(huge.maxInstances).toBe(1000);
    expect(() => sizeDeployment(serverlessStandard, { ...inputs, requestUnitsPerEntry: 0 })).toThrow(
      RangeError,
    );
  });

  it('flags a deployment whose instances, always-ready ones included, ask more than the ceilings carry', () => {
    const fits = {
      maximumInstanceCount: 1,
      convoyAlwaysReadyInstances: 0,
      configuration: serverlessStandard,
    };
    expect(deploymentProblems(fits, inputs)).toEqual([]);
    expect(deploymentProblems({ ...fits, maximumInstanceCount: 100 }, inputs)).toEqual([
      expect.stringMatching(
        /^maximumInstanceCount 100 \+ convoyAlwaysReadyInstances 0 is over the 1 instance\(s\)/,
      ),
    ]);
    expect(deploymentProblems({ ...fits, convoyAlwaysReadyInstances: 1 }, inputs)).toHaveLength(1);
    const sizing = sizeSupportedConfigurations(inputs, 'made up');
    expect(deploymentSizingTargets(sizing, fits)[0].pass).toBe(true);
    expect(deploymentSizingTargets(sizing, { ...fits, maximumInstanceCount: 2 })[0].pass).toBe(false);
    expect(deploymentSizingTargets(null, fits)).toEqual([]);
  });

  it('lists every supported configuration, the default first', () => {
    const sizing = sizeSupportedConfigurations(inputs, 'made up');
    expect(sizing.rows.map((row) => row.configuration)).toEqual(SUPPORTED_CONFIGURATIONS);
    expect(sizing.rows[0].configuration).toEqual(serverlessStandard);
    expect(formatDeploymentSizing(sizing)).toMatch(
      /^serverless\s+Standard\s+250\s+495\s+1\s+250\s+25\s+store$/m,
    );
  });
});

describe("reading the Bicep's deployment", () => {
  const main = [
    "param serviceBusSku string = 'Standard'",
    'param serviceBusPremiumCapacity int = 1',
    'param privateNetworking bool = false',
    "param cosmosCapacityMode string = 'serverless'",
    'param cosmosAutoscaleMaxThroughput int = 1000',
    'param maximumInstanceCount int = 1',
    'param convoyAlwaysReadyInstances int = 0',
  ].join('\n');

  it('takes the defaults, overlaid by the parameter file with every environment variable unset', () => {
    expect(bicepDeployment(main, '')).toEqual({
      maximumInstanceCount: 1,
      convoyAlwaysReadyInstances: 0,
      configuration: serverlessStandard,
    });
    const overrides = [
      "param serviceBusSku = readEnvironmentVariable('SERVICE_BUS_SKU', 'Premium')",
      "param cosmosCapacityMode = 'provisioned' // autoscale",
      'param cosmosAutoscaleMaxThroughput = 4000',
      'param maximumInstanceCount = 3',
    ].join('\n');
    expect(bicepDeployment(main, overrides)).toEqual({
      maximumInstanceCount: 3,
      convoyAlwaysReadyInstances: 0,
      configuration: {
        cosmos: { mode: 'provisioned', autoscaleMaxThroughput: 4000 },
        serviceBus: { sku: 'Premium', messagingUnits: 1 },
      },
    });
  });

  it('deploys Premium under private networking whatever the tier says, and refuses what it cannot read', () => {
    expect(
      bicepDeployment(main.replace('privateNetworking bool = false', 'privateNetworking bool = true'), '')
        .configuration.serviceBus,
    ).toEqual({ sku: 'Premium', messagingUnits: 1 });
    expect(() =>
      bicepDeployment(main.replace('maximumInstanceCount int = 1', 'maximumInstanceCount int = x'), ''),
    ).toThrow(/maximumInstanceCount/);
  });
});
