/**
 * The embedded app's HTTP functions over the wire (local/serve.ts) and `npm start -- --serve`
 * (docs/cli.md): the bridge routes `/api/<route>` through the embedded host, which decodes route
 * parameters once as the Functions host does; a signal closes the served app and the run exits 0.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedApp, type EmbeddedApp } from '../../local/app';
import { serveApp, type Served } from '../../local/serve';
import { HELP, parseCliArgs, UsageError } from '../../local/cli/start-args';
import { main } from '../../local/cli/start';
import { added, created, FAST, ledger } from '../support/e2e';
import { serveInChild } from '../support/serving';

describe('serveApp', () => {
  let app: EmbeddedApp;
  let served: Served;
  beforeAll(async () => {
    app = createEmbeddedApp(FAST);
    await app.sendLedger([
      ledger('B-1', [created('O 1 ü%41', 'T-1', 1), added('O 1 ü%41', 'T-2', 2, 1, 100, true)]),
    ]);
    await app.drain();
    served = await serveApp(app);
  });
  afterAll(async () => {
    await served.close();
    await app.stop();
  });

  it('listens on 127.0.0.1 on a port of its own', () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
  });

  it('hands an order id percent-encoded in the path to the function decoded once (docs/saga.md)', async () => {
    const response = await fetch(`${served.url}/api/orders/${encodeURIComponent('O 1 ü%41')}`);
    const body = (await response.json()) as { orderId: string };
    expect({ status: response.status, orderId: body.orderId }).toEqual({ status: 200, orderId: 'O 1 ü%41' });
  });

  it('answers a route no function has 404, and a path outside /api/ 404 naming the prefix', async () => {
    const none = await fetch(`${served.url}/api/no/such/route`);
    const outside = await fetch(`${served.url}/orders/x`);
    expect([none.status, outside.status]).toEqual([404, 404]);
    expect(await outside.text()).toContain('/api/');
  });

  it('passes the body and the method, and gives the function’s status and JSON back', async () => {
    const response = await fetch(`${served.url}/api/orders/${encodeURIComponent('O 1 ü%41')}/review`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'body is not valid JSON' });
  });

  it('leads / to the console', async () => {
    const response = await fetch(`${served.url}/`, { redirect: 'manual' });
    expect({ status: response.status, location: response.headers.get('location') }).toEqual({
      status: 302,
      location: '/api/ops/console',
    });
  });
});

describe('the --serve flags', () => {
  it('--help lists --serve and --port', () => {
    expect(HELP).toMatch(/--serve\s+.*console/);
    expect(HELP).toMatch(/--port N\s+.*\(default: 0\)/);
  });

  it('--port without --serve is refused, and a port past 65535 names the flag', () => {
    expect(() => parseCliArgs(['--port', '8080'])).toThrow(
      new UsageError('--port is for --serve; give both'),
    );
    expect(() => parseCliArgs(['--serve', '--port', '65536'])).toThrow(/--port/);
    expect(parseCliArgs(['--serve', '--port', '7071'])).toMatchObject({ serve: true, port: 7071 });
    expect(parseCliArgs([])).toMatchObject({ serve: false, port: 0 });
  });
});

describe('npm start -- --serve on a port it cannot have', () => {
  it('says so in one line and exits 2 before the run starts', async () => {
    const taken = await serveApp({ http: async () => ({ status: 204, headers: {}, body: '' }) });
    const port = Number(new URL(taken.url).port);
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const code = await main(['--quiet', '--serve', '--port', String(port)]);
      expect(code).toBe(2);
      expect(stderr.mock.calls.map(([text]) => String(text))).toEqual([
        expect.stringMatching(
          new RegExp(`^npm start: --serve cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`),
        ),
      ]);
      expect(stdout).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
      stdout.mockRestore();
      await taken.close();
    }
  });
});

describe('npm start -- --serve as a process', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'start-serve-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs the input, serves the app until SIGTERM, then exits 0', async () => {
    writeFileSync(
      join(dir, 'ledger.ndjson'),
      `${JSON.stringify(ledger('B-1', [created('O-1', 'T-1', 1), added('O-1', 'T-2', 2, 1, 100, true)]))}\n`,
    );
    const served = serveInChild(['--input', 'ledger.ndjson', '--quiet', '--serve', '--port', '0'], dir);
    const consoleUrl = await served.waitFor(/console: (http:\/\/127\.0\.0\.1:\d+\/api\/ops\/console)/);
    const order = await fetch(new URL('/api/orders/O-1', consoleUrl));
    const state = (await order.json()) as { orderId: string };
    served.child.kill('SIGTERM');

    expect({ status: order.status, orderId: state.orderId }).toEqual({ status: 200, orderId: 'O-1' });
    expect(await served.exited).toBe(0);
    expect(served.printed()).toContain('SIGTERM: closing');
  });
});
