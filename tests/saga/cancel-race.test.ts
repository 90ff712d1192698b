/**
 * The cancel-versus-confirm race in the orchestration (src/functions/fulfill-order.ts) has
 * two ways to hear of a cancel, and each must be needed by a test: the saga record (a cancel the API
 * recorded whose event never arrived: its raiseEvent failed) and the cancel event (one raised
 * straight through the durable client, with nothing recorded). The point-of-no-return tests deliver
 * both at once, so deleting either half left them green.
 */
import { TransientError } from '../../src/domain/errors';
import { fulfillmentInstanceId } from '../../src/domain/saga';
import { cancelOrder, type OrdersApiDeps } from '../../src/services/fulfillment/orders-api';
import { CANCEL_EVENT } from '../../src/services/fulfillment/starter';
import type { Downstream } from '../../src/services/fulfillment/downstream-ports';
import {
  fulfillmentInput,
  line,
  NOW,
  orderDocument,
  recordsOfKind,
  storeOrderDocuments,
} from '../support/saga';
import { sagaHarness, stopHarnesses, type SagaHarness } from '../support/saga-orchestration';

afterEach(stopHarnesses);

function gate(): { wait: () => Promise<void>; open: () => void; reached: () => boolean } {
  let open: () => void = () => undefined;
  let reached = false;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { wait: () => ((reached = true), opened), open: () => open(), reached: () => reached };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('condition never met');
}

/** The orders API over a durable client whose raiseEvent fails: the cancel is recorded, never raised. */
function apiLosingEvents(h: SagaHarness): OrdersApiDeps {
  const client = h.driver.client;
  const orchestrations = Object.assign(Object.create(client) as typeof client, {
    raiseEvent: async () => {
      throw new TransientError('durable-unavailable', 'raiseEvent failed');
    },
  });
  return { orders: h.w.orders, orchestrations, cancellationFeePercent: 10, now: () => NOW };
}

function gated(step: 'confirm' | 'ship', at: ReturnType<typeof gate>): (builtIn: Downstream) => Downstream {
  return (builtIn) =>
    step === 'confirm'
      ? {
          ...builtIn,
          confirmations: {
            send: async (...args) => (await at.wait(), builtIn.confirmations.send(...args)),
          },
        }
      : {
          ...builtIn,
          shipping: {
            ...builtIn.shipping,
            book: async (...args) => (await at.wait(), builtIn.shipping.book(...args)),
          },
        };
}

async function submitted(h: SagaHarness, orderId: string): Promise<void> {
  const lines = [line('SKU-A', 2, 50)];
  await storeOrderDocuments(h.w.orders, orderDocument(orderId, 'submitted', lines), lines);
  await h.start(fulfillmentInput(orderId, lines));
}

async function chargeOf(h: SagaHarness, orderId: string): Promise<Record<string, unknown> | undefined> {
  return (await recordsOfKind(h.w, 'charge')).find((charge) => charge.orderId === orderId);
}

describe('a cancel while confirmOrder runs', () => {
  it('recorded, its event lost: the saga reads it off the record it completes, and keeps the fee', async () => {
    const confirming = gate();
    const h = sagaHarness({ downstream: gated('confirm', confirming) });
    await submitted(h, 'O-1');
    await until(confirming.reached);

    await expect(cancelOrder(apiLosingEvents(h), 'O-1')).rejects.toThrow('raiseEvent failed');
    confirming.open();
    await h.driver.runUntilIdle();

    const record = await h.record('O-1');
    expect(record.status).toBe('cancelled');
    expect(record.reason).toBe('cancelled after confirmation: fee 10 kept, 90 refunded');
    expect(await chargeOf(h, 'O-1')).toMatchObject({ amount: 100, refunded: 90 });
  });

  it('raised, nothing recorded: the saga hears the event after confirming, and keeps the fee', async () => {
    const confirming = gate();
    const h = sagaHarness({ downstream: gated('confirm', confirming) });
    await submitted(h, 'O-1');
    await until(confirming.reached);

    await h.driver.client.raiseEvent(fulfillmentInstanceId('O-1'), CANCEL_EVENT, { requestedAt: NOW });
    confirming.open();
    await h.driver.runUntilIdle();

    const record = await h.record('O-1');
    expect(record.status).toBe('cancelled');
    expect(record.reason).toBe('cancelled after confirmation: fee 10 kept, 90 refunded');
    expect(await chargeOf(h, 'O-1')).toMatchObject({ amount: 100, refunded: 90 });
  });
});

describe('a cancel recorded before the point of no return, its event lost', () => {
  it('is read off the record as the saga reaches the point: confirmOrder never runs, all is refunded', async () => {
    const shipping = gate();
    const h = sagaHarness({ downstream: gated('ship', shipping) });
    await submitted(h, 'O-1');
    await until(shipping.reached);

    await expect(cancelOrder(apiLosingEvents(h), 'O-1')).rejects.toThrow('raiseEvent failed');
    shipping.open();
    await h.driver.runUntilIdle();

    const record = await h.record('O-1');
    expect(record.status).toBe('cancelled');
    expect(record.steps.confirmOrder).toBeUndefined();
    expect(await chargeOf(h, 'O-1')).toMatchObject({ amount: 100, refunded: 100 });
  });
});
