/**
 * How the embedded runtime reads ids out of request paths, as the real one does, so that the e2e
 * tests meet the hazards Azure has:
 * - the Functions host routes the path as Kestrel decodes it (aspnetcore
 *   `src/Shared/UrlDecoder/UrlDecoder.cs`): `%XX` decoded once when it forms UTF-8, `%2F` kept,
 *   any other `%` kept, `%00` refused with 400, then dot segments removed;
 * - the Durable extension's management API, behind Kestrel too, decodes that path again with
 *   `WebUtility.UrlDecode` (`HttpApiHandler.HandleRequestAsync`), and refuses to start an instance
 *   whose id breaks `DurableClient.StartNewAsync`'s rules (400).
 */
import { request } from 'node:http';
import type { OrchestrationContext } from 'durable-functions';
import { kestrelRequestPath, matchRoute } from '../../local/host/http-function';
import { webUtilityUrlDecode, instanceIdProblem } from '../../local/durable/management-api';
import { createDurableDriver, type DurableDriver } from '../../local/durable/driver';
import { registerAndCapture } from '../../local/worker/register';

describe('kestrelRequestPath', () => {
  it.each([
    ['/api/orders/O-1', '/api/orders/O-1'],
    ['/api/orders/O-%2541/cancel', '/api/orders/O-%41/cancel'],
    ['/api/orders/O-%41', '/api/orders/O-A'],
    ['/api/orders/O%201', '/api/orders/O 1'],
    ['/api/orders/O+1', '/api/orders/O+1'],
    ['/api/orders/O-%C3%A9', '/api/orders/O-é'],
    ['/api/orders/O-%F0%9F%98%80', '/api/orders/O-😀'],
    // Kept as written: %2F, a % that starts no escape, escapes that are not UTF-8.
    ['/api/orders/O%2F1', '/api/orders/O%2F1'],
    ['/api/orders/O%2f1', '/api/orders/O%2f1'],
    ['/api/orders/O-%', '/api/orders/O-%'],
    ['/api/orders/O-%zz', '/api/orders/O-%zz'],
    ['/api/orders/O-%2', '/api/orders/O-%2'],
    ['/api/orders/O-%E0%A4', '/api/orders/O-%E0%A4'],
    ['/api/orders/O-%E0%A4x', '/api/orders/O-%E0%A4x'],
    ['/api/orders/O-%FF', '/api/orders/O-%FF'],
    ['/api/orders/O-%C0%AF', '/api/orders/O-%C0%AF'],
    ['/api/orders/O-%ED%A0%80', '/api/orders/O-%ED%A0%80'],
    ['/api/orders/O-%F4%90%80%80', '/api/orders/O-%F4%90%80%80'],
    ['/api/orders/%C3%A9%E0%A4%41', '/api/orders/é%E0%A4A'],
    // Dot segments go, decoded ones too.
    ['/api/orders/O-1/../O-2', '/api/orders/O-2'],
    ['/api/orders/O-1/%2E%2E/O-2', '/api/orders/O-2'],
    ['/api/orders/./O-1', '/api/orders/O-1'],
    ['/api/orders/O-1/..', '/api/orders/'],
    ['/api/orders/..O', '/api/orders/..O'],
  ])('reads %s as %s', (target, path) => {
    expect(kestrelRequestPath(target)).toEqual({ ok: true, path });
  });

  it.each(['/api/orders/O-%00', '/api/orders/%00/cancel', '/durabletask/instances/a%00b'])(
    'refuses %s: the path holds a null character',
    (target) => {
      expect(kestrelRequestPath(target)).toEqual({ ok: false, error: 'The path contains null characters.' });
    },
  );

  it('gives the route its segment as Kestrel decoded it', () => {
    const decoded = (target: string): string => {
      const path = kestrelRequestPath(target);
      if (!path.ok) throw new Error(path.error);
      return path.path;
    };
    expect(matchRoute('orders/{orderId}/cancel', decoded('orders/O-%2541/cancel'))).toEqual(
      new Map([['orderId', 'O-%41']]),
    );
    expect(matchRoute('orders/{orderId}', decoded('orders/O%2F1'))).toEqual(new Map([['orderId', 'O%2F1']]));
    expect(matchRoute('orders/{orderId}', decoded('orders/a/b'))).toBeUndefined();
  });
});

describe('webUtilityUrlDecode', () => {
  it.each([
    ['fulfill-O-1', 'fulfill-O-1'],
    ['fulfill-O-%41', 'fulfill-O-A'],
    ['fulfill-O+1', 'fulfill-O 1'],
    ['fulfill-O-%2B', 'fulfill-O-+'],
    ['fulfill-O-%', 'fulfill-O-%'],
    ['fulfill-O-%zz', 'fulfill-O-%zz'],
    ['fulfill-O-%4', 'fulfill-O-%4'],
    ['fulfill-O-%C3%A9', 'fulfill-O-é'],
    ['fulfill-O-%FF', 'fulfill-O-\ufffd'],
    ['fulfill-é-%41', 'fulfill-é-A'],
  ])('decodes %j as %j', (text, decoded) => {
    expect(webUtilityUrlDecode(text)).toBe(decoded);
  });
});

describe('instanceIdProblem: the instance ids StartNewAsync refuses', () => {
  it.each([
    ['@entity', /must not start with @/],
    ['a/b', /must not contain/],
    ['a\\b', /must not contain/],
    ['a?b', /must not contain/],
    ['a#b', /must not contain/],
    ['a\tb', /must not contain/],
    ['a\u0000', /must not contain/],
    ['a\u007f', /must not contain/],
    ['a\u0085', /must not contain/],
    ['x'.repeat(257), /must not exceed 256/],
  ])('%j', (instanceId, problem) => {
    expect(instanceIdProblem(instanceId)).toMatch(problem);
  });

  it.each(['fulfill-O-1', 'a b', 'a%b', 'a+b', 'é', '\u00a0', 'x'.repeat(256), 'fulfill-\ud800'])(
    'takes %j',
    (instanceId) => {
      expect(instanceIdProblem(instanceId)).toBeNull();
    },
  );
});

describe('the management API reads instance ids from raw paths as the extension does', () => {
  let driver: DurableDriver;
  let base: string;
  beforeEach(async () => {
    driver = createDurableDriver({
      functions: registerAndCapture({
        orchestrations: [
          {
            name: 'approval',
            handler: function* (context: OrchestrationContext) {
              return (yield context.df.waitForExternalEvent('approve')) as unknown;
            },
          },
        ],
      }),
      clock: { mode: 'virtual' },
    });
    driver.start();
    base = JSON.parse(String((await driver.durableClientInput()).string)).rpcBaseUrl as string;
  });
  afterEach(() => driver.stop());

  /** A request with its target exactly as written, as no URL parser would leave it. */
  function raw(method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
    const { hostname, port, pathname } = new URL(base);
    return new Promise((resolve, reject) => {
      const call = request(
        {
          hostname,
          port,
          method,
          path: `${pathname}${path}`,
          headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          );
        },
      );
      call.on('error', reject);
      call.end(body);
    });
  }

  const ids = (): string[] => driver.instances().map((instance) => instance.instanceId);

  it('decodes %XX, twice over, and reads + as a space: the hazard of a raw order id', async () => {
    expect((await raw('POST', 'orchestrators/approval/fulfill-O-A', '1')).status).toBe(202);
    expect((await raw('POST', 'orchestrators/approval/fulfill-O%201', '1')).status).toBe(202);
    await driver.runUntilIdle();
    expect(ids().sort()).toEqual(['fulfill-O 1', 'fulfill-O-A']);
    // Kestrel decodes %25 to %, the handler decodes %41 to A.
    for (const spelled of ['fulfill-O-A', 'fulfill-O-%41', 'fulfill-O-%2541'])
      expect({ spelled, status: (await raw('GET', `instances/${spelled}`)).status }).toEqual({
        spelled,
        status: 202,
      });
    for (const spelled of ['fulfill-O+1', 'fulfill-O%2B1', 'fulfill-O%201'])
      expect({ spelled, status: (await raw('GET', `instances/${spelled}`)).status }).toEqual({
        spelled,
        status: 202,
      });
    expect((await raw('POST', 'instances/fulfill-O-%2541/raiseEvent/approve', '"yes"')).status).toBe(202);
    await driver.runUntilIdle();
    expect(driver.instances().find((i) => i.instanceId === 'fulfill-O-A')?.runtimeStatus).toBe('Completed');
  });

  it('answers a % that starts no escape as the extension does, never 500', async () => {
    // The % stays in the id: unknown instances are 404, and such an id starts.
    for (const path of ['instances/fulfill-O-%', 'instances/fulfill-O-%zz', 'instances/fulfill-O-%2'])
      expect({ path, status: (await raw('GET', path)).status }).toEqual({ path, status: 404 });
    const started = await raw('POST', 'orchestrators/approval/fulfill-O-%zz', '1');
    expect(started.status).toBe(202);
    expect(JSON.parse(started.body)).toMatchObject({ id: 'fulfill-O-%zz' });
    expect((await raw('GET', 'instances/fulfill-O-%zz')).status).toBe(202);
    expect((await raw('GET', 'instances/fulfill-O-%25zz')).status).toBe(202);
  });

  it('answers 400 for a path Kestrel refuses, and for an instance id StartNewAsync refuses', async () => {
    expect(await raw('GET', 'instances/fulfill-O-%00')).toEqual({ status: 400, body: '' });
    expect((await raw('POST', 'orchestrators/approval/fulfill-O-%00x', '1')).status).toBe(400);
    for (const id of ['fulfill-O-%7F', 'fulfill-O-%C2%85', 'fulfill-O-%2500', '%40fulfill'])
      expect({ id, status: (await raw('POST', `orchestrators/approval/${id}`, '1')).status }).toEqual({
        id,
        status: 400,
      });
    const refused = await raw('POST', `orchestrators/approval/${'x'.repeat(257)}`, '1');
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toMatchObject({
      ExceptionType: 'System.ArgumentException',
      ExceptionMessage: 'Instance ID lengths must not exceed 256 characters.',
    });
    await expect(driver.client.startNew('approval', 'fulfill-O-\u0085', 1)).rejects.toThrow(
      /control characters/,
    );
    expect(ids()).toEqual([]);
  });

  it('splits the path after decoding: a %2F decoded by the handler is a separator', async () => {
    expect((await raw('POST', 'orchestrators/approval/fulfill-O', '1')).status).toBe(202);
    await driver.runUntilIdle();
    // instances/fulfill-O/x: no route; instances/fulfill-O/: the id, trimmed.
    expect((await raw('GET', 'instances/fulfill-O%2Fx')).status).toBe(404);
    expect((await raw('GET', 'instances/fulfill-O%2F')).status).toBe(202);
  });
});
