/**
 * The Bicep's maximum instance count, Cosmos DB throughput and Service Bus tier agree with each
 * other as docs/performance.md documents them: the instances the scaler may ask for (the maximum
 * instance count plus the convoy's always-ready instances) carry no more than the store and the
 * namespace do, by the session model's rate per instance (host.json's settings at Azure's round
 * trips) and the store meter's request units per entry, and the document's table of ceilings is
 * what those give. The second half feeds the checks edited copies and proves each one fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DEFAULTS } from '../../bench/results';
import { compareHostSettings } from '../../bench/azure-settings';
import { bicepDeployment, type BicepDeployment } from '../../bench/bicep-deployment';
import {
  deploymentProblems,
  describeCosmos,
  describeServiceBus,
  sizeSupportedConfigurations,
  type DeploymentSizing,
  type SizingInputs,
} from '../../bench/deployment-sizing';
import { ORDER_LENGTH_SIZING_ENTRIES_PER_ORDER, runOrderLengthRow } from '../../bench/order-length';

const ROOT = join(__dirname, '..', '..');
const MAIN = readFileSync(join(ROOT, 'bicep', 'main.bicep'), 'utf8');
const PARAMETERS = readFileSync(join(ROOT, 'bicep', 'main.bicepparam'), 'utf8');
const PERFORMANCE = readFileSync(join(ROOT, 'docs', 'performance.md'), 'utf8');

interface DocumentedRow {
  cosmos: string;
  serviceBus: string;
  maxInstances: number;
  topsOut: string;
}

/** The rows of the ceilings table: `| Cosmos DB | Service Bus | ... | max instances | ... | tops out at |`. */
function documentedCeilings(markdown: string): DocumentedRow[] {
  const start = markdown.indexOf('| Cosmos DB | Service Bus |');
  if (start === -1) return [];
  const lines = markdown.slice(start).split('\n');
  const header = lines[0].split('|').map((cell) => cell.trim());
  const column = (name: string): number => header.indexOf(name);
  const rows: DocumentedRow[] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').map((cell) => cell.trim().replace(/\*\*/g, ''));
    rows.push({
      cosmos: cells[column('Cosmos DB')],
      serviceBus: cells[column('Service Bus')],
      maxInstances: Number(cells[column('max instances')]),
      topsOut: cells[column('tops out at')],
    });
  }
  return rows;
}

/** Each documented row against the computed one: the same configurations, instance counts and ceilings. */
function checkDocumentedCeilings(documented: readonly DocumentedRow[], sizing: DeploymentSizing): string[] {
  const problems: string[] = [];
  const computed = sizing.rows.map((row) => ({
    cosmos: describeCosmos(row.configuration.cosmos),
    serviceBus: describeServiceBus(row.configuration.serviceBus),
    maxInstances: row.maxInstances,
    topsOut: row.topsOut,
  }));
  for (const row of computed) {
    const found = documented.find((doc) => doc.cosmos === row.cosmos && doc.serviceBus === row.serviceBus);
    if (found === undefined)
      problems.push(`docs/performance.md lists no row for ${row.cosmos}, ${row.serviceBus}`);
    else if (found.maxInstances !== row.maxInstances || found.topsOut !== row.topsOut) {
      problems.push(
        `docs/performance.md: ${row.cosmos}, ${row.serviceBus} says ${found.maxInstances} instance(s), tops out at the ` +
          `${found.topsOut}; the model says ${row.maxInstances}, the ${row.topsOut}`,
      );
    }
  }
  if (documented.length !== computed.length) {
    problems.push(
      `docs/performance.md lists ${documented.length} configurations, the bench ${computed.length}`,
    );
  }
  return problems;
}

/** The Bicep's deployment is the table's first row (the default) and its instance count is the documented one. */
function checkBicepAgainstDocument(
  deployment: BicepDeployment,
  documented: readonly DocumentedRow[],
): string[] {
  const cosmos = describeCosmos(deployment.configuration.cosmos);
  const serviceBus = describeServiceBus(deployment.configuration.serviceBus);
  const row = documented.find((doc) => doc.cosmos === cosmos && doc.serviceBus === serviceBus);
  if (row === undefined)
    return [`the Bicep deploys ${cosmos}, ${serviceBus}, which docs/performance.md does not list`];
  const instances = deployment.maximumInstanceCount + deployment.convoyAlwaysReadyInstances;
  return instances === row.maxInstances
    ? []
    : [
        `the Bicep allows ${instances} instance(s) (maximumInstanceCount ${deployment.maximumInstanceCount} + ` +
          `convoyAlwaysReadyInstances ${deployment.convoyAlwaysReadyInstances}); docs/performance.md says ${row.maxInstances} for ${cosmos}, ${serviceBus}`,
      ];
}

describe('the deployment is sized to its ceilings', () => {
  let inputs: SizingInputs;
  let sizing: DeploymentSizing;
  const deployment = bicepDeployment(MAIN, PARAMETERS);
  const documented = documentedCeilings(PERFORMANCE);

  beforeAll(async () => {
    // The store meter's estimate for the sample's 10-entry orders, as the bench measures it.
    const row = await runOrderLengthRow(
      BENCH_DEFAULTS,
      ORDER_LENGTH_SIZING_ENTRIES_PER_ORDER,
      BENCH_DEFAULTS.orderLengthEntries,
      BENCH_DEFAULTS.seed,
    );
    const { shipped } = compareHostSettings();
    inputs = {
      instanceEntriesPerSecond: shipped.entriesPerSecond,
      requestUnitsPerEntry: row.requestUnitsPerEntry,
      entriesPerLedgerMessage: BENCH_DEFAULTS.batchSize,
      entriesPerOrder: ORDER_LENGTH_SIZING_ENTRIES_PER_ORDER,
    };
    sizing = sizeSupportedConfigurations(inputs, 'host.json');
  }, 120_000);

  it("reads the Bicep's deployment: serverless Cosmos DB and Standard Service Bus unless overridden", () => {
    expect(deployment.configuration).toEqual({
      cosmos: { mode: 'serverless' },
      serviceBus: { sku: 'Standard' },
    });
  });

  it('asks no more of the store and the namespace than they carry', () => {
    expect(deploymentProblems(deployment, inputs)).toEqual([]);
  });

  it('documents every configuration with the instances and the ceiling the model and the estimate give', () => {
    expect(documented.length).toBeGreaterThan(0);
    expect(checkDocumentedCeilings(documented, sizing)).toEqual([]);
  });

  it('deploys the instance count the document gives its configuration', () => {
    expect(checkBicepAgainstDocument(deployment, documented)).toEqual([]);
  });

  describe('each check fails when one side changes', () => {
    it('a maximum instance count raised in main.bicep', () => {
      const raised = bicepDeployment(MAIN.replace(/(param maximumInstanceCount int = )\d+/, '$1100'), '');
      expect(raised.maximumInstanceCount).toBe(100);
      expect(deploymentProblems(raised, inputs)).toEqual([
        expect.stringMatching(/^maximumInstanceCount 100 /),
      ]);
      expect(checkBicepAgainstDocument(raised, documented)).toHaveLength(1);
    });

    it('always-ready instances on top of the maximum, in the parameter file', () => {
      const alwaysReady = bicepDeployment(
        MAIN,
        PARAMETERS.replace(/(param convoyAlwaysReadyInstances = )\d+/, '$11'),
      );
      expect(alwaysReady.convoyAlwaysReadyInstances).toBe(1);
      expect(deploymentProblems(alwaysReady, inputs)).toHaveLength(1);
      expect(checkBicepAgainstDocument(alwaysReady, documented)).toHaveLength(1);
    });

    it('a tier or throughput the document does not list', () => {
      const provisioned = bicepDeployment(
        MAIN.replace(
          "param cosmosCapacityMode string = 'serverless'",
          "param cosmosCapacityMode string = 'provisioned'",
        ),
        PARAMETERS.replace(
          "param cosmosCapacityMode = 'serverless'",
          "param cosmosCapacityMode = 'provisioned'",
        ).replace(/param cosmosAutoscaleMaxThroughput = \d+\n/, '') +
          '\nparam cosmosAutoscaleMaxThroughput = 7000\n',
      );
      expect(provisioned.configuration.cosmos).toEqual({ mode: 'provisioned', autoscaleMaxThroughput: 7000 });
      expect(checkBicepAgainstDocument(provisioned, documented)).toEqual([
        expect.stringMatching(
          /^the Bicep deploys autoscale 7,000 RU\/s, Standard, which docs\/performance\.md does not list$/,
        ),
      ]);
    });

    it('a documented row whose instance count or ceiling is not what the model gives', () => {
      const wrong = documented.map((row, index) =>
        index === 0 ? { ...row, maxInstances: row.maxInstances + 1 } : row,
      );
      expect(checkDocumentedCeilings(wrong, sizing)).toHaveLength(1);
      const missing = documented.slice(1);
      expect(checkDocumentedCeilings(missing, sizing)).toHaveLength(2);
      // Four times the charge per entry: what the store carries falls, and some row's instances with it.
      const dearer = sizeSupportedConfigurations(
        { ...inputs, requestUnitsPerEntry: inputs.requestUnitsPerEntry * 4 },
        '',
      );
      expect(checkDocumentedCeilings(documented, dearer).length).toBeGreaterThan(0);
    });
  });
});
