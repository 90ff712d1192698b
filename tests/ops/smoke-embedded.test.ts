/**
 * `npm run smoke` (scripts/smoke-test.js) against the app itself: the embedded app with the catalog
 * the Bicep deploys (`inventoryCatalog` in bicep/main.bicepparam), fed by `npm run ops -- send`, read
 * through its HTTP function `GET /api/orders/{orderId}`. What the smoke test expects of a deployment
 * is what the app does with the sample there.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createEmbeddedApp } from '../../local/app';
import type { MessageSender } from '../../src/services/ports';
import { main, type OpsOutput } from '../../tools/ops/ops';
import { quiet } from '../support/e2e';

const ROOT = resolve(__dirname, '..', '..');

const smoke = require('../../scripts/smoke-test.js') as {
  EXPECTED: Array<{ orderId: string }>;
  runSmoke: (deps: Record<string, unknown>) => Promise<number>;
};

/** `param inventoryCatalog = { 'SKU-1': 100 ... }` of the parameter file, as an object. */
function deployedCatalog(): Record<string, number> {
  const text = readFileSync(resolve(ROOT, 'bicep', 'main.bicepparam'), 'utf8');
  const block = /param inventoryCatalog = \{([^}]*)\}/.exec(text);
  if (block === null) throw new Error('bicep/main.bicepparam sets no inventoryCatalog');
  return Object.fromEntries(
    [...block[1].matchAll(/'([^']+)':\s*(\d+)/g)].map((match) => [match[1], Number(match[2])]),
  );
}

describe('npm run smoke against the embedded app', () => {
  it('finds every order as it expects, after ops send fed the sample', async () => {
    const catalog = deployedCatalog();
    expect(Object.keys(catalog).length).toBeGreaterThan(0);
    const app = createEmbeddedApp({ catalog, log: quiet });
    try {
      const printed: string[] = [];
      const code = await smoke.runSmoke({
        values: {
          serviceBusFullyQualifiedNamespace: 'embedded.servicebus.windows.net',
          functionAppHostName: 'embedded',
        },
        presetKey: 'embedded-key',
        intervalMs: 50,
        waitMs: 60_000,
        send: async (config: { namespace: string }) => {
          const stdout: string[] = [];
          const output: OpsOutput = { out: (text) => stdout.push(text), err: quiet };
          const broker: MessageSender & { close(): Promise<void> } = {
            send: (queue, messages) => app.broker.send(queue, messages),
            close: async () => {},
          };
          const exit = await main(
            ['send', 'samples/ledger.ndjson', '--json'],
            { ServiceBusConnection__fullyQualifiedNamespace: config.namespace },
            output,
            () => broker,
          );
          if (exit !== 0) throw new Error(`ops send exited ${exit}`);
          return JSON.parse(stdout.join('\n')) as { sent: number; entries: number };
        },
        functionKey: async () => {
          throw new Error('not asked: the key is preset');
        },
        getOrder: async (_config: unknown, _key: string, orderId: string) => {
          const response = await app.http({ method: 'GET', path: `orders/${encodeURIComponent(orderId)}` });
          return { status: response.status, body: JSON.parse(response.body) as unknown };
        },
        now: Date.now,
        sleep: (ms: number) => new Promise((done) => setTimeout(done, ms)),
        print: (line: string) => printed.push(line),
      });
      expect(printed.filter((line) => line.startsWith('FAIL'))).toEqual([]);
      expect(code).toBe(0);
      expect(printed[0]).toBe('PASS send samples/ledger.ndjson: 9 ledger messages (33 entries) to ledger');
      expect(printed.filter((line) => line.startsWith('PASS order'))).toHaveLength(smoke.EXPECTED.length);
    } finally {
      await app.stop();
    }
  });
});
