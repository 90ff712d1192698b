/**
 * Saga instance ids that no order id can alter or mix (docs/saga.md, "Instance ids"). The durable
 * client of durable-functions puts an instance id into a URL as it stands (`instances/<id>`), and the
 * URL parser strips trailing spaces and controls, removes TAB, LF and CR anywhere and turns a lone
 * surrogate into U+FFFD, while the Durable extension decodes `%XX` in what arrives. An order id the
 * contract accepts may hold any of these, so the instance id must be one the client's URL cannot
 * change. These run the whole app on the embedded runtime: the real durable-functions client,
 * over the embedded management API that parses instance ids as the extension does.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as df from 'durable-functions';
import { InvocationContext, trigger } from '@azure/functions';
import { fulfillmentInstanceId } from '../../src/domain/saga';
import { durableOrchestrationClient } from '../../src/adapters/azure/durable-client';
import { createEmbeddedApp, type EmbeddedApp, type EmbeddedAppOptions } from '../../local/app';
import { main } from '../../local/cli/start';
import type { Report } from '../../local/report';
import type { Entry } from '../../src/domain/entry';
import { cancelOrder } from '../../src/services/fulfillment/orders-api';
import { readSagaRecord, type SagaRecord } from '../../src/services/fulfillment/saga-record';
import { cancellationInstanceId } from '../../src/services/fulfillment/starter';
import type { OrchestrationClient } from '../../src/services/ports';
import { expectAccountAddsUp } from '../support/account';
import { ledger } from '../support/e2e';

/** The order ids of the issue: each one's saga stayed `running` with no step, or never started. */
const ALTERED = [
  'O-1 ',
  'O-\n',
  'O-\t',
  'O-\r',
  'O-\u0000',
  'O-\ud800',
  'O-%41',
  'O-%20',
  'O-%2B',
  'O-%2F',
  'O\t1',
  'O%25',
  'O-%',
  'O-%zz',
];
/** Ids whose instance id Kestrel or the extension would decode into a control character (400). */
const CONTROLS = ['O-\u007f', 'O-\u0085', 'O-%7F', 'O-%C2%85', 'O-%2500'];
/** Ids the ones above used to share an instance with, or be decoded into. */
const PARTNERS = ['O-1', 'O1', 'O-\ud801', 'O-A', 'O- ', 'O-+', 'O%', 'O 1', 'O+1'];
const ALL = [...ALTERED, ...CONTROLS, ...PARTNERS];

/** A created order, one line and the final flag: it is submitted and its saga runs. */
function order(orderId: string, index: number, sku: string, customerId = `C-${index}`): Entry[] {
  return [
    {
      transactionId: `T-${index}-1`,
      orderId,
      sequence: 1,
      type: 'OrderCreated',
      data: { customerId, currency: 'EUR' },
    },
    {
      transactionId: `T-${index}-2`,
      orderId,
      sequence: 2,
      type: 'TransactionAdded',
      final: true,
      data: { sku, quantity: 1, unitPrice: 100 },
    },
  ];
}

function newApp(options: EmbeddedAppOptions = {}): EmbeddedApp {
  return createEmbeddedApp({
    // Above the pauses of the HTTP durable client under jest; a lost lock redelivers a submission.
    lockDurationMs: 200,
    timeScale: 2000,
    log: () => undefined,
    clock: { mode: 'virtual' },
    catalog: { 'SKU-1': 1000 },
    creditLimit: 10_000,
    retry: { firstIntervalMs: 1000, backoffCoefficient: 2, maxIntervalMs: 10_000, maxAttempts: 3 },
    ...options,
  });
}

async function saga(app: EmbeddedApp, orderId: string): Promise<SagaRecord> {
  const record = await readSagaRecord(app.orders, orderId);
  if (record === undefined) throw new Error(`no saga record for ${JSON.stringify(orderId)}`);
  return record;
}

async function chargeOf(app: EmbeddedApp, orderId: string): Promise<{ amount: number; refunded: number }> {
  const stored = await app.store
    .container('downstream', '/orderId')
    .read<{ id: string; amount: number; refunded: number }>(orderId, `charge:${orderId}`);
  if (stored === undefined) throw new Error(`no charge for ${JSON.stringify(orderId)}`);
  return stored.document;
}

const shown = (id: string): string => JSON.stringify(id);

/** The path of a route for this order id, as a client writes it; undefined when no URL can hold it. */
function routeFor(orderId: string, operation = ''): string | undefined {
  try {
    return `orders/${encodeURIComponent(orderId)}${operation}`;
  } catch {
    return undefined; // a lone surrogate: no URL holds it
  }
}

/** The app's orchestration client on the real durable-functions client, bound as the host binds it. */
async function sdkOrchestrations(app: EmbeddedApp): Promise<OrchestrationClient> {
  const clientInput = df.input.durableClient();
  const context = new InvocationContext({
    functionName: 'test',
    options: { trigger: trigger.generic({ type: 'httpTrigger' }), extraInputs: [clientInput] },
  });
  context.extraInputs.set(clientInput, JSON.parse(String((await app.durable.durableClientInput()).string)));
  return durableOrchestrationClient(context);
}

describe('saga instance ids: every order id the contract accepts', () => {
  let app: EmbeddedApp;
  beforeAll(async () => {
    app = newApp();
    await app.sendLedger([
      ledger(
        'B-ids',
        ALL.flatMap((id, index) => order(id, index, 'SKU-1')),
      ),
    ]);
    await app.drain();
  }, 60_000);
  afterAll(() => app.stop());

  it('runs each order’s saga to its end, under the order’s own instance', async () => {
    const report = await app.report();
    expectAccountAddsUp(report);
    expect(report.deadLettered).toEqual([]);
    expect(report.parked).toEqual([]);
    const ended = await Promise.all(
      ALL.map(async (id) => {
        const record = await saga(app, id);
        return { id: shown(id), status: record.status, steps: Object.keys(record.steps).length };
      }),
    );
    expect(ended).toEqual(ALL.map((id) => ({ id: shown(id), status: 'completed', steps: 5 })));
  });

  it('starts one instance per order, each named as the saga record says, and each completed', async () => {
    const instances = new Map(app.durable.instances().map((instance) => [instance.instanceId, instance]));
    expect(app.durable.stats().instancesStarted).toBe(ALL.length);
    for (const id of ALL) {
      const instanceId = fulfillmentInstanceId(id);
      expect({ id: shown(id), instanceId: (await saga(app, id)).instanceId }).toEqual({
        id: shown(id),
        instanceId,
      });
      expect({ id: shown(id), status: instances.get(instanceId)?.runtimeStatus }).toEqual({
        id: shown(id),
        status: 'Completed',
      });
      // Each order was charged once, for its own total.
      expect(await chargeOf(app, id)).toMatchObject({ amount: 100, refunded: 0 });
    }
    expect(new Set(ALL.map(fulfillmentInstanceId)).size).toBe(ALL.length);
  });

  it('cancels each of them after confirmation under its own cancellation instance', async () => {
    const orchestrations = await sdkOrchestrations(app);
    for (const id of ALL) {
      // Kestrel refuses a path holding %00, and no URL holds a lone surrogate: those through the use case.
      const path = id.includes('\u0000') ? undefined : routeFor(id, '/cancel');
      const status =
        path === undefined
          ? (
              await cancelOrder(
                { orders: app.orders, orchestrations, cancellationFeePercent: 10, now: Date.now },
                id,
              )
            ).kind
          : (await app.http({ method: 'POST', path })).status;
      expect({ id: shown(id), status }).toEqual({
        id: shown(id),
        status: path === undefined ? 'accepted' : 202,
      });
    }
    await app.drain();
    const instances = new Set(app.durable.instances().map((instance) => instance.instanceId));
    for (const id of ALL) {
      const record = await saga(app, id);
      expect({ id: shown(id), status: record.status, instanceId: record.instanceId }).toEqual({
        id: shown(id),
        status: 'cancelled',
        instanceId: cancellationInstanceId(id),
      });
      expect(instances.has(cancellationInstanceId(id))).toBe(true);
      expect(await chargeOf(app, id)).toMatchObject({ amount: 100, refunded: 90 });
    }
  });
});

describe('saga instance ids: a cancel reaches only its own order', () => {
  it('POST /api/orders/O-%2541/cancel cancels O-%41, never O-A', async () => {
    // Every saga waits in createShipment until released.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const booking = new Set<string>();
    const app = newApp({
      downstream: (builtIn) => ({
        ...builtIn,
        shipping: {
          ...builtIn.shipping,
          book: async (...args) => {
            booking.add(args[0]);
            await gate;
            return builtIn.shipping.book(...args);
          },
        },
      }),
    });
    const until = async (done: () => Promise<boolean>): Promise<void> => {
      for (const deadline = Date.now() + 20_000; !(await done()) && Date.now() < deadline;)
        await new Promise((resolve) => setTimeout(resolve, 5));
    };
    try {
      // Mallory's order first. Its saga reaches createShipment, or (named as O-A's) ends at once.
      await app.sendLedger([ledger('B-mallory', order('O-%41', 1, 'SKU-1', 'C-mallory'))]);
      await until(
        async () =>
          (await readSagaRecord(app.orders, 'O-%41')) !== undefined &&
          (booking.has('O-%41') || app.durable.instances().every((i) => i.runtimeStatus === 'Completed')),
      );
      // npm start purges finished instances (purgeFinishedAfterMs 0), as retention does on Azure.
      app.durable.purgeInstances({
        createdTimeFrom: 0,
        createdTimeTo: undefined,
        runtimeStatus: ['Completed', 'Failed', 'Terminated'],
      });
      await app.sendLedger([ledger('B-alice', order('O-A', 2, 'SKU-1', 'C-alice'))]);
      await until(async () => booking.has('O-A'));
      expect(booking.has('O-A')).toBe(true);

      const response = await app.http({ method: 'POST', path: 'orders/O-%2541/cancel' });
      expect(response.status).toBe(202);
      release();
      await app.drain();

      const alice = await saga(app, 'O-A');
      expect({ status: alice.status, cancel: alice.cancel }).toEqual({ status: 'completed', cancel: null });
      expect(await chargeOf(app, 'O-A')).toMatchObject({ amount: 100, refunded: 0 });
      const mallory = await saga(app, 'O-%41');
      expect(mallory.status).toBe('cancelled');
      expect(mallory.cancel).toMatchObject({ delivered: true, afterPointOfNoReturn: false });
      expect(await chargeOf(app, 'O-%41')).toMatchObject({ amount: 100, refunded: 100 });
      expect(mallory.instanceId).not.toBe(alice.instanceId);
      expectAccountAddsUp(await app.report());
    } finally {
      release();
      await app.stop();
    }
  });
});

describe('saga instance ids: the HTTP routes', () => {
  let app: EmbeddedApp;
  const IDS = ['O-%41', 'O-A', 'O-%zz', 'O-%', 'O%2F1', 'O+1', 'O 1'];
  beforeAll(async () => {
    app = newApp();
    await app.sendLedger([
      ledger(
        'B-routes',
        IDS.flatMap((id, index) => order(id, index, 'SKU-1')),
      ),
    ]);
    await app.drain();
  }, 60_000);
  afterAll(() => app.stop());

  const orderAt = async (path: string): Promise<{ status: number; orderId?: unknown }> => {
    const response = await app.http({ method: 'GET', path });
    const body = response.body === '' ? {} : (JSON.parse(response.body) as { orderId?: unknown });
    return response.status === 200 ? { status: 200, orderId: body.orderId } : { status: response.status };
  };

  it('decode the route’s orderId once, as Kestrel does: each path reaches one order, its own', async () => {
    expect(await orderAt('orders/O-%2541')).toEqual({ status: 200, orderId: 'O-%41' });
    expect(await orderAt('orders/O-%41')).toEqual({ status: 200, orderId: 'O-A' });
    expect(await orderAt('orders/O-A')).toEqual({ status: 200, orderId: 'O-A' });
    // A % that starts no escape stays as written, so both spellings reach O-%zz and O-%.
    expect(await orderAt('orders/O-%zz')).toEqual({ status: 200, orderId: 'O-%zz' });
    expect(await orderAt('orders/O-%25zz')).toEqual({ status: 200, orderId: 'O-%zz' });
    expect(await orderAt('orders/O-%')).toEqual({ status: 200, orderId: 'O-%' });
    // Kestrel leaves %2F encoded: the segment is the order id O%2F1, never a / that splits it.
    expect(await orderAt('orders/O%2F1')).toEqual({ status: 200, orderId: 'O%2F1' });
    // + is not a space in a path.
    expect(await orderAt('orders/O+1')).toEqual({ status: 200, orderId: 'O+1' });
    expect(await orderAt('orders/O%201')).toEqual({ status: 200, orderId: 'O 1' });
    // Dot segments go before routing, decoded ones too; they cannot climb out of /api.
    expect(await orderAt('orders/O-1/%2E%2E/O-A')).toEqual({ status: 200, orderId: 'O-A' });
    expect(await orderAt('../orders/O-A')).toEqual({ status: 404 });
  });

  it('answer a %-bad route with a 4xx, never a 500', async () => {
    // No such order: the % that starts no escape, or no UTF-8, is part of the id.
    expect(await orderAt('orders/O-%2')).toEqual({ status: 404 });
    expect(await orderAt('orders/%')).toEqual({ status: 404 });
    expect(await orderAt('orders/O-%E0%A4')).toEqual({ status: 404 });
    expect(await orderAt('orders/O-%ED%A0%80')).toEqual({ status: 404 });
    // Kestrel refuses a path that decodes to a null character.
    expect(await orderAt('orders/O-%00')).toEqual({ status: 400 });
    expect((await app.http({ method: 'POST', path: 'orders/%00/cancel' })).status).toBe(400);
    expect(
      (await app.http({ method: 'POST', path: 'orders/O-%zz/review', body: '{"action":"retry"}' })).status,
    ).toBe(409);
    expect((await app.http({ method: 'POST', path: 'orders/O-%2/cancel' })).status).toBe(404);
  });

  it('cancel each order’s own saga, whatever its id holds', async () => {
    for (const [path, orderId] of [
      ['orders/O-%2541/cancel', 'O-%41'],
      ['orders/O-%25/cancel', 'O-%'],
      ['orders/O-%zz/cancel', 'O-%zz'],
      ['orders/O%2F1/cancel', 'O%2F1'],
      ['orders/O+1/cancel', 'O+1'],
    ]) {
      expect({ path, status: (await app.http({ method: 'POST', path })).status }).toEqual({
        path,
        status: 202,
      });
      await app.drain();
      expect({ orderId, status: (await saga(app, orderId)).status }).toEqual({
        orderId,
        status: 'cancelled',
      });
    }
    for (const untouched of ['O-A', 'O 1']) expect((await saga(app, untouched)).status).toBe('completed');
    expect(await chargeOf(app, 'O-A')).toMatchObject({ refunded: 0 });
  });
});

describe('saga instance ids: npm start', () => {
  it('ends the saga of every listed order id, and exits 0 with nothing dead-lettered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saga-instance-ids-'));
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const input = join(dir, 'ledger.ndjson');
      const catalog = join(dir, 'catalog.json');
      const reportPath = join(dir, 'report.json');
      // One batch per order: each goes on the ledger on its own line, as a producer sends them.
      const lines = ALL.map((id, index) => JSON.stringify(ledger(`B-${index}`, order(id, index, 'SKU-1'))));
      writeFileSync(input, `${lines.join('\n')}\n`);
      writeFileSync(catalog, JSON.stringify({ 'SKU-1': 1000 }));
      expect(await main(['--input', input, '--catalog', catalog, '--report', reportPath, '--quiet'])).toBe(0);
      const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
      expect(report.deadLettered).toEqual([]);
      const sagas = new Map(report.orders.map((o) => [o.orderId, o.saga]));
      expect(ALL.map((id) => ({ id: shown(id), saga: sagas.get(id)?.status }))).toEqual(
        ALL.map((id) => ({ id: shown(id), saga: 'completed' })),
      );
    } finally {
      write.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
