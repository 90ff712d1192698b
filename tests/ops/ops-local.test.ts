/**
 * `npm run ops -- --local URL <command>` (tools/ops/http-ops.ts): the ops commands over the HTTP API
 * of an embedded app served as `npm start -- --serve` serves it (local/serve.ts). A bulk replay by
 * reason and an ordered replay of one order move what they say, and the store shows the effects;
 * argument errors, answers 4xx and an app that cannot be reached are one line and exit 2.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEmbeddedApp, type EmbeddedApp } from '../../local/app';
import { serveApp, type Served } from '../../local/serve';
import { parkedMessage } from '../../src/services/convoy/parking';
import { readOrderState, type OrderDocument } from '../../src/services/order-documents';
import type { BatchOperation, BatchResult } from '../../src/services/ports';
import { TransientError } from '../../src/domain/errors';
import { main } from '../../tools/ops/ops';
import { apiUrl, requestOf, runHttpCommand } from '../../tools/ops/http-ops';
import { added, created, ledger, quiet } from '../support/e2e';
import { fakeDateOnly, moveClockPastDuplicateWindow } from '../support/ops';

interface Captured {
  code: number;
  stdout: string[];
  stderr: string[];
}

async function ops(argv: string[]): Promise<Captured> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const output = { out: (text: string) => stdout.push(text), err: (text: string) => stderr.push(text) };
  const code = await main(argv, {}, output);
  return { code, stdout, stderr };
}

/** One line, no stack trace. */
function expectOneLine(captured: Captured, problem: RegExp): void {
  expect(captured.code).toBe(2);
  expect(captured.stdout).toEqual([]);
  expect(captured.stderr).toHaveLength(1);
  expect(captured.stderr[0]).toMatch(problem);
  expect(captured.stderr[0]).not.toMatch(/\n/);
}

describe('npm run ops -- --local URL: argument errors, one line and exit 2', () => {
  it.each([
    [
      ['replay', '--parked', '--reason', 'invalid'],
      /replay runs in the app, over its HTTP API: give --local URL/,
    ],
    [
      ['--local', 'http://127.0.0.1:1', 'replay', '--parked'],
      /replay needs --reason R, --from ISO --to ISO or --order ID/,
    ],
    [
      ['--local', 'http://127.0.0.1:1', 'replay', '--reason', 'x'],
      /replay takes --parked or --dlq QUEUE, one of them/,
    ],
    [
      ['--local', 'http://127.0.0.1:1', 'replay', '--parked', '--dlq', 'ledger', '--reason', 'x'],
      /replay takes --parked or --dlq QUEUE, one of them/,
    ],
    [
      ['--local', 'http://127.0.0.1:1', 'replay', '--dlq', 'parked', '--reason', 'x'],
      /--dlq takes ledger or order-transactions/,
    ],
    [
      ['--local', 'http://127.0.0.1:1', 'replay', '--parked', '--from', 'yesterday'],
      /--from must be an ISO 8601 time/,
    ],
    [
      [
        '--local',
        'http://127.0.0.1:1',
        'replay',
        '--parked',
        '--from',
        '2026-02-01T00:00:00Z',
        '--to',
        '2026-01-01T00:00:00Z',
      ],
      /--from must not be after --to/,
    ],
    [['--local', 'http://127.0.0.1:1', 'replay-order'], /replay-order needs an order id/],
    [
      ['--local', 'http://127.0.0.1:1', 'replay-order', 'O-1', '--force'],
      /--force applies to a replay only|does not apply/,
    ],
    [['--local', 'http://127.0.0.1:1', 'discard', '--parked', '--reason', 'x'], /discard needs --why TEXT/],
    [['--local', 'not a url', 'parked', 'list'], /--local must be a URL such as http:\/\/127\.0\.0\.1:7071/],
    [['--local', 'ftp://127.0.0.1', 'parked', 'list'], /--local must be an http or https URL/],
    [['--local', 'http://127.0.0.1:1', '--key', 'k', 'parked', 'list'], /locally keys are not checked/],
    [
      ['--local', 'http://127.0.0.1:1', '--url', 'http://127.0.0.1:2', 'parked', 'list'],
      /--local or --url, not both/,
    ],
    [['--local', 'http://127.0.0.1:1', 'send', 'file.ndjson'], /send works on Azure through the SDK only/],
    [['--url', 'http://example.net', '--key', 'k', 'parked', 'list'], /--key is sent over https only/],
    [
      ['--local', 'http://127.0.0.1:1', 'parked', 'list', '--why', 'x'],
      /--why does not apply to parked list/,
    ],
  ])('%j', async (argv, problem) => {
    expectOneLine(await ops(argv), problem);
  });

  it('an app that cannot be reached: one line naming it, exit 2', async () => {
    // A port just freed: nothing listens there.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expectOneLine(
      await ops(['--local', `http://127.0.0.1:${port}`, 'parked', 'list']),
      /^cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED$/,
    );
  });
});

describe('the requests it makes', () => {
  it('puts each id percent-encoded into its own path segment, or a messageId into the query, so no id can change the route', () => {
    expect(requestOf({ name: 'replay-order', orderId: 'O/1?x#y', dryRun: true, json: false })).toEqual({
      method: 'POST',
      path: 'ops/orders/O%2F1%3Fx%23y/replay',
      body: { dryRun: true },
    });
    expect(requestOf({ name: 'dlq show', queue: 'ledger', messageId: 'B-1#3' }).path).toBe(
      'ops/deadletter-message/ledger?messageId=B-1%233',
    );
    expect(requestOf({ name: 'parked replay', messageId: 'L/1', force: false, json: false }).path).toBe(
      'ops/parked-message/replay?messageId=L%2F1',
    );
  });

  it('shows ids as one line each: control characters escaped, never passed to the terminal', async () => {
    const odd = 'B-1\n\u001b[31mred';
    const answer = {
      dryRun: true,
      matched: 1,
      truncated: false,
      messages: [
        {
          messageId: odd,
          orderId: 'O\r1',
          sequence: 1,
          reason: 'invalid',
          enqueuedTime: 'now',
          action: 'would-replay',
        },
      ],
    };
    const lines: string[] = [];
    const code = await runHttpCommand(
      {
        name: 'replay',
        source: { parked: true },
        filter: { reason: 'invalid' },
        dryRun: true,
        force: false,
        json: false,
      },
      { kind: 'http', url: new URL('http://127.0.0.1:9'), key: undefined, timeoutMs: 1000 },
      false,
      { out: (line) => lines.push(line), err: (line) => lines.push(line) },
      () => Promise.resolve(new Response(JSON.stringify(answer), { status: 200 })),
    );
    expect(code).toBe(0);
    expect(lines.join('\n').split('\n')).toEqual([
      'would-replay B-1\\u000a\\u001b[31mred order O\\u000d1 sequence 1 (invalid, held since now)',
      'dry run: matched 1; 1 would-replay',
    ]);
  });

  it('--url with --key sends the key as x-functions-key; --local sends none; --json prints the answer as it came', async () => {
    const seen: Array<{ url: string; key: string | null; body: unknown }> = [];
    const answer = { dryRun: false, matched: 0, truncated: false, messages: [] };
    const stub = (url: string, init: RequestInit): Promise<Response> => {
      const headers = new Headers(init.headers);
      seen.push({ url, key: headers.get('x-functions-key'), body: JSON.parse(String(init.body)) as unknown });
      return Promise.resolve(new Response(JSON.stringify(answer), { status: 200 }));
    };
    const output = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
    const lines: string[] = [];
    const remote = [
      '--url',
      'https://app.example.net',
      '--key',
      's3cret',
      'replay',
      '--dlq',
      'ledger',
      '--order',
      'O/1',
    ];
    expect(await main([...remote, '--json'], {}, output, undefined, stub)).toBe(0);
    expect(
      await main(['--local', 'http://127.0.0.1:7071', 'replay-order', 'O/1'], {}, output, undefined, stub),
    ).toBe(0);
    expect(seen).toEqual([
      {
        url: 'https://app.example.net/api/ops/replay',
        key: 's3cret',
        body: { source: 'deadletter', queue: 'ledger', orderId: 'O/1', dryRun: false, force: false },
      },
      { url: 'http://127.0.0.1:7071/api/ops/orders/O%2F1/replay', key: null, body: { dryRun: false } },
    ]);
    expect(JSON.parse(lines[0])).toEqual(answer);
    expect(lines[1]).toBe('matched 0');
  });

  it('an answer 401 says the command needs a key', async () => {
    const lines: string[] = [];
    const output = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
    const unauthorized = (): Promise<Response> => Promise.resolve(new Response('', { status: 401 }));
    const code = await main(
      ['--url', 'https://app.example.net', 'parked', 'list'],
      {},
      output,
      undefined,
      unauthorized,
    );
    expect({ code, lines }).toEqual({
      code: 2,
      lines: ['HTTP 401 on GET /api/ops/parked: no error given (parked list needs a key: --key KEY)'],
    });
  });

  it('takes the app root or its /api/ alike', () => {
    for (const base of ['http://127.0.0.1:7071', 'http://127.0.0.1:7071/', 'http://127.0.0.1:7071/api/']) {
      expect(apiUrl(new URL(base), 'ops/parked')).toBe('http://127.0.0.1:7071/api/ops/parked');
    }
  });
});

describe('against a served embedded app', () => {
  let app: EmbeddedApp;
  let served: Served;

  beforeEach(async () => {
    fakeDateOnly();
    app = createEmbeddedApp({ lockDurationMs: 50, timeScale: 1000, maxDeliveryCount: 3, log: quiet });
    served = await serveApp(app);
  });
  afterEach(async () => {
    await served.close();
    await app.stop();
    jest.useRealTimers();
  });

  /** The order as it stands, as the orders API reads it. */
  const header = (orderId: string): Promise<OrderDocument | undefined> => readOrderState(app.orders, orderId);

  it('replay --parked --reason invalid: a dry run lists them, then each is replayed and applied', async () => {
    // Two ledger entries a stricter deployment parked `invalid` that this one takes, and one of another reason.
    const parked = ['O-V1', 'O-V2', 'O-V3'].map((orderId, index) =>
      parkedMessage({
        fromQueue: 'ledger',
        messageId: `B-V#${index}`,
        sessionId: 'main',
        body: created(orderId, `T-${orderId}`),
        correlationId: 'B-V',
        applicationProperties: { batchId: 'B-V', entryIndex: index },
        transactionId: `T-${orderId}`,
        reason: index === 2 ? 'too-large' : 'invalid',
        description: 'entries[n].data.currency must be one of EUR, USD',
      }),
    );
    await app.broker.send('parked', parked);
    moveClockPastDuplicateWindow();

    const dry = await ops(['--local', served.url, 'replay', '--parked', '--reason', 'invalid', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout.join('\n').split('\n')).toEqual([
      expect.stringMatching(/^would-replay B-V#0 order O-V1 sequence 1 \(invalid, held since .+\)/),
      expect.stringMatching(/^would-replay B-V#1 order O-V2 sequence 1 \(invalid, held since .+\)/),
      'dry run: matched 2; 2 would-replay',
    ]);
    await app.drain();
    expect(await header('O-V1')).toBeUndefined();

    const done = await ops(['--local', `${served.url}/api/`, 'replay', '--parked', '--reason', 'invalid']);
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: [] });
    expect(done.stdout.join('\n')).toMatch(/^replayed B-V#0 .*\nreplayed B-V#1 .*\nmatched 2; 2 replayed$/);
    await app.drain();
    expect(await header('O-V1')).toMatchObject({ status: 'open', appliedSequence: 1 });
    expect(await header('O-V2')).toMatchObject({ status: 'open', appliedSequence: 1 });
    expect(await header('O-V3')).toBeUndefined();

    const left = await ops(['--local', served.url, 'parked', 'list', '--json']);
    expect(
      (JSON.parse(left.stdout.join('')) as { messages: Array<{ messageId: string }> }).messages.map(
        (m) => m.messageId,
      ),
    ).toEqual(['B-V#2']);
  });

  it("replay-order O-F: the order's dead letters replayed in sequence order; the store shows them applied", async () => {
    // The store fails every write of O-F until healed: both its entries run out of deliveries.
    const real = app.orders.batch.bind(app.orders);
    let failing = true;
    app.orders.batch = async (
      partitionKey: string,
      operations: readonly BatchOperation[],
    ): Promise<BatchResult> => {
      if (failing && partitionKey === 'O-F')
        throw new TransientError('store-unavailable', 'test: the store fails for O-F');
      return real(partitionKey, operations);
    };
    await app.sendLedger([ledger('B-F', [created('O-F', 'T-F1'), added('O-F', 'T-F2', 2, 2, 500)])]);
    await app.drain();
    const dead = await ops(['--local', served.url, 'dlq', 'list', 'order-transactions']);
    expect(dead.stdout.join('\n')).toMatch(/2 dead-lettered in order-transactions/);
    expect(await header('O-F')).toBeUndefined();

    failing = false;
    const replayed = await ops(['--local', served.url, 'replay-order', 'O-F']);
    expect({ code: replayed.code, stderr: replayed.stderr }).toEqual({ code: 0, stderr: [] });
    expect(replayed.stdout.join('\n')).toMatch(
      /^replayed \S+ order O-F sequence 1 .*\nreplayed \S+ order O-F sequence 2 .*\nmatched 2; 2 replayed$/,
    );
    await app.drain();
    expect(await header('O-F')).toMatchObject({ status: 'open', appliedSequence: 2, total: 1000 });
    const none = await ops(['--local', served.url, 'dlq', 'list', 'order-transactions']);
    expect(none.stdout).toEqual(['no dead-lettered messages in order-transactions']);
  });

  it('an answer 4xx is one line naming the problem, exit 2; a refused replay is exit 1 as through the SDK', async () => {
    // An entry the ledger parks as invalid, and still is: its replay is refused (409).
    await app.sendLedger([ledger('B-I', [added('O-I', 'T-I', 1, 0)])]);
    await app.drain();
    const listed = await ops(['--local', served.url, 'parked', 'list', '--json']);
    const [invalid] = (JSON.parse(listed.stdout.join('')) as { messages: Array<{ messageId: string }> })
      .messages;
    const refused = await ops(['--local', served.url, 'parked', 'replay', invalid.messageId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toEqual([expect.stringMatching(/^refused \(entry-still-invalid\): /)]);

    expectOneLine(
      await ops(['--local', served.url, 'parked', 'show', 'no such#id']),
      /^HTTP 404 on GET \/api\/ops\/parked-message\?messageId=no%20such%23id: no parked message no such#id$/,
    );
    expectOneLine(
      await ops(['--local', served.url, 'audit', '--since', '2000-01-01T00:00:00Z']),
      /^HTTP 400 on GET \/api\/ops\/audit\?since=2000-01-01T00%3A00%3A00Z: since and until may be at most \d+ days apart$/,
    );
  });
});
