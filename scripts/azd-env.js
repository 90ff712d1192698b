/**
 * The azd environment's values for the scripts that run after `azd up` (scripts/write-local-settings.js,
 * scripts/smoke-test.js, scripts/check-alert-email.js). azd keeps a Bicep output under its name as
 * the template spells it (`serviceBusFullyQualifiedNamespace`, not upper-cased: Azure/azure-dev,
 * cli/azd/pkg/infra/provisioning/deployment.go, OutputParametersFromArmOutputs), and hands a hook
 * the process environment with the azd environment's values over it (cli/azd/pkg/ext/hooks_runner.go,
 * cli/azd/pkg/exec/command_runner.go). Outside a hook the values come from
 * `azd env get-values --output json`, the environment's values as one JSON object of strings
 * (cli/azd/cmd/env.go); a variable set in the process environment wins over them.
 */
'use strict';
const { spawnSync } = require('node:child_process');

/** A problem with the environment, said in one line (exit 2). */
class EnvironmentError extends Error {}

/** The output of `azd env get-values --output json`: its string values by name. */
function parseAzdValues(text) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new EnvironmentError('azd env get-values --output json printed no JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new EnvironmentError('azd env get-values --output json printed no JSON object');
  }
  const values = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value === 'string') values[name] = value;
  }
  return values;
}

/** Runs a command line tool (azd, az) and gives its status and output; on Windows both are .cmd files. */
function runTool(command, args) {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    shell: process.platform === 'win32',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.error !== undefined) {
    const code = result.error.code === 'ENOENT' ? 'not found on PATH' : result.error.message;
    return { status: null, stdout: '', stderr: `${command}: ${code}` };
  }
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * The values of `names`: from the process environment when it has every one of them (a hook), else
 * from the azd environment with the process environment's over it. Missing names are the caller's
 * to report; azd failing (not installed, no environment) is an EnvironmentError.
 */
function azdValues(names, env = process.env, run = runTool) {
  const present = (value) => typeof value === 'string' && value.trim() !== '';
  if (names.every((name) => present(env[name])))
    return Object.fromEntries(names.map((name) => [name, env[name]]));
  const result = run('azd', ['env', 'get-values', '--output', 'json']);
  if (result.status !== 0) {
    const said = (result.stderr || result.stdout).trim().split('\n').filter(Boolean).pop() ?? '';
    throw new EnvironmentError(
      `cannot read the azd environment (azd env get-values: ${said || `exit ${result.status}`}); ` +
        `run this in the azd project after azd up, or set ${names.join(', ')} in the environment`,
    );
  }
  const values = parseAzdValues(result.stdout);
  for (const name of names) if (present(env[name])) values[name] = env[name];
  return values;
}

/** The names of `names` that `values` lacks or holds empty. */
function missing(values, names) {
  return names.filter((name) => typeof values[name] !== 'string' || values[name].trim() === '');
}

module.exports = { EnvironmentError, parseAzdValues, runTool, azdValues, missing };
