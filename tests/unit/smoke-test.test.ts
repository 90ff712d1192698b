/**
 * `npm run smoke` (scripts/smoke-test.js) on fakes: the azd values, the send, the function key, the
 * HTTP answers and a clock that moves only when the test sleeps. tests/ops/smoke-embedded.test.ts
 * checks its expectations against the app itself.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

interface Expected {
  orderId: string;
  status: string;
  total: number;
  saga: string | null;
}
interface Answer {
  status: number;
  body: unknown;
}
interface Config {
  namespace: string;
  hostName: string;
  appName: string;
  resourceGroup: string;
}
interface SmokeDeps {
  values: Record<string, string>;
  presetKey?: string;
  waitMs?: number;
  intervalMs?: number;
  send: (config: Config) => Promise<{ sent: number; entries: number }>;
  functionKey: (config: Config) => Promise<string>;
  getOrder: (config: Config, key: string, orderId: string) => Promise<Answer>;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  print: (line: string) => void;
}

const smoke = require('../../scripts/smoke-test.js') as {
  EXPECTED: Expected[];
  parseSmokeArgs: (argv: string[]) => { help: boolean; waitMs?: number };
  smokeConfig: (values: Record<string, string>, key?: string) => Config;
  checkOrder: (expected: Expected, answer: Answer) => { pass: boolean; final: boolean; line: string };
  runSmoke: (deps: SmokeDeps) => Promise<number>;
};

const VALUES = {
  AZURE_RESOURCE_GROUP: 'rg-dev',
  serviceBusFullyQualifiedNamespace: 'sb-dev.servicebus.windows.net',
  functionAppName: 'func-dev',
  functionAppHostName: 'func-dev.azurewebsites.net',
};

const orderBody = (expected: Expected, saga: string | null = expected.saga) => ({
  orderId: expected.orderId,
  status: expected.status,
  total: expected.total,
  saga: saga === null ? null : { status: saga, reason: null },
});

/** Every order as expected from the `readyAt`-th read on; 404 before. */
function world(options: { readyAt?: number; answer?: (orderId: string) => Answer } = {}) {
  let clock = 0;
  let reads = 0;
  const printed: string[] = [];
  const sleeps: number[] = [];
  const keysAsked: Config[] = [];
  const deps: SmokeDeps = {
    values: VALUES,
    send: async () => ({ sent: 9, entries: 33 }),
    functionKey: async (config) => {
      keysAsked.push(config);
      return 'the-key';
    },
    getOrder: async (_config, key, orderId) => {
      expect(key).toBe('the-key');
      if (options.answer !== undefined) return options.answer(orderId);
      const expected = smoke.EXPECTED.find((order) => order.orderId === orderId) as Expected;
      return reads >= (options.readyAt ?? 0)
        ? { status: 200, body: orderBody(expected) }
        : { status: 404, body: {} };
    },
    now: () => clock,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
      reads += 1;
    },
    print: (line) => printed.push(line),
  };
  return { deps, printed, sleeps, keysAsked };
}

describe('npm run smoke', () => {
  it('sends, then prints a PASS line for each order once all are as expected', async () => {
    const { deps, printed, sleeps, keysAsked } = world({ readyAt: 2 });
    await expect(smoke.runSmoke(deps)).resolves.toBe(0);
    expect(keysAsked).toEqual([
      {
        namespace: VALUES.serviceBusFullyQualifiedNamespace,
        hostName: VALUES.functionAppHostName,
        appName: 'func-dev',
        resourceGroup: 'rg-dev',
      },
    ]);
    expect(sleeps).toEqual([10_000, 10_000]);
    expect(printed[0]).toBe('PASS send samples/ledger.ndjson: 9 ledger messages (33 entries) to ledger');
    expect(printed).toContain('PASS order O-17: submitted, total 4749, saga completed');
    expect(printed).toContain('PASS order O-20: deleted, total 12500, saga none');
    expect(printed.filter((line) => line.startsWith('PASS order'))).toHaveLength(smoke.EXPECTED.length);
    expect(printed.at(-1)).toBe(
      `${smoke.EXPECTED.length} of ${smoke.EXPECTED.length} orders as expected after 20 s`,
    );
  });

  it('waits no longer than its bound, then fails naming what differs', async () => {
    const { deps, printed, sleeps } = world({
      answer: (orderId) => {
        const expected = smoke.EXPECTED.find((order) => order.orderId === orderId) as Expected;
        return { status: 200, body: orderBody(expected, orderId === 'O-18' ? 'running' : expected.saga) };
      },
    });
    await expect(smoke.runSmoke({ ...deps, waitMs: 25_000 })).resolves.toBe(1);
    // Read at 0, 10 and 20 s, then once more at the bound.
    expect(sleeps).toEqual([10_000, 10_000, 5_000]);
    expect(printed).toContain(
      'FAIL order O-18: expected submitted, total 7748, saga compensated, got submitted, total 7748, saga running',
    );
    expect(printed.at(-1)).toBe(
      `${smoke.EXPECTED.length - 1} of ${smoke.EXPECTED.length} orders as expected after 25 s`,
    );
  });

  it('stops at once when the key is refused, and fails when the send or the key does', async () => {
    const refused = world({ answer: () => ({ status: 401, body: '' }) });
    await expect(smoke.runSmoke(refused.deps)).resolves.toBe(1);
    expect(refused.sleeps).toEqual([]);
    expect(refused.printed).toContain('FAIL order O-17: HTTP 401, the function key was refused');

    const unsent = world();
    const sendFailed = {
      ...unsent.deps,
      send: async () => {
        throw new Error('npm run ops -- send exited 2');
      },
    };
    await expect(smoke.runSmoke(sendFailed)).resolves.toBe(1);
    expect(unsent.printed).toEqual(['FAIL send samples/ledger.ndjson: npm run ops -- send exited 2']);

    const keyless = world();
    const keyFailed = {
      ...keyless.deps,
      functionKey: async () => {
        throw new Error('az functionapp keys list ...: not found on PATH (or set FUNCTION_KEY)');
      },
    };
    await expect(smoke.runSmoke(keyFailed)).resolves.toBe(1);
    expect(keyless.printed.at(-1)).toMatch(/^FAIL function key: az functionapp keys list/);

    const preset = world();
    await expect(smoke.runSmoke({ ...preset.deps, presetKey: 'the-key' })).resolves.toBe(0);
    expect(preset.keysAsked).toEqual([]);
  });

  it('checks status, total and saga; an order not there yet or an error answer is a FAIL', () => {
    const o17 = smoke.EXPECTED[0];
    expect(smoke.checkOrder(o17, { status: 200, body: orderBody(o17) }).pass).toBe(true);
    expect(smoke.checkOrder(o17, { status: 200, body: { ...orderBody(o17), total: 1 } }).pass).toBe(false);
    expect(smoke.checkOrder(o17, { status: 200, body: { ...orderBody(o17), saga: null } }).line).toContain(
      'got submitted, total 4749, saga none',
    );
    expect(smoke.checkOrder(o17, { status: 404, body: {} })).toEqual({
      pass: false,
      final: false,
      line: 'order O-17: not there yet (HTTP 404)',
    });
    expect(smoke.checkOrder(o17, { status: 500, body: 'boom' })).toMatchObject({ pass: false, final: false });
  });

  it('names the azd values it lacks, and reads its one flag', () => {
    expect(() => smoke.smokeConfig({ functionAppHostName: 'h' })).toThrow(
      'the azd environment has no serviceBusFullyQualifiedNamespace, AZURE_RESOURCE_GROUP, functionAppName: run azd up first (or set FUNCTION_KEY to skip reading the key with az)',
    );
    expect(
      smoke.smokeConfig({ functionAppHostName: 'h', serviceBusFullyQualifiedNamespace: 'n' }, 'k'),
    ).toMatchObject({
      hostName: 'h',
      namespace: 'n',
    });
    expect(smoke.parseSmokeArgs([])).toEqual({ help: false, waitMs: 180_000 });
    expect(smoke.parseSmokeArgs(['--wait', '60'])).toEqual({ help: false, waitMs: 60_000 });
    expect(smoke.parseSmokeArgs(['-h'])).toEqual({ help: true });
    expect(() => smoke.parseSmokeArgs(['--wait', '1e3'])).toThrow('--wait must be a whole number of seconds');
    expect(() => smoke.parseSmokeArgs(['--nope'])).toThrow(/npm run smoke -- --help/);
  });

  it('is the package script smoke, run on a current build', () => {
    const manifest = JSON.parse(readFileSync(resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.smoke).toBe('node scripts/build-if-stale.js && node scripts/smoke-test.js');
  });
});
