/**
 * The point of no return and the API around it, on the durable driver's virtual
 * time: confirmOrder recovers forward, a cancel that comes once the saga reached it keeps the fee and
 * is answered so, repeats and concurrent decisions are answered for what they are.
 */
import { TransientError } from '../../src/domain/errors';
import { fulfillmentInstanceId, MAX_SAGA_REASON_LENGTH } from '../../src/domain/saga';
import { ordersHttp } from '../../src/functions/http/orders-http';
import { KEYS_ONLY } from '../support/principal';
import { testJournal } from '../support/journal';
import { MAX_REQUEST_BODY_BYTES } from '../../src/functions/http/http-support';
import {
  cancelOrder,
  MAX_REVIEW_NOTE_LENGTH,
  reviewSaga,
  type OrdersApiDeps,
} from '../../src/services/fulfillment/orders-api';
import type { Downstream } from '../../src/services/fulfillment/downstream-ports';
import { invokeHttp } from '../support/http';
import {
  fulfillmentInput,
  line,
  NOW,
  orderDocument,
  recordsOfKind,
  stockOf,
  storeOrderDocuments,
} from '../support/saga';
import { sagaHarness, stopHarnesses, type SagaHarness } from '../support/saga-orchestration';

afterEach(stopHarnesses);

/** A gate an operation waits at until the test opens it. */
function gate(): { wait: () => Promise<void>; open: () => void; reached: () => boolean } {
  let open: () => void = () => undefined;
  let reached = false;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    wait: () => ((reached = true), opened),
    open: () => open(),
    reached: () => reached,
  };
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('condition never met');
}

function api(h: SagaHarness): OrdersApiDeps {
  return { orders: h.w.orders, orchestrations: h.driver.client, cancellationFeePercent: 10, now: () => NOW };
}

async function submitted(h: SagaHarness, orderId: string, lines = [line('SKU-A', 1)]): Promise<void> {
  await storeOrderDocuments(h.w.orders, orderDocument(orderId, 'submitted', lines), lines);
  await h.start(fulfillmentInput(orderId, lines));
}

async function chargeOf(h: SagaHarness, orderId: string): Promise<Record<string, unknown> | undefined> {
  return (await recordsOfKind(h.w, 'charge')).find((charge) => charge.orderId === orderId);
}

function withConfirm(send: Downstream['confirmations']['send']): (builtIn: Downstream) => Downstream {
  return (builtIn) => ({ ...builtIn, confirmations: { send: (...args) => send.call(null, ...args) } });
}

describe('confirmOrder recovers forward', () => {
  it('a confirmation sent, then its result lost attempt after attempt, ends completed: never refunded', async () => {
    let sent = 0;
    const h = sagaHarness({
      downstream: (builtIn) =>
        withConfirm(async (...args) => {
          const result = await builtIn.confirmations.send(...args);
          sent += 1;
          if (sent <= 7) throw new TransientError('result-lost', `confirmation result lost (${sent})`);
          return result;
        })(builtIn),
    });
    await submitted(h, 'O-1');
    await h.driver.runUntilIdle();

    const record = await h.record('O-1');
    // Failed before: after 3 attempts the customer, told the order is confirmed, was refunded.
    expect(record.status).toBe('completed');
    expect(sent).toBe(8);
    expect(record.steps.refundPayment).toBeUndefined();
    expect(await chargeOf(h, 'O-1')).toMatchObject({ amount: 10, refunded: 0 });
    expect((await recordsOfKind(h.w, 'confirmation')).length).toBe(1);
  });
});

describe('a cancel and the point of no return', () => {
  it('a cancel while confirmOrder runs is answered and recorded as after confirmation, and keeps the fee', async () => {
    const confirming = gate();
    const h = sagaHarness({
      downstream: (builtIn) =>
        withConfirm(async (...args) => {
          await confirming.wait();
          return builtIn.confirmations.send(...args);
        })(builtIn),
    });
    await submitted(h, 'O-1', [line('SKU-A', 2, 50)]);
    await until(confirming.reached);

    const answer = await cancelOrder(api(h), 'O-1');
    confirming.open();
    await h.driver.runUntilIdle();

    // Failed before: 202 "being undone" with fee null, while the saga kept the fee.
    expect(answer).toEqual({ kind: 'accepted', orderId: 'O-1', afterPointOfNoReturn: true, fee: 10 });
    const record = await h.record('O-1');
    expect(record.cancel).toMatchObject({ afterPointOfNoReturn: true, fee: 10 });
    expect(record.status).toBe('cancelled');
    expect(record.reason).toBe('cancelled after confirmation: fee 10 kept, 90 refunded');
    expect(await chargeOf(h, 'O-1')).toMatchObject({ amount: 100, refunded: 90 });
  });

  it('a cancel recorded before the saga reaches the point still undoes it all', async () => {
    const shipping = gate();
    const h = sagaHarness({
      downstream: (builtIn) => ({
        ...builtIn,
        shipping: {
          ...builtIn.shipping,
          book: async (...args) => {
            await shipping.wait();
            return builtIn.shipping.book(...args);
          },
        },
      }),
    });
    await submitted(h, 'O-1');
    await until(shipping.reached);

    const answer = await cancelOrder(api(h), 'O-1');
    shipping.open();
    await h.driver.runUntilIdle();

    expect(answer).toEqual({ kind: 'accepted', orderId: 'O-1', afterPointOfNoReturn: false, fee: null });
    const record = await h.record('O-1');
    expect(record.status).toBe('cancelled');
    expect(record.steps.confirmOrder).toBeUndefined();
    expect(await chargeOf(h, 'O-1')).toMatchObject({ refunded: 10 });
    expect((await stockOf(h.w, 'SKU-A'))?.available).toBe(10);
  });

  it('three cancels at once: one is accepted, the repeats answer already requested', async () => {
    const reserving = gate();
    const h = sagaHarness({
      downstream: (builtIn) => ({
        ...builtIn,
        inventory: {
          ...builtIn.inventory,
          reserve: async (...args) => {
            await reserving.wait();
            return builtIn.inventory.reserve(...args);
          },
        },
      }),
    });
    await submitted(h, 'O-1');
    await until(reserving.reached);

    const answers = await Promise.all([1, 2, 3].map(() => cancelOrder(api(h), 'O-1')));
    reserving.open();
    await h.driver.runUntilIdle();

    // Failed before: all three answered 202.
    expect(answers.map((answer) => answer.kind).sort()).toEqual([
      'accepted',
      'already-requested',
      'already-requested',
    ]);
    expect((await h.record('O-1')).status).toBe('cancelled');
  });
});

describe('a person decides once per needs-attention episode', () => {
  function releaseFailing(): (builtIn: Downstream) => Downstream {
    return (builtIn) => ({
      ...builtIn,
      inventory: {
        ...builtIn.inventory,
        release: async () => {
          throw new TransientError('store-unavailable', 'inventory store unavailable');
        },
      },
    });
  }

  it('two reviews at once: one is passed, the other refused with the decision taken', async () => {
    const h = sagaHarness({ downstream: releaseFailing() });
    // Over the credit limit: the charge fails for good; the release keeps failing.
    await submitted(h, 'O-1', [line('SKU-A', 1, 5000)]);
    await h.driver.runUntilIdle();
    expect((await h.record('O-1')).status).toBe('needs-attention');

    const answers = await Promise.all([
      reviewSaga(api(h), 'O-1', { action: 'retry' }),
      reviewSaga(api(h), 'O-1', { action: 'resolved', note: 'done by hand' }),
    ]);
    await h.driver.runUntilIdle();

    const passed = answers.filter((answer) => answer.kind === 'passed');
    const refused = answers.filter((answer) => answer.kind === 'not-now');
    expect(passed).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ reason: expect.stringMatching(/already taken on this episode/) });
    // Failed before: both were passed, and the second answered the next episode by itself.
    const record = await h.record('O-1');
    if (passed[0].kind !== 'passed') throw new Error('unreachable');
    expect(record.status).toBe(passed[0].action === 'retry' ? 'needs-attention' : 'compensated');
    // A new episode takes a new decision.
    if (record.status === 'needs-attention') {
      expect(await reviewSaga(api(h), 'O-1', { action: 'resolved' })).toMatchObject({ kind: 'passed' });
      await h.driver.runUntilIdle();
      expect((await h.record('O-1')).status).toBe('compensated');
    }
  });

  it('a note over the limit is refused naming the limit, and so is a body over the limit', async () => {
    const h = sagaHarness({ downstream: releaseFailing() });
    await submitted(h, 'O-1', [line('SKU-A', 1, 5000)]);
    await h.driver.runUntilIdle();

    const huge = 'x'.repeat(3 * 1024 * 1024);
    // Failed before: 202, and a 6 MB saga record the store could not take.
    expect(await reviewSaga(api(h), 'O-1', { action: 'resolved', note: huge })).toEqual({
      kind: 'malformed',
      error: `note must be at most ${MAX_REVIEW_NOTE_LENGTH} characters, got ${huge.length}`,
    });
    const http = ordersHttp(() => api(h), { platform: KEYS_ONLY, journal: testJournal(), now: Date.now });
    const response = await invokeHttp(http, 'reviewOrder', {
      params: { orderId: 'O-1' },
      body: JSON.stringify({ action: 'resolved', note: huge }),
    });
    expect(response).toMatchObject({
      status: 400,
      jsonBody: { error: `body is over the limit of ${MAX_REQUEST_BODY_BYTES} bytes` },
    });
    expect((await h.record('O-1')).status).toBe('needs-attention');
    expect(JSON.stringify(await h.record('O-1')).length).toBeLessThan(20_000);
  });
});

describe('reasons a person can act on', () => {
  it('a step whose retries ran out reads as one line naming its attempts; details go to the log', async () => {
    const h = sagaHarness({
      downstream: (builtIn) => ({
        ...builtIn,
        payments: {
          ...builtIn.payments,
          charge: async () => {
            throw new Error('bank gateway timed out\n    at Gateway.call (/srv/app/gateway.js:10:5)');
          },
        },
      }),
    });
    await submitted(h, 'O-1');
    await h.driver.runUntilIdle();

    const record = await h.record('O-1');
    // Failed before: the reason carried the serialised .NET exception with its stack (about 1 KB).
    expect(record.reason).toBe('chargePayment failed after 3 attempts: bank gateway timed out');
    expect(record.reason?.length).toBeLessThanOrEqual(MAX_SAGA_REASON_LENGTH);
    for (const transition of record.transitions) expect(transition.reason ?? '').not.toMatch(/\n|\$type/);
    expect(await h.runtimeStatus(fulfillmentInstanceId('O-1'))).toBe('Completed');
  });
});
