/**
 * A deployment sized to its ceilings: how many entries a second each supported configuration of the
 * Bicep (bicep/main.bicep: Cosmos DB capacity mode and throughput, Service Bus tier) carries, and so
 * how many instances of the convoy's consumer the scaler may be allowed (`maximumInstanceCount`)
 * before they ask more of the store or the namespace than it has. From the model's rate of one
 * instance (./azure-settings, host.json's settings at Azure's round trips) and the estimated request
 * units of an entry (./request-units, measured by the order-length run's store meter).
 *
 * The ceilings, from Microsoft Learn:
 * - Cosmos DB serverless: 5,000 RU/s per container up to 250 GB ("Azure Cosmos DB serverless account
 *   performance", https://learn.microsoft.com/azure/cosmos-db/serverless-performance); provisioned
 *   autoscale: its maximum RU/s (the Bicep's `cosmosAutoscaleMaxThroughput`, on each container). The
 *   convoy's writes all go to the `orders` container.
 * - Service Bus Standard: credit-based throttling, 1,000 credits a second per namespace; a data
 *   operation (Send, Receive, Peek) costs 1 credit per message, a management operation 10 ("Throttling
 *   operations on Azure Service Bus", https://learn.microsoft.com/azure/service-bus-messaging/service-bus-throttling).
 *   Premium has no published rate: its messaging units are dedicated, and Microsoft's advice is to add
 *   units when their CPU passes 70 % ("Service Bus Premium and Standard messaging tiers",
 *   https://learn.microsoft.com/azure/service-bus-messaging/service-bus-premium-messaging).
 * - Flex Consumption: the lowest maximum instance count is 1, the highest 1,000; it caps the on-demand
 *   instances of each per-function scale group (each Service Bus function scales on its own), and
 *   always-ready instances come on top of it ("Event-driven scaling in Azure Functions", Limit
 *   scale-out, https://learn.microsoft.com/azure/azure-functions/event-driven-scaling#limit-scale-out).
 */
import { textTable } from '../tools/cli/text-table';
import type { BenchTarget } from './results';
import type { BicepDeployment } from './bicep-deployment';

export const COSMOS_SERVERLESS_RU_PER_SECOND = 5000;
export const SERVICE_BUS_STANDARD_CREDITS_PER_SECOND = 1000;
export const FLEX_MIN_MAXIMUM_INSTANCE_COUNT = 1;
export const FLEX_MAX_MAXIMUM_INSTANCE_COUNT = 1000;

export type CosmosCapacity = { mode: 'serverless' } | { mode: 'provisioned'; autoscaleMaxThroughput: number };
export type ServiceBusTier = { sku: 'Standard' } | { sku: 'Premium'; messagingUnits: number };

export interface DeploymentConfiguration {
  cosmos: CosmosCapacity;
  serviceBus: ServiceBusTier;
}

/** What the store gives the convoy's container a second, in RU. */
export function storeRequestUnitsPerSecond(cosmos: CosmosCapacity): number {
  return cosmos.mode === 'serverless' ? COSMOS_SERVERLESS_RU_PER_SECOND : cosmos.autoscaleMaxThroughput;
}

/** Credits a second of the namespace; null where Microsoft publishes no rate (Premium). */
export function namespaceCreditsPerSecond(serviceBus: ServiceBusTier): number | null {
  return serviceBus.sku === 'Standard' ? SERVICE_BUS_STANDARD_CREDITS_PER_SECOND : null;
}

/**
 * Service Bus credits one entry costs, as the throttling page counts them (1 per message sent or
 * received): its send to `order-transactions` by the ledger processor and its receive by the
 * consumer, plus its share of its ledger message's send and receive. Completions and session
 * accepts are not in the page's table, so they are not counted.
 */
export function serviceBusCreditsPerEntry(entriesPerLedgerMessage: number): number {
  if (!(entriesPerLedgerMessage >= 1)) throw new RangeError('a ledger message carries at least one entry');
  return 2 + 2 / entriesPerLedgerMessage;
}

export interface SizingInputs {
  /** One instance's rate, by the session model: an upper bound. */
  instanceEntriesPerSecond: number;
  /** The store meter's estimate (./request-units) for an entry of an order of `entriesPerOrder`. */
  requestUnitsPerEntry: number;
  entriesPerLedgerMessage: number;
  entriesPerOrder: number;
}

export type Ceiling = 'store' | 'namespace' | 'instances';

export interface Sizing {
  configuration: DeploymentConfiguration;
  storeRequestUnitsPerSecond: number;
  storeEntriesPerSecond: number;
  /** null: no published rate (Premium). */
  namespaceEntriesPerSecond: number | null;
  instanceEntriesPerSecond: number;
  /**
   * The most instances of the consumer whose rates stay within the store's and the namespace's,
   * never under the plan's lowest maximum (1): where one instance already asks for more, 1.
   */
  maxInstances: number;
  /** What the configuration carries at that many instances, entries and orders a second. */
  entriesPerSecond: number;
  ordersPerSecond: number;
  /** What stops it: the store, the namespace, or the instances (the plan's highest maximum). */
  topsOut: Ceiling;
}

export function sizeDeployment(configuration: DeploymentConfiguration, inputs: SizingInputs): Sizing {
  const { instanceEntriesPerSecond, requestUnitsPerEntry } = inputs;
  if (!(instanceEntriesPerSecond > 0) || !(requestUnitsPerEntry > 0)) {
    throw new RangeError('sizing needs a positive rate per instance and a positive charge per entry');
  }
  const storeRu = storeRequestUnitsPerSecond(configuration.cosmos);
  const storeEntriesPerSecond = storeRu / requestUnitsPerEntry;
  const credits = namespaceCreditsPerSecond(configuration.serviceBus);
  const namespaceEntriesPerSecond =
    credits === null ? null : credits / serviceBusCreditsPerEntry(inputs.entriesPerLedgerMessage);
  const ceiling = Math.min(storeEntriesPerSecond, namespaceEntriesPerSecond ?? Infinity);
  const maxInstances = Math.min(
    FLEX_MAX_MAXIMUM_INSTANCE_COUNT,
    Math.max(FLEX_MIN_MAXIMUM_INSTANCE_COUNT, Math.floor(ceiling / instanceEntriesPerSecond)),
  );
  const entriesPerSecond = Math.min(ceiling, maxInstances * instanceEntriesPerSecond);
  const topsOut: Ceiling =
    maxInstances * instanceEntriesPerSecond < ceiling
      ? 'instances'
      : storeEntriesPerSecond <= (namespaceEntriesPerSecond ?? Infinity)
        ? 'store'
        : 'namespace';
  return {
    configuration,
    storeRequestUnitsPerSecond: storeRu,
    storeEntriesPerSecond,
    namespaceEntriesPerSecond,
    instanceEntriesPerSecond,
    maxInstances,
    entriesPerSecond,
    ordersPerSecond: entriesPerSecond / inputs.entriesPerOrder,
    topsOut,
  };
}

/** The Bicep's default: serverless Cosmos DB, Standard Service Bus (bicep/main.bicep, main.bicepparam). */
export const DEFAULT_CONFIGURATION: DeploymentConfiguration = {
  cosmos: { mode: 'serverless' },
  serviceBus: { sku: 'Standard' },
};

/** The configurations the table lists: the default first, then the tiers and throughputs one would move to. */
export const SUPPORTED_CONFIGURATIONS: readonly DeploymentConfiguration[] = [
  DEFAULT_CONFIGURATION,
  { cosmos: { mode: 'serverless' }, serviceBus: { sku: 'Premium', messagingUnits: 1 } },
  { cosmos: { mode: 'provisioned', autoscaleMaxThroughput: 1000 }, serviceBus: { sku: 'Standard' } },
  { cosmos: { mode: 'provisioned', autoscaleMaxThroughput: 10_000 }, serviceBus: { sku: 'Standard' } },
  {
    cosmos: { mode: 'provisioned', autoscaleMaxThroughput: 10_000 },
    serviceBus: { sku: 'Premium', messagingUnits: 1 },
  },
  {
    cosmos: { mode: 'provisioned', autoscaleMaxThroughput: 50_000 },
    serviceBus: { sku: 'Premium', messagingUnits: 1 },
  },
  {
    cosmos: { mode: 'provisioned', autoscaleMaxThroughput: 100_000 },
    serviceBus: { sku: 'Premium', messagingUnits: 2 },
  },
];

export function describeCosmos(cosmos: CosmosCapacity): string {
  return cosmos.mode === 'serverless'
    ? 'serverless'
    : `autoscale ${cosmos.autoscaleMaxThroughput.toLocaleString('en-US')} RU/s`;
}

export function describeServiceBus(serviceBus: ServiceBusTier): string {
  return serviceBus.sku === 'Standard' ? 'Standard' : `Premium ${serviceBus.messagingUnits} MU`;
}

export interface DeploymentSizing {
  inputs: SizingInputs;
  /** The model's settings the instance rate is of (host.json). */
  instanceSettings: string;
  rows: Sizing[];
}

export function sizeSupportedConfigurations(
  inputs: SizingInputs,
  instanceSettings: string,
): DeploymentSizing {
  return {
    inputs,
    instanceSettings,
    rows: SUPPORTED_CONFIGURATIONS.map((configuration) => sizeDeployment(configuration, inputs)),
  };
}

export function formatDeploymentSizing(sizing: DeploymentSizing): string {
  const { inputs } = sizing;
  const round = (value: number): string => Math.round(value).toLocaleString('en-US');
  const header = [
    'Cosmos DB',
    'Service Bus',
    'store entries/s',
    'namespace entries/s',
    'max instances',
    'entries/s',
    'orders/s',
    'tops out at',
  ];
  const body = sizing.rows.map((row) => [
    describeCosmos(row.configuration.cosmos),
    describeServiceBus(row.configuration.serviceBus),
    round(row.storeEntriesPerSecond),
    row.namespaceEntriesPerSecond === null ? '-' : round(row.namespaceEntriesPerSecond),
    String(row.maxInstances),
    round(row.entriesPerSecond),
    round(row.ordersPerSecond),
    row.topsOut,
  ]);
  return [
    `deployment ceilings: one instance ${round(inputs.instanceEntriesPerSecond)} entries/s (${sizing.instanceSettings}, session model at Azure's round trips);`,
    `${inputs.requestUnitsPerEntry.toFixed(2)} RU per entry (orders of ${inputs.entriesPerOrder}, store meter); ` +
      `${serviceBusCreditsPerEntry(inputs.entriesPerLedgerMessage).toFixed(2)} Service Bus credits per entry (ledger messages of ${inputs.entriesPerLedgerMessage})`,
    '',
    textTable([header, ...body], Number.POSITIVE_INFINITY, (column) => (column <= 1 ? 'left' : 'right')),
    '',
    'store entries/s: RU/s of the orders container / RU per entry. namespace entries/s: Standard 1,000 credits/s / credits',
    'per entry; Premium publishes no rate (-). max instances: instances of the consumer whose model rate stays within',
    'both, at least 1. entries/s, orders/s: what that many instances carry; tops out at: the ceiling that binds.',
  ].join('\n');
}

/**
 * What is wrong with a deployment's sizing: its instances of the consumer (the maximum instance
 * count, plus the always-ready ones, which come on top) against the most its store and namespace
 * carry. Empty when it fits.
 */
export function deploymentProblems(deployment: BicepDeployment, inputs: SizingInputs): string[] {
  const sizing = sizeDeployment(deployment.configuration, inputs);
  const instances = deployment.maximumInstanceCount + deployment.convoyAlwaysReadyInstances;
  if (instances <= sizing.maxInstances) return [];
  return [
    `maximumInstanceCount ${deployment.maximumInstanceCount} + convoyAlwaysReadyInstances ${deployment.convoyAlwaysReadyInstances} ` +
      `is over the ${sizing.maxInstances} instance(s) that ${describeCosmos(deployment.configuration.cosmos)} Cosmos DB and ` +
      `${describeServiceBus(deployment.configuration.serviceBus)} Service Bus carry ` +
      `(${Math.round(sizing.entriesPerSecond)} entries/s, topped by the ${sizing.topsOut}; one instance ${Math.round(inputs.instanceEntriesPerSecond)})`,
  ];
}

/** The Bicep's default deployment asks no more of the store and the namespace than they carry. */
export function deploymentSizingTargets(
  sizing: DeploymentSizing | null,
  deployment: BicepDeployment | null,
): BenchTarget[] {
  if (sizing === null || deployment === null) return [];
  const problems = deploymentProblems(deployment, sizing.inputs);
  const row = sizeDeployment(deployment.configuration, sizing.inputs);
  return [
    {
      target:
        "deployment: the Bicep's maximum instance count, plus always-ready instances, within what its store and namespace carry",
      pass: problems.length === 0,
      detail:
        problems[0] ??
        `${deployment.maximumInstanceCount} + ${deployment.convoyAlwaysReadyInstances} always ready, at most ${row.maxInstances} ` +
          `(${describeCosmos(deployment.configuration.cosmos)}, ${describeServiceBus(deployment.configuration.serviceBus)}: ` +
          `${Math.round(row.entriesPerSecond)} entries/s, topped by the ${row.topsOut})`,
    },
  ];
}
