/**
 * Reading, cancelling and reviewing an order's fulfillment (src/services/fulfillment/orders-api.ts),
 * seen through the one HTTP mapping (src/functions/http/http-support.ts), and the HTTP functions
 * themselves (src/functions/http/orders-http.ts).
 */
import type { HttpResponseInit } from '@azure/functions';
import { TransientError } from '../../src/domain/errors';
import type { OrderStatus } from '../../src/domain/order';
import { STEPS, type SagaStatus } from '../../src/domain/saga';
import { ordersHttp } from '../../src/functions/http/orders-http';
import type { Platform } from '../../src/functions/http/actor';
import { EASY_AUTH, KEYS_ONLY, signedIn } from '../support/principal';
import { testJournal } from '../support/journal';
import { ORDER_HEADER_ID, fulfillmentInputOf } from '../../src/services/order-documents';
import * as ordersApi from '../../src/services/fulfillment/orders-api';
import { parseReview, type OrdersApiDeps } from '../../src/services/fulfillment/orders-api';
import { responseOf } from '../../src/functions/http/http-support';
import { recordSagaStatus, runOperation } from '../../src/services/fulfillment/saga-activities';
import { readSagaRecord } from '../../src/services/fulfillment/saga-record';
import {
  NOW,
  NOW_ISO,
  line,
  orderDocument,
  sagaDeps,
  storeOrderDocuments,
  world,
  type World,
} from '../support/saga';
import { invokeHttp, viaHttp } from '../support/http';
import { RecordingOrchestrations } from '../support/orchestrations';

const getOrder = viaHttp(ordersApi.getOrder);
const cancelOrder = viaHttp(ordersApi.cancelOrder);
const reviewSaga = viaHttp(ordersApi.reviewSaga);

interface Harness {
  w: World;
  orchestrations: RecordingOrchestrations;
  deps: OrdersApiDeps;
}

function harness(): Harness {
  const w = world();
  const orchestrations = new RecordingOrchestrations();
  return {
    w,
    orchestrations,
    deps: { orders: w.orders, orchestrations, cancellationFeePercent: 10, now: () => NOW },
  };
}

/** An order of total 250 (5 × SKU-A at 30, 2 × SKU-B at 50). */
async function storeOrder(h: Harness, orderId: string, status: OrderStatus = 'submitted'): Promise<void> {
  const lines = [line('SKU-A', 5, 30), line('SKU-B', 2, 50)];
  const document = orderDocument(orderId, status, lines);
  expect(document.total).toBe(250);
  await storeOrderDocuments(h.w.orders, document, lines);
}

/** Runs the saga's own activities against the built-in downstream: the steps given, then the status. */
async function runSaga(
  h: Harness,
  orderId: string,
  steps: readonly (typeof STEPS)[number][],
  status: SagaStatus,
  reason: string | null = null,
  instanceId = `fulfill-${orderId}`,
): Promise<void> {
  const stored = await h.w.orders.read<ReturnType<typeof orderDocument>>(orderId, ORDER_HEADER_ID);
  if (stored === undefined) throw new Error(`no order ${orderId}`);
  const order = fulfillmentInputOf(stored.document, stored.document.correlationId);
  const deps = sagaDeps(h.w);
  await recordSagaStatus(deps, { order, instanceId: `fulfill-${orderId}`, status: 'running', reason: null });
  for (const step of steps) expect((await runOperation(deps, step, { order })).ok).toBe(true);
  await recordSagaStatus(deps, { order, instanceId, status, reason });
}

describe('an orderId the contract does not allow', () => {
  // `GET /api/orders/a%2Fb` reached the store with `a/b`: Cosmos refuses such an item id (400),
  // which answered 500. No order can have such an id, so the request is malformed.
  it.each([
    ['a/b', /must not contain/],
    ['a\\b', /must not contain/],
    ['a?b', /must not contain/],
    ['a#b', /must not contain/],
    ['x'.repeat(101), /at most 100/],
  ])('%s answers 400 naming the rule, for read, cancel and review alike', async (orderId, rule) => {
    const h = harness();
    for (const result of [
      await getOrder(h.deps, orderId),
      await cancelOrder(h.deps, orderId),
      await reviewSaga(h.deps, orderId, { action: 'retry' }),
    ]) {
      expect(result.status).toBe(400);
      expect((result.body as { error: string }).error).toMatch(rule);
    }
  });
});

describe('getOrder', () => {
  it('answers 404 for an unknown order', async () => {
    const h = harness();
    await expect(getOrder(h.deps, 'O-404')).resolves.toEqual({
      status: 404,
      body: { error: 'order O-404 not found' },
    });
  });

  it('answers 200 with saga null before the saga record exists', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    const result = await getOrder(h.deps, 'O-1');
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      orderId: 'O-1',
      status: 'submitted',
      customerId: 'C-1',
      currency: 'EUR',
      total: 250,
      waitingFor: null,
      saga: null,
    });
    expect(result.body.lines).toHaveLength(2);
  });

  it('answers 200 with the saga once it runs', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory', 'chargePayment'], 'running');

    const result = await getOrder(h.deps, 'O-1');
    expect(result.status).toBe(200);
    expect(result.body.saga).toMatchObject({
      status: 'running',
      reason: null,
      instanceId: 'fulfill-O-1',
      alerts: 0,
      cancel: null,
      steps: {
        reserveInventory: { status: 'completed', attempts: 1 },
        chargePayment: { status: 'completed', result: { amount: 250 } },
      },
      transitions: [{ status: 'running', reason: null, at: NOW_ISO }],
    });
  });
});

describe('cancelOrder', () => {
  it('answers 404 for an unknown order', async () => {
    const h = harness();
    const result = await cancelOrder(h.deps, 'O-404');
    expect(result.status).toBe(404);
    expect(h.orchestrations.events).toEqual([]);
    expect(h.orchestrations.started).toEqual([]);
  });

  it('answers 409 for an order that is not submitted, saying why', async () => {
    const h = harness();
    await storeOrder(h, 'O-1', 'open');
    const result = await cancelOrder(h.deps, 'O-1');
    expect(result.status).toBe(409);
    expect(result.body.error).toEqual(expect.stringContaining('open'));
    expect(result.body.error).toEqual(expect.stringContaining('submitted'));
    expect(h.orchestrations.events).toEqual([]);
  });

  it('answers 409 while the saga record does not exist yet', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    const result = await cancelOrder(h.deps, 'O-1');
    expect(result.status).toBe(409);
    expect(result.body.error).toEqual(expect.stringContaining('not started'));
    expect(await readSagaRecord(h.w.orders, 'O-1')).toBeUndefined();
    expect(h.orchestrations.events).toEqual([]);
  });

  it('cancels a running saga before the point of no return: 202, cancel recorded, event raised', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory', 'chargePayment'], 'running');

    const result = await cancelOrder(h.deps, 'O-1');

    expect(result.status).toBe(202);
    expect((await readSagaRecord(h.w.orders, 'O-1'))?.cancel).toMatchObject({
      requestedAt: NOW_ISO,
      afterPointOfNoReturn: false,
      fee: null,
    });
    expect(h.orchestrations.events).toEqual([
      { instanceId: 'fulfill-O-1', eventName: 'cancel', data: { requestedAt: NOW_ISO } },
    ]);
    expect(h.orchestrations.started).toEqual([]);
  });

  it('cancels a completed saga after the point of no return: 202, 10% fee, cancelConfirmedOrder started', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', STEPS, 'completed');

    const result = await cancelOrder(h.deps, 'O-1');

    expect(result.status).toBe(202);
    expect(result.body.message).toEqual(expect.stringContaining('25'));
    expect((await readSagaRecord(h.w.orders, 'O-1'))?.cancel).toMatchObject({
      requestedAt: NOW_ISO,
      afterPointOfNoReturn: true,
      fee: 25,
    });
    const stored = await h.w.orders.read<ReturnType<typeof orderDocument>>('O-1', ORDER_HEADER_ID);
    expect(h.orchestrations.started).toEqual([
      {
        name: 'cancelConfirmedOrder',
        instanceId: 'cancel-O-1',
        input: {
          order: stored && fulfillmentInputOf(stored.document, 'corr-O-1'),
          completed: ['reserveInventory', 'chargePayment', 'createShipment', 'confirmOrder'],
        },
        started: true,
      },
    ]);
    expect(h.orchestrations.events).toEqual([]);
  });

  it('uses the configured fee percentage', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', STEPS, 'completed');
    const result = await cancelOrder({ ...h.deps, cancellationFeePercent: 20 }, 'O-1');
    expect(result.status).toBe(202);
    expect((await readSagaRecord(h.w.orders, 'O-1'))?.cancel?.fee).toBe(50);
  });

  it('treats a saga still running but past confirmOrder as after the point of no return', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', STEPS, 'running');

    const result = await cancelOrder(h.deps, 'O-1');

    expect(result.status).toBe(202);
    expect((await readSagaRecord(h.w.orders, 'O-1'))?.cancel).toMatchObject({
      requestedAt: NOW_ISO,
      afterPointOfNoReturn: true,
      fee: 25,
    });
    // The running orchestration learns of it and keeps the fee itself: no second orchestration.
    expect(h.orchestrations.events).toEqual([
      { instanceId: 'fulfill-O-1', eventName: 'cancel', data: { requestedAt: NOW_ISO } },
    ]);
    expect(h.orchestrations.started).toEqual([]);
  });

  it.each([
    ['running', ['reserveInventory'] as const],
    ['completed', STEPS],
  ] as const)(
    'cancelling a %s saga twice changes nothing more: 200, already requested',
    async (status, steps) => {
      const h = harness();
      await storeOrder(h, 'O-1');
      await runSaga(h, 'O-1', steps, status);

      expect((await cancelOrder(h.deps, 'O-1')).status).toBe(202);
      const recorded = (await readSagaRecord(h.w.orders, 'O-1'))?.cancel;
      const eventsAfterFirst = h.orchestrations.events.length;
      const startsAfterFirst = h.orchestrations.started.filter((s) => s.started).length;
      expect(eventsAfterFirst + startsAfterFirst).toBe(1);

      const second = await cancelOrder({ ...h.deps, now: () => NOW + 60_000 }, 'O-1');

      expect(second.status).toBe(200);
      expect(second.body.message).toEqual(expect.stringContaining('already requested'));
      expect(h.orchestrations.events).toHaveLength(eventsAfterFirst);
      // Starting cancel-<orderId> again would be a no-op (docs/saga.md); a second start is what must not happen.
      expect(h.orchestrations.started.filter((s) => s.started)).toHaveLength(startsAfterFirst);
      expect((await readSagaRecord(h.w.orders, 'O-1'))?.cancel).toEqual(recorded);
    },
  );

  // A client whose cancel failed (a 5xx) tries again. The cancel is recorded before it is delivered,
  // so the retry must still deliver it, or docs/saga.md is broken: a confirmed order's recorded
  // compensations never run, and a running saga confirms and keeps a fee instead of compensating.
  it('a cancel of a completed saga whose start failed is started when the client retries', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', STEPS, 'completed');
    h.orchestrations.failNext.startNew = new TransientError('durable-unavailable', 'task hub unavailable');

    await expect(cancelOrder(h.deps, 'O-1')).rejects.toThrow('task hub unavailable');
    const retry = await cancelOrder(h.deps, 'O-1');

    expect(retry.status).toBeLessThan(300);
    expect(h.orchestrations.started.filter((s) => s.started)).toEqual([
      expect.objectContaining({ name: 'cancelConfirmedOrder', instanceId: 'cancel-O-1', started: true }),
    ]);
  });

  it('a cancel of a running saga whose event failed is raised when the client retries', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory'], 'running');
    h.orchestrations.failNext.raiseEvent = new TransientError('durable-unavailable', 'task hub unavailable');

    await expect(cancelOrder(h.deps, 'O-1')).rejects.toThrow('task hub unavailable');
    const retry = await cancelOrder(h.deps, 'O-1');

    expect(retry.status).toBeLessThan(300);
    expect(h.orchestrations.events).toEqual([
      { instanceId: 'fulfill-O-1', eventName: 'cancel', data: expect.objectContaining({}) },
    ]);
  });

  it.each(['compensated', 'compensating', 'cancelled', 'needs-attention'] as const)(
    'answers 409 for a %s saga: nothing left to cancel',
    async (status) => {
      const h = harness();
      await storeOrder(h, 'O-1');
      await runSaga(h, 'O-1', ['reserveInventory'], status, 'chargePayment failed: over the limit');

      const result = await cancelOrder(h.deps, 'O-1');

      expect(result.status).toBe(409);
      expect(result.body.error).toEqual(expect.stringContaining(status));
      expect((await readSagaRecord(h.w.orders, 'O-1'))?.cancel).toBeNull();
      expect(h.orchestrations.events).toEqual([]);
      expect(h.orchestrations.started).toEqual([]);
    },
  );
});

describe('reviewSaga', () => {
  it.each([
    ['not an object', 'retry'],
    ['null', null],
    ['an array', [{ action: 'retry' }]],
    ['no body', undefined],
    ['an unknown action', { action: 'redo' }],
    ['no action', { note: 'hi' }],
    ['a note that is not a string', { action: 'retry', note: 42 }],
  ])('answers 400 for %s', async (_what, body) => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory'], 'needs-attention', 'release failed');

    const result = await reviewSaga(h.deps, 'O-1', body);

    expect(result.status).toBe(400);
    expect(typeof result.body.error).toBe('string');
    expect(h.orchestrations.events).toEqual([]);
  });

  it('parses a valid review, keeping the note only when given', () => {
    expect(parseReview({ action: 'retry' })).toEqual({ ok: true, action: 'retry' });
    expect(parseReview({ action: 'resolved', note: 'refunded by hand' })).toEqual({
      ok: true,
      action: 'resolved',
      note: 'refunded by hand',
    });
  });

  it('answers 404 for an unknown order', async () => {
    const h = harness();
    const result = await reviewSaga(h.deps, 'O-404', { action: 'retry' });
    expect(result.status).toBe(404);
    expect(h.orchestrations.events).toEqual([]);
  });

  it('answers 409 when the saga has not started', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    const result = await reviewSaga(h.deps, 'O-1', { action: 'retry' });
    expect(result.status).toBe(409);
    expect(h.orchestrations.events).toEqual([]);
  });

  it.each(['running', 'completed', 'compensated'] as const)(
    'answers 409 when the saga is %s, not needs-attention',
    async (status) => {
      const h = harness();
      await storeOrder(h, 'O-1');
      await runSaga(h, 'O-1', [], status);
      const result = await reviewSaga(h.deps, 'O-1', { action: 'resolved' });
      expect(result.status).toBe(409);
      expect(result.body.error).toEqual(expect.stringContaining(status));
      expect(h.orchestrations.events).toEqual([]);
    },
  );

  it('passes the review to the instance in charge: 202 and a review event with the action and note', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory'], 'needs-attention', 'release failed');

    const result = await reviewSaga(h.deps, 'O-1', { action: 'resolved', note: 'released by hand' });

    expect(result.status).toBe(202);
    expect(h.orchestrations.events).toEqual([
      {
        instanceId: 'fulfill-O-1',
        eventName: 'review',
        data: { action: 'resolved', note: 'released by hand' },
      },
    ]);
  });

  it('sends the review to cancel-<orderId> when the cancellation saga needs attention, without a note if none', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', STEPS, 'needs-attention', 'refund failed', 'cancel-O-1');

    const result = await reviewSaga(h.deps, 'O-1', { action: 'retry' });

    expect(result.status).toBe(202);
    expect(h.orchestrations.events).toEqual([
      { instanceId: 'cancel-O-1', eventName: 'review', data: { action: 'retry' } },
    ]);
  });
});

describe('orders HTTP functions', () => {
  const logged: unknown[][] = [];
  let journal = testJournal();
  beforeEach(() => {
    journal = testJournal();
  });

  function call(
    h: Harness,
    name: string,
    method: string,
    orderId: string,
    body?: string,
    headers?: Record<string, string>,
    platform: Platform = KEYS_ONLY,
  ): Promise<HttpResponseInit> {
    return invokeHttp(
      ordersHttp(() => h.deps, { platform, journal, now: () => NOW }),
      name,
      { method, params: { orderId }, body, logged, headers },
    );
  }

  it('defines the three routes', () => {
    const definitions = ordersHttp(() => harness().deps, { platform: KEYS_ONLY, journal, now: () => NOW });
    expect(definitions.map((d) => [d.name, d.route, d.methods])).toEqual([
      ['getOrder', 'orders/{orderId}', ['GET']],
      ['cancelOrder', 'orders/{orderId}/cancel', ['POST']],
      ['reviewOrder', 'orders/{orderId}/review', ['POST']],
    ]);
  });

  it('GET answers 404 for an unknown order and 200 with the order and saga', async () => {
    const h = harness();
    await expect(call(h, 'getOrder', 'GET', 'O-404')).resolves.toEqual({
      status: 404,
      jsonBody: { error: 'order O-404 not found' },
    });

    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory'], 'running');
    const response = await call(h, 'getOrder', 'GET', 'O-1');
    expect(response).toEqual(responseOf(await ordersApi.getOrder(h.deps, 'O-1')));
    expect(response.status).toBe(200);
    expect(response.jsonBody).toMatchObject({ orderId: 'O-1', total: 250, saga: { status: 'running' } });
  });

  it('POST cancel answers 202, then 200 for the second cancel', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', STEPS, 'completed');

    const first = await call(h, 'cancelOrder', 'POST', 'O-1');
    expect(first.status).toBe(202);
    expect(first.jsonBody).toMatchObject({ orderId: 'O-1' });
    const second = await call(h, 'cancelOrder', 'POST', 'O-1');
    expect(second.status).toBe(200);
    expect(second.jsonBody).toMatchObject({ orderId: 'O-1', message: 'cancellation already requested' });
    expect(h.orchestrations.started).toHaveLength(1);
  });

  it('answers 500 with what the cancel did when its audit record cannot be written: the cancel stands', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', STEPS, 'completed');
    journal.audit = () =>
      Promise.reject(new TransientError('store-throttled', 'the operations container is throttled'));

    const response = await call(h, 'cancelOrder', 'POST', 'O-1');
    expect(response).toEqual({
      status: 500,
      jsonBody: {
        error:
          'the cancel ran, but its audit record could not be written (store-throttled): the operations container is throttled',
        result: expect.objectContaining({ orderId: 'O-1' }),
      },
    });
    expect(h.orchestrations.started).toHaveLength(1);
  });

  it('does not believe a caller-supplied X-MS-CLIENT-PRINCIPAL-NAME when App Service authentication is off', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory'], 'running');
    // Without the platform's authentication nothing strips these headers: anyone holding the admin
    // key could write any name here.
    const response = await call(h, 'cancelOrder', 'POST', 'O-1', undefined, {
      'x-ms-client-principal-name': 'alice@contoso.com',
      'x-ms-client-principal-id': '00000000-0000-0000-0000-00000000a11c',
    });
    expect(response.status).toBe(202);
    expect((await readSagaRecord(h.w.orders, 'O-1'))?.cancel?.requestedBy).toBe('admin-key');
  });

  it('records the principal the platform vouches for when authentication is on, and audits the cancel', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory'], 'running');
    const alice = signedIn('alice@contoso.com', ['Operations.Write']);
    const response = await call(h, 'cancelOrder', 'POST', 'O-1', undefined, alice, EASY_AUTH);
    expect(response.status).toBe(202);
    expect((await readSagaRecord(h.w.orders, 'O-1'))?.cancel).toMatchObject({
      requestedBy: 'entra:alice@contoso.com',
      delivered: true,
    });
    expect(await journal.audited(NOW - 1000, NOW)).toEqual([
      expect.objectContaining({
        action: 'cancel',
        by: 'entra:alice@contoso.com',
        vouchedBy: expect.stringContaining('Operations.Write'),
        request: { orderId: 'O-1' },
        outcome: 'done',
        status: 202,
      }),
    ]);
  });

  it('refuses a signed-in caller without Operations.Write (403), and one the platform names no principal for (401)', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory'], 'running');
    const reader = signedIn('reader@contoso.com', ['Operations.Read']);
    await expect(call(h, 'cancelOrder', 'POST', 'O-1', undefined, reader, EASY_AUTH)).resolves.toEqual({
      status: 403,
      jsonBody: {
        error: 'reader@contoso.com does not hold the app role Operations.Write, which this call needs',
      },
    });
    await expect(
      call(
        h,
        'reviewOrder',
        'POST',
        'O-1',
        '{"action":"retry"}',
        { 'x-ms-client-principal-name': 'x' },
        EASY_AUTH,
      ),
    ).resolves.toMatchObject({ status: 401 });
    expect((await call(h, 'getOrder', 'GET', 'O-1', undefined, reader, EASY_AUTH)).status).toBe(200);
    expect(
      (await call(h, 'getOrder', 'GET', 'O-1', undefined, signedIn('nobody@contoso.com', []), EASY_AUTH))
        .status,
    ).toBe(403);
    expect((await readSagaRecord(h.w.orders, 'O-1'))?.cancel ?? null).toBeNull();
  });

  it('records who reviewed, what and when, in the saga record', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory'], 'needs-attention', 'release failed');
    const review = JSON.stringify({ action: 'resolved', note: 'refunded by hand' });
    const response = await call(
      h,
      'reviewOrder',
      'POST',
      'O-1',
      review,
      signedIn('bob@contoso.com', ['Operations.Write']),
      EASY_AUTH,
    );
    expect(response.status).toBe(202);
    expect((await readSagaRecord(h.w.orders, 'O-1'))?.reviews).toEqual([
      { at: NOW_ISO, by: 'entra:bob@contoso.com', action: 'resolved', note: 'refunded by hand' },
    ]);
  });

  it('POST cancel answers 409 for an open order', async () => {
    const h = harness();
    await storeOrder(h, 'O-1', 'open');
    const response = await call(h, 'cancelOrder', 'POST', 'O-1');
    expect(response.status).toBe(409);
    expect(response.jsonBody).toEqual({ error: expect.stringContaining('open') });
  });

  it('POST review answers 400 for malformed JSON', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory'], 'needs-attention', 'release failed');

    await expect(call(h, 'reviewOrder', 'POST', 'O-1', '{"action": "retry"')).resolves.toEqual({
      status: 400,
      jsonBody: { error: 'body is not valid JSON' },
    });
    expect(h.orchestrations.events).toEqual([]);
  });

  it('POST review answers 400 for an empty body and for an unknown action', async () => {
    const h = harness();
    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory'], 'needs-attention', 'release failed');

    const empty = await call(h, 'reviewOrder', 'POST', 'O-1');
    expect(empty.status).toBe(400);
    expect(empty.jsonBody).toEqual({ error: expect.stringContaining('JSON object') });
    const unknown = await call(h, 'reviewOrder', 'POST', 'O-1', JSON.stringify({ action: 'redo' }));
    expect(unknown.status).toBe(400);
    expect(unknown.jsonBody).toEqual({ error: expect.stringContaining('redo') });
    expect(h.orchestrations.events).toEqual([]);
  });

  it('POST review answers 404, 409 and 202 as the use case does', async () => {
    const h = harness();
    const review = JSON.stringify({ action: 'retry', note: 'bank is back' });

    expect((await call(h, 'reviewOrder', 'POST', 'O-404', review)).status).toBe(404);

    await storeOrder(h, 'O-1');
    await runSaga(h, 'O-1', ['reserveInventory'], 'running');
    const conflict = await call(h, 'reviewOrder', 'POST', 'O-1', review);
    expect(conflict.status).toBe(409);
    expect(conflict.jsonBody).toEqual({ error: expect.stringContaining('running') });

    await runSaga(h, 'O-1', ['reserveInventory'], 'needs-attention', 'release failed');
    const accepted = await call(h, 'reviewOrder', 'POST', 'O-1', review);
    expect(accepted.status).toBe(202);
    expect(accepted.jsonBody).toMatchObject({ orderId: 'O-1' });
    expect(h.orchestrations.events).toEqual([
      { instanceId: 'fulfill-O-1', eventName: 'review', data: { action: 'retry', note: 'bank is back' } },
    ]);
  });
});
