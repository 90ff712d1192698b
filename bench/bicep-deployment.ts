/**
 * What the Bicep deploys when nothing is overridden: bicep/main.bicep's parameter defaults, overlaid
 * by bicep/main.bicepparam's values with every environment variable unset (a
 * `readEnvironmentVariable('NAME', 'fallback')` is its fallback). Only literal values are read; a
 * parameter whose value is an expression keeps the other file's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DeploymentConfiguration } from './deployment-sizing';
import { repositoryRoot } from './repo-root';

export interface BicepDeployment {
  maximumInstanceCount: number;
  convoyAlwaysReadyInstances: number;
  configuration: DeploymentConfiguration;
}

type Literal = string | number | boolean;

function literal(text: string): Literal | undefined {
  const value = text.replace(/\s+\/\/.*$/, '').trim();
  if (/^-?\d+$/.test(value)) return Number(value);
  if (value === 'true' || value === 'false') return value === 'true';
  const quoted = /^'([^'$]*)'$/.exec(value);
  if (quoted !== null) return quoted[1];
  const fromEnvironment = /^readEnvironmentVariable\(\s*'[^']*'\s*,\s*('[^'$]*'|-?\d+|true|false)\s*\)$/.exec(
    value,
  );
  return fromEnvironment === null ? undefined : literal(fromEnvironment[1]);
}

/** `param NAME TYPE = VALUE` of a .bicep file, literal values only. */
export function bicepParameterDefaults(bicep: string): Map<string, Literal> {
  const defaults = new Map<string, Literal>();
  for (const match of bicep.matchAll(/^param\s+(\w+)\s+\w+\s*=\s*(.+)$/gm)) {
    const value = literal(match[2]);
    if (value !== undefined) defaults.set(match[1], value);
  }
  return defaults;
}

/** `param NAME = VALUE` of a .bicepparam file, literal values (and environment fallbacks) only. */
export function bicepParameterValues(bicepparam: string): Map<string, Literal> {
  const values = new Map<string, Literal>();
  for (const match of bicepparam.matchAll(/^param\s+(\w+)\s*=\s*(.+)$/gm)) {
    const value = literal(match[2]);
    if (value !== undefined) values.set(match[1], value);
  }
  return values;
}

export function bicepDeployment(mainBicep: string, bicepparam: string): BicepDeployment {
  const parameters = new Map([...bicepParameterDefaults(mainBicep), ...bicepParameterValues(bicepparam)]);
  const number = (name: string): number => {
    const value = parameters.get(name);
    if (typeof value !== 'number') throw new Error(`the Bicep gives ${name} no literal number`);
    return value;
  };
  const text = (name: string): string => {
    const value = parameters.get(name);
    if (typeof value !== 'string') throw new Error(`the Bicep gives ${name} no literal string`);
    return value;
  };
  // main.bicep: private networking deploys Premium whatever serviceBusSku says.
  const premium = parameters.get('privateNetworking') === true || text('serviceBusSku') === 'Premium';
  const mode = text('cosmosCapacityMode');
  return {
    maximumInstanceCount: number('maximumInstanceCount'),
    convoyAlwaysReadyInstances: number('convoyAlwaysReadyInstances'),
    configuration: {
      cosmos:
        mode === 'serverless'
          ? { mode: 'serverless' }
          : { mode: 'provisioned', autoscaleMaxThroughput: number('cosmosAutoscaleMaxThroughput') },
      serviceBus: premium
        ? { sku: 'Premium', messagingUnits: number('serviceBusPremiumCapacity') }
        : { sku: 'Standard' },
    },
  };
}

export function readBicepDeployment(root: string = repositoryRoot()): BicepDeployment {
  return bicepDeployment(
    readFileSync(join(root, 'bicep', 'main.bicep'), 'utf8'),
    readFileSync(join(root, 'bicep', 'main.bicepparam'), 'utf8'),
  );
}
