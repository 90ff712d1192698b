#!/usr/bin/env node
/**
 * `npm run smoke`, after `azd up`: sends samples/ledger.ndjson to the deployed `ledger` queue with
 * `npm run ops -- send`, then reads the sample's orders over the deployed HTTP API
 * (`GET https://<functionAppHostName>/api/orders/{orderId}`, function key) until each ends as the
 * sample ends with the deployed catalog (`inventoryCatalog` in bicep/main.bicepparam), or the wait
 * runs out. It prints each check with PASS or FAIL and exits 0 when all pass, 1 when one fails, 2 when
 * it cannot run (a missing azd value, a bad flag).
 *
 * It needs the azd environment (scripts/azd-env.js), your Azure login with Azure Service Bus Data
 * Sender on `ledger` (azd grants the deploying user the app's data roles), and the function key:
 * FUNCTION_KEY, or `az functionapp keys list` on AZURE_RESOURCE_GROUP and functionAppName (the Azure
 * CLI signed in with a management role on the app). Sending the sample again is safe: its messageIds
 * and transactionIds are those of the first time, and the orders stay as they ended.
 *
 * Tested without Azure: tests/unit/smoke-test.test.ts runs `runSmoke` on fakes (the values, the send,
 * the key, the HTTP answers, the clock) and tests/ops/smoke-embedded.test.ts runs it against the
 * embedded app fed by `ops send`, with the deployed catalog. The thin I/O at the end of this file
 * (spawning azd, az and the ops CLI, fetch, the real clock) runs only against a deployment.
 */
'use strict';
const { join } = require('node:path');
const { parseArgs } = require('node:util');
const { azdValues, EnvironmentError, missing, runTool } = require('./azd-env.js');

const ROOT = join(__dirname, '..');
const SAMPLE = join('samples', 'ledger.ndjson');

/**
 * How each order of the sample ends on a deployment: its catalog has SKU-1 and SKU-2 only, so an order
 * of SKU-3, SKU-4 or SKU-9 compensates at reserveInventory (README, "What the sample shows").
 */
const EXPECTED = [
  { orderId: 'O-17', status: 'submitted', total: 4749, saga: 'completed' },
  { orderId: 'O-18', status: 'submitted', total: 7748, saga: 'compensated' },
  { orderId: 'O-19', status: 'submitted', total: 2249, saga: 'completed' },
  { orderId: 'O-20', status: 'deleted', total: 12500, saga: null },
  { orderId: 'O-21', status: 'submitted', total: 500, saga: 'compensated' },
  { orderId: 'O-22', status: 'submitted', total: 120000, saga: 'compensated' },
  { orderId: 'O-24', status: 'pending', total: 0, saga: null },
  { orderId: 'O-25', status: 'pending', total: 0, saga: null },
  { orderId: 'O-26', status: 'submitted', total: 3000, saga: 'completed' },
  { orderId: 'O-27', status: 'submitted', total: 700, saga: 'compensated' },
];

/** The azd values the smoke test reads; the resource group only when it must fetch the key itself. */
const NEEDED = ['serviceBusFullyQualifiedNamespace', 'functionAppHostName'];
const FOR_KEY = ['AZURE_RESOURCE_GROUP', 'functionAppName'];

const DEFAULT_WAIT_SECONDS = 180;
const POLL_INTERVAL_MS = 10_000;

const USAGE = `usage: npm run smoke [-- --wait SECONDS]

After azd up: sends samples/ledger.ndjson to the deployed ledger queue (npm run ops -- send), then
checks the sample's orders over the HTTP API until each ends as expected or the wait runs out.

  --wait SECONDS  how long to wait for the orders (default: ${DEFAULT_WAIT_SECONDS})
  -h, --help      print this help and exit

Needs: the azd environment (azd env get-values), your az login, and FUNCTION_KEY or the Azure CLI to
read the function key. Exit codes: 0 every check passed, 1 one failed, 2 it could not run.`;

class UsageError extends Error {}

function parseSmokeArgs(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { wait: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    });
  } catch (error) {
    throw new UsageError(`${error.message.split('\n')[0]} (npm run smoke -- --help)`);
  }
  if (parsed.values.help) return { help: true };
  const raw = parsed.values.wait;
  if (raw === undefined) return { help: false, waitMs: DEFAULT_WAIT_SECONDS * 1000 };
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 3600) {
    throw new UsageError(
      `--wait must be a whole number of seconds from 1 to 3600, got ${JSON.stringify(raw)}`,
    );
  }
  return { help: false, waitMs: Number(raw) * 1000 };
}

/** What the smoke test talks to, from the azd values; an EnvironmentError naming what is missing. */
function smokeConfig(values, functionKey) {
  const needed = functionKey ? NEEDED : [...NEEDED, ...FOR_KEY];
  const lacking = missing(values, needed);
  if (lacking.length > 0) {
    throw new EnvironmentError(
      `the azd environment has no ${lacking.join(', ')}: run azd up first` +
        (functionKey ? '' : ' (or set FUNCTION_KEY to skip reading the key with az)'),
    );
  }
  return {
    namespace: values.serviceBusFullyQualifiedNamespace,
    hostName: values.functionAppHostName,
    appName: values.functionAppName,
    resourceGroup: values.AZURE_RESOURCE_GROUP,
  };
}

const describeOrder = (order) =>
  `${order.status}, total ${order.total}, saga ${order.saga === null ? 'none' : order.saga}`;

/**
 * One order's check against its HTTP answer `{ status, body }`: `{ pass, line, final }`, `final` when
 * waiting cannot change the answer (the key refused, a bad request).
 */
function checkOrder(expected, answer) {
  const name = `order ${expected.orderId}`;
  if (answer.status === 401 || answer.status === 403) {
    return { pass: false, final: true, line: `${name}: HTTP ${answer.status}, the function key was refused` };
  }
  if (answer.status === 404) {
    return { pass: false, final: false, line: `${name}: not there yet (HTTP 404)` };
  }
  if (answer.status !== 200 || typeof answer.body !== 'object' || answer.body === null) {
    return { pass: false, final: answer.status === 400, line: `${name}: HTTP ${answer.status}` };
  }
  const body = answer.body;
  const got = {
    status: body.status,
    total: body.total,
    saga: body.saga === null || body.saga === undefined ? null : body.saga.status,
  };
  const pass = got.status === expected.status && got.total === expected.total && got.saga === expected.saga;
  return {
    pass,
    final: false,
    line: pass
      ? `${name}: ${describeOrder(expected)}`
      : `${name}: expected ${describeOrder(expected)}, got ${describeOrder(got)}`,
  };
}

/**
 * The whole smoke test on its ports: `send()` (the ops CLI), `functionKey(config)`, `getOrder(config,
 * key, orderId)` → `{ status, body }`, `now()`, `sleep(ms)`, `print(line)`. The wait is bounded:
 * the orders are read at most once an interval until `waitMs` has passed, then once more.
 */
async function runSmoke(deps) {
  const { values, print, now, sleep } = deps;
  const waitMs = deps.waitMs ?? DEFAULT_WAIT_SECONDS * 1000;
  const intervalMs = deps.intervalMs ?? POLL_INTERVAL_MS;
  const config = smokeConfig(values, deps.presetKey);

  let sent;
  try {
    sent = await deps.send(config);
  } catch (error) {
    print(`FAIL send ${SAMPLE}: ${error.message}`);
    return 1;
  }
  print(`PASS send ${SAMPLE}: ${sent.sent} ledger messages (${sent.entries} entries) to ledger`);

  let key = deps.presetKey;
  if (!key) {
    try {
      key = await deps.functionKey(config);
    } catch (error) {
      print(`FAIL function key: ${error.message}`);
      return 1;
    }
  }

  const started = now();
  const deadline = started + waitMs;
  let results;
  for (;;) {
    results = await Promise.all(
      EXPECTED.map((expected) =>
        deps.getOrder(config, key, expected.orderId).then(
          (answer) => checkOrder(expected, answer),
          (error) => ({ pass: false, final: false, line: `order ${expected.orderId}: ${error.message}` }),
        ),
      ),
    );
    if (results.every((result) => result.pass) || results.some((result) => result.final)) break;
    const left = deadline - now();
    if (left <= 0) break;
    await sleep(Math.min(intervalMs, left));
  }
  for (const result of results) print(`${result.pass ? 'PASS' : 'FAIL'} ${result.line}`);
  const passed = results.filter((result) => result.pass).length;
  const seconds = Math.round((now() - started) / 1000);
  print(`${passed} of ${results.length} orders as expected after ${seconds} s`);
  return passed === results.length ? 0 : 1;
}

// --- The thin I/O, run only against a deployment.

function sendWithOpsCli(config) {
  const { spawnSync } = require('node:child_process');
  const result = spawnSync(
    process.execPath,
    [join(ROOT, 'dist', 'tools', 'ops', 'ops.js'), 'send', SAMPLE, '--json'],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, ServiceBusConnection__fullyQualifiedNamespace: config.namespace },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  if (result.status !== 0) throw new Error(`npm run ops -- send exited ${result.status ?? result.signal}`);
  return JSON.parse(result.stdout);
}

function functionKeyWithAz(config) {
  const args = ['functionapp', 'keys', 'list', '-g', config.resourceGroup, '-n', config.appName];
  const result = runTool('az', [...args, '--query', 'functionKeys.default', '-o', 'tsv']);
  const key = result.stdout.trim();
  if (result.status !== 0 || key === '') {
    const said = result.stderr.trim().split('\n').filter(Boolean).pop() ?? `exit ${result.status}`;
    throw new Error(`az ${args.join(' ')}: ${said} (or set FUNCTION_KEY)`);
  }
  return key;
}

async function getOrderOverHttps(config, key, orderId) {
  const response = await globalThis.fetch(
    `https://${config.hostName}/api/orders/${encodeURIComponent(orderId)}`,
    {
      headers: { 'x-functions-key': key },
      signal: globalThis.AbortSignal.timeout(30_000),
    },
  );
  const text = await response.text();
  let body = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: kept as text; the check reports the status.
  }
  return { status: response.status, body };
}

async function main(argv) {
  let options;
  try {
    options = parseSmokeArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const presetKey = process.env.FUNCTION_KEY?.trim() || undefined;
  try {
    const values = azdValues(presetKey ? NEEDED : [...NEEDED, ...FOR_KEY]);
    return await runSmoke({
      values,
      presetKey,
      waitMs: options.waitMs,
      send: sendWithOpsCli,
      functionKey: functionKeyWithAz,
      getOrder: getOrderOverHttps,
      now: Date.now,
      sleep: (ms) => require('node:timers/promises').setTimeout(ms),
      print: (line) => process.stdout.write(`${line}\n`),
    });
  } catch (error) {
    if (!(error instanceof EnvironmentError)) throw error;
    process.stderr.write(`smoke: ${error.message}\n`);
    return 2;
  }
}

module.exports = {
  EXPECTED,
  NEEDED,
  FOR_KEY,
  USAGE,
  UsageError,
  parseSmokeArgs,
  smokeConfig,
  checkOrder,
  runSmoke,
};

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`smoke failed: ${error.message}\n`);
      process.exitCode = 1;
    },
  );
}
