#!/usr/bin/env node
/**
 * azd's postprovision hook (azure.yaml): writes `local.settings.json` for `func start` against the
 * resources just provisioned. It starts from local.settings.sample.json, or from the
 * local.settings.json already there, whose every other value it keeps; only the resource settings
 * below take the provisioned values. Host storage stays Azurite's (`UseDevelopmentStorage=true`)
 * unless the file already points it elsewhere. Nothing secret is written: the app signs in with the
 * developer's own login (docs/deploy.md, "Running locally against the Azure resources").
 * Run it again by hand with `node scripts/write-local-settings.js`.
 */
'use strict';
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { azdValues, EnvironmentError, missing } = require('./azd-env.js');

/** The app setting each provisioned value goes to: azd environment name → setting. */
const PROVISIONED = {
  serviceBusFullyQualifiedNamespace: 'ServiceBusConnection__fullyQualifiedNamespace',
  cosmosEndpoint: 'CosmosDb__accountEndpoint',
  cosmosDatabaseName: 'CosmosDb__databaseName',
};

class SettingsError extends Error {}

/**
 * The settings file to write: `existing` (or `sample` when there is none) with the sample's values it
 * lacks and the provisioned ones over it. A file that sets host storage by identity
 * (`AzureWebJobsStorage__accountName`, ...) gets no `AzureWebJobsStorage` connection string besides.
 */
function localSettings(sample, existing, values) {
  if (existing !== undefined) {
    if (typeof existing !== 'object' || existing === null || Array.isArray(existing)) {
      throw new SettingsError(
        'local.settings.json is not a JSON object; fix or move it, then run this again',
      );
    }
    if (existing.IsEncrypted === true) {
      throw new SettingsError(
        'local.settings.json is encrypted (IsEncrypted: true); decrypt it (func settings decrypt), then run this again',
      );
    }
  }
  const own = existing?.Values ?? {};
  const sampleValues = { ...sample.Values };
  if (Object.keys(own).some((name) => name.startsWith('AzureWebJobsStorage__')))
    delete sampleValues.AzureWebJobsStorage;
  const provisioned = {};
  for (const [output, setting] of Object.entries(PROVISIONED)) provisioned[setting] = values[output];
  return {
    ...sample,
    ...existing,
    IsEncrypted: false,
    Values: { ...sampleValues, ...own, ...provisioned },
  };
}

function readJson(path, what) {
  try {
    return JSON.parse(readFileSync(path, 'utf8').replace(/^\ufeff/, ''));
  } catch (error) {
    throw new SettingsError(
      `cannot read ${what}: ${error.code ?? error.message}; fix or move it, then run this again`,
    );
  }
}

/** Writes `root`/local.settings.json; returns the line it prints. */
function writeLocalSettings(root, env = process.env, run) {
  const names = Object.keys(PROVISIONED);
  const values = azdValues(names, env, run);
  const lacking = missing(values, names);
  if (lacking.length > 0) {
    throw new EnvironmentError(
      `the azd environment has no ${lacking.join(', ')}: provision first (azd provision)`,
    );
  }
  const target = join(root, 'local.settings.json');
  const existed = existsSync(target);
  const existing = existed ? readJson(target, 'local.settings.json') : undefined;
  const sample = readJson(join(root, 'local.settings.sample.json'), 'local.settings.sample.json');
  writeFileSync(target, `${JSON.stringify(localSettings(sample, existing, values), null, 2)}\n`);
  return (
    `local.settings.json: ${Object.values(PROVISIONED).join(', ')} set from the azd environment` +
    (existed ? ', its other values kept' : ', the rest from local.settings.sample.json')
  );
}

module.exports = { PROVISIONED, SettingsError, localSettings, writeLocalSettings };

if (require.main === module) {
  try {
    process.stdout.write(`${writeLocalSettings(join(__dirname, '..'))}\n`);
  } catch (error) {
    if (!(error instanceof EnvironmentError || error instanceof SettingsError)) throw error;
    process.stderr.write(`write-local-settings: ${error.message}\n`);
    process.exitCode = 2;
  }
}
