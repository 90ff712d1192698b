/**
 * What each document store does beyond the shared contract: the embedded store's counters, latency and
 * container registry, and how the Cosmos adapter classifies failures (which decides retry or park).
 */
import https from 'node:https';
import { ErrorResponse } from '@azure/cosmos';
import type { Container } from '@azure/cosmos';
import createServer from '@vercel/cosmosdb-server';
import {
  createCosmosClient,
  createCosmosContainer,
  STORE_REQUEST_CHARGE,
} from '../../src/adapters/azure/cosmos-store';
import { createEmbeddedStore } from '../../local/store/document-store';
import { PermanentError, TransientError } from '../../src/domain/errors';

describe('embedded store', () => {
  test('counts one round trip per call, in total and per container, until reset', async () => {
    const store = createEmbeddedStore();
    const orders = store.container('orders', '/orderId');
    const sagas = store.container('sagas', '/orderId');
    await orders.create({ id: 'o1', orderId: 'o1' });
    await orders.read('o1', 'o1');
    await orders.batch('o1', [{ op: 'read', id: 'o1' }]);
    await orders.query({});
    await sagas.upsert({ id: 's1', orderId: 'o1' });
    await expect(orders.batch('o1', [])).rejects.toMatchObject({ code: 'batch-empty' });

    expect(store.roundTrips).toEqual({ total: 6, byContainer: { orders: 5, sagas: 1 } });
    store.resetCounters();
    expect(store.roundTrips).toEqual({ total: 0, byContainer: {} });
  });

  test('the same name returns the same container, with its documents; other settings are refused', async () => {
    const store = createEmbeddedStore();
    const first = store.container('orders', '/orderId');
    await first.create({ id: 'o1', orderId: 'o1' });
    const again = store.container('orders', '/orderId');
    expect(again).toBe(first);
    await expect(again.read('o1', 'o1')).resolves.toBeDefined();
    expect(() => store.container('orders', '/customerId')).toThrow(PermanentError);
    expect(() => store.container('orders', '/orderId', { defaultTtlSeconds: 60 })).toThrow(PermanentError);
    expect(() => store.container('nested', '/order/id')).toThrow(PermanentError);
    expect(() => store.container('bad-ttl', '/orderId', { defaultTtlSeconds: 0 })).toThrow(PermanentError);
  });

  test('calls resolve asynchronously and reject rather than throw, even with no latency', async () => {
    const orders = createEmbeddedStore().container('orders', '/orderId');
    let settled = false;
    const pending = orders.create({ id: 'o1', orderId: 'o1' }).then(() => {
      settled = true;
    });
    expect(settled).toBe(false);
    await pending;
    expect(settled).toBe(true);

    let refusal: Promise<unknown> | undefined;
    expect(() => {
      refusal = orders.create({ id: 'no-key' });
    }).not.toThrow();
    await expect(refusal).rejects.toMatchObject({ code: 'bad-partition-key' });
  });

  test('latencyMs delays every call by that long', async () => {
    const orders = createEmbeddedStore({ latencyMs: 30 }).container('orders', '/orderId');
    const started = performance.now();
    await orders.create({ id: 'o1', orderId: 'o1' });
    await orders.read('o1', 'o1');
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
  });

  test('a document ttl that is neither -1 nor whole seconds > 0 is refused', async () => {
    const orders = createEmbeddedStore().container('orders', '/orderId', { defaultTtlSeconds: -1 });
    await expect(orders.create({ id: 'o1', orderId: 'o1', ttl: 0 })).rejects.toMatchObject({
      code: 'bad-ttl',
    });
    await expect(orders.create({ id: 'o1', orderId: 'o1', ttl: 1.5 })).rejects.toMatchObject({
      code: 'bad-ttl',
    });
    await expect(orders.read('o1', 'o1')).resolves.toBeUndefined();
  });
});

describe('Cosmos adapter failures', () => {
  /** A container whose every SDK call fails with `error`, as the SDK would report it. */
  const failingContainer = (error: unknown): Container => {
    const reject = (): Promise<never> => Promise.reject(error);
    const stub = {
      id: 'orders',
      items: { create: reject, upsert: reject, batch: reject, query: () => ({ fetchAll: reject }) },
      item: () => ({ read: reject, replace: reject, delete: reject }),
    };
    return stub as unknown as Container;
  };

  const cosmosError = (status: number): ErrorResponse => {
    const error = new ErrorResponse(`status ${status}`);
    error.code = status;
    return error;
  };

  test.each([
    [429, 'transient', 'store-throttled'],
    [408, 'transient', 'store-unavailable'],
    [449, 'transient', 'store-unavailable'],
    [500, 'transient', 'store-unavailable'],
    [503, 'transient', 'store-unavailable'],
    [400, 'permanent', 'store-error'],
    // The identity refused: a role assignment not in effect yet, waited out (AuthorizationPendingError).
    [401, 'transient', 'authorization-pending'],
    [403, 'transient', 'authorization-pending'],
  ])('status %i is a %s failure %s, keeping the original as cause', async (status, kind, code) => {
    const original = cosmosError(status);
    const orders = createCosmosContainer(failingContainer(original), '/orderId');
    const attempts: Array<() => Promise<unknown>> = [
      () => orders.create({ id: 'o1', orderId: 'o1' }),
      () => orders.read('o1', 'o1'),
      () => orders.replace({ id: 'o1', orderId: 'o1' }),
      () => orders.upsert({ id: 'o1', orderId: 'o1' }),
      () => orders.delete('o1', 'o1'),
      () => orders.query({ where: { status: 'open' } }),
    ];
    for (const attempt of attempts) {
      await expect(attempt()).rejects.toMatchObject({ kind, code, cause: original });
    }
  });

  test('expected statuses are results, not failures', async () => {
    await expect(
      createCosmosContainer(failingContainer(cosmosError(409)), '/orderId').create({
        id: 'o1',
        orderId: 'o1',
      }),
    ).resolves.toEqual({ status: 409 });
    await expect(
      createCosmosContainer(failingContainer(cosmosError(404)), '/orderId').read('o1', 'o1'),
    ).resolves.toBeUndefined();
    await expect(
      createCosmosContainer(failingContainer(cosmosError(412)), '/orderId').delete('o1', 'o1'),
    ).resolves.toEqual({ status: 412 });
  });

  test('network errors and timeouts are transient; a batch error is classified by its message', async () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const timeout = Object.assign(new Error('Timeout Error!'), { code: 'TimeoutError' });
    await expect(
      createCosmosContainer(failingContainer(reset), '/orderId').read('o1', 'o1'),
    ).rejects.toMatchObject({ code: 'store-unavailable' });
    await expect(
      createCosmosContainer(failingContainer(timeout), '/orderId').upsert({ id: 'o1', orderId: 'o1' }),
    ).rejects.toMatchObject({ code: 'store-unavailable' });

    const batch = (message: string): Promise<unknown> =>
      createCosmosContainer(failingContainer(new Error(message)), '/orderId').batch('o1', [
        { op: 'read', id: 'o1' },
      ]);
    await expect(batch('Batch request error: connect ECONNREFUSED 127.0.0.1:1')).rejects.toBeInstanceOf(
      TransientError,
    );
    await expect(batch('Batch request error: Request rate is large')).rejects.toMatchObject({
      code: 'store-throttled',
    });
    await expect(batch('Batch request error: Invalid batch')).rejects.toMatchObject({ code: 'store-error' });
  });

  test('a store that refuses connections is transiently unavailable, through the real SDK', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the server has no TCP address');
    await new Promise<void>((resolve) => server.close(() => resolve()));

    const agent = new https.Agent({ rejectUnauthorized: false });
    const client = createCosmosClient({
      endpoint: `https://127.0.0.1:${address.port}`,
      key: 'C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU9DAoDkn5DzAaGKu1Imh9N8OWMa+ioP2rn5qD3sK3BjaSkMqQ==',
      agent,
    });
    try {
      const orders = createCosmosContainer(client.database('db').container('orders'), '/orderId');
      await expect(orders.read('o1', 'o1')).rejects.toMatchObject({ code: 'store-unavailable' });
      await expect(orders.batch('o1', [{ op: 'read', id: 'o1' }])).rejects.toMatchObject({
        code: 'store-unavailable',
      });
    } finally {
      client.dispose();
      agent.destroy();
    }
  });

  test('a client needs exactly one of credential or key', () => {
    expect(() => createCosmosClient({ endpoint: 'https://127.0.0.1:1' })).toThrow(PermanentError);
  });
});

describe('Cosmos adapter request charge', () => {
  const charged = (body: Record<string, unknown>) => ({
    resource: { id: 'o1', orderId: 'o1', _etag: '"e1"' },
    statusCode: 200,
    ...body,
  });

  test('each call records what the store charged as store.requestCharge, by container and action', async () => {
    const conflict = Object.assign(new ErrorResponse('conflict'), {
      code: 409,
      headers: { 'x-ms-request-charge': '1.24' },
    });
    const stub = {
      id: 'orders',
      items: {
        create: () => Promise.reject(conflict),
        upsert: () => Promise.resolve(charged({ requestCharge: 10.29 })),
        batch: () =>
          Promise.resolve({
            headers: { 'x-ms-request-charge': '12.5' },
            result: [{ statusCode: 200, requestCharge: 12.5, resourceBody: { id: 'o1', _etag: '"e"' } }],
          }),
        query: () => ({ fetchAll: () => Promise.resolve({ resources: [], requestCharge: 2.83 }) }),
      },
      item: () => ({ read: () => Promise.resolve(charged({ requestCharge: 0 })) }),
    };
    const metrics: Array<[string, number, unknown]> = [];
    const orders = createCosmosContainer(stub as unknown as Container, '/orderId', {
      telemetry: { metric: (name, value, properties) => metrics.push([name, value, properties]) },
    });
    await expect(orders.create({ id: 'o1', orderId: 'o1' })).resolves.toEqual({ status: 409 });
    await orders.upsert({ id: 'o1', orderId: 'o1' });
    await orders.batch('o1', [{ op: 'read', id: 'o1' }]);
    await orders.query({});
    await orders.read('o1', 'o1');
    // A call the store did not charge (none, or 0) records nothing.
    expect(metrics).toEqual([
      [STORE_REQUEST_CHARGE, 1.24, { operation: 'orders.create' }],
      [STORE_REQUEST_CHARGE, 10.29, { operation: 'orders.upsert' }],
      [STORE_REQUEST_CHARGE, 12.5, { operation: 'orders.batch' }],
      [STORE_REQUEST_CHARGE, 2.83, { operation: 'orders.query' }],
    ]);
    expect(STORE_REQUEST_CHARGE).toBe('store.requestCharge');
  });
});
