/**
 * A delivery's deadline (src/services/delivery-deadline.ts, src/services/backoff.ts): past it no
 * attempt, no wait and no call to a dependency starts, and the failure that led there is what the
 * handler throws.
 */
import { AuthorizationPendingError, TransientError } from '../../src/domain/errors';
import { rideOut, type Backoff, type BackoffPolicy } from '../../src/services/backoff';
import {
  DeliveryDeadlineError,
  deliveryDeadline,
  withinDeadline,
  type Deadline,
} from '../../src/services/delivery-deadline';
import type {
  DocumentContainer,
  FulfillmentInput,
  FulfillmentStarter,
  MessageSender,
} from '../../src/services/ports';

/** A clock that moves only when told to, or when the backoff sleeps on it. */
function manualBackoff(policy: BackoffPolicy): Backoff & { clock: { at: number }; slept: number[] } {
  const clock = { at: 0 };
  const slept: number[] = [];
  return {
    policy,
    clock,
    slept,
    now: () => clock.at,
    sleep: async (ms) => {
      slept.push(ms);
      clock.at += ms;
    },
  };
}

const POLICY: BackoffPolicy = { firstDelayMs: 10, factor: 2, maxDelayMs: 40, budgetMs: 150, deadlineMs: 160 };

describe('rideOut with a deadline', () => {
  it('waits the whole budget when attempts take no time', async () => {
    const backoff = manualBackoff(POLICY);
    await expect(
      rideOut(backoff, async () => {
        throw new TransientError('store-throttled', 'down');
      }),
    ).rejects.toThrow('down');
    expect(backoff.slept).toEqual([10, 20, 40, 40, 40]);
  });

  it('starts no wait that would end past the deadline when attempts are slow', async () => {
    const backoff = manualBackoff(POLICY);
    let attempts = 0;
    await expect(
      rideOut(backoff, async () => {
        attempts += 1;
        backoff.clock.at += 25; // each attempt takes 25 ms of the clock
        throw new TransientError('store-throttled', `down ${attempts}`);
      }),
    ).rejects.toThrow('down 4');
    // 25, wait 10, 60, wait 20, 105, wait 40 (ends 145), 170: past 160, no wait starts.
    expect(backoff.slept).toEqual([10, 20, 40]);
    expect(backoff.clock.at).toBe(170);
  });

  it('hands each attempt the deadline; a call refused there throws the failure that led to it', async () => {
    const backoff = manualBackoff(POLICY);
    const refusal = new AuthorizationPendingError('Azure Service Bus Data Sender', 'queue parked', 'refused');
    let attempts = 0;
    const thrown = await rideOut(backoff, async (deadline) => {
      attempts += 1;
      if (attempts === 1) throw refusal;
      backoff.clock.at = 200; // the second attempt runs past the deadline...
      deadline.check('sending to parked'); // ...so its next call is refused
      return 'never';
    }).catch((error: unknown) => error);
    expect(thrown).toBe(refusal);
  });

  it('a slow first attempt past the deadline throws the deadline itself', async () => {
    const backoff = manualBackoff(POLICY);
    const thrown = await rideOut(backoff, async (deadline) => {
      backoff.clock.at = 161;
      deadline.check('orders.batch');
      return 'never';
    }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(DeliveryDeadlineError);
    expect((thrown as Error).message).toMatch(
      /orders\.batch not started: the delivery is past its deadline of 0\.16 s/,
    );
  });

  it('without a clock (the embedded runtime) keeps no deadline: only the budget of waits', async () => {
    const slept: number[] = [];
    let checked = 0;
    await expect(
      rideOut({ policy: POLICY, sleep: async (ms) => void slept.push(ms) }, async (deadline) => {
        deadline.check('orders.read');
        checked += 1;
        expect(deadline.remainingMs()).toBe(Number.POSITIVE_INFINITY);
        throw new TransientError('store-throttled', 'down');
      }),
    ).rejects.toThrow('down');
    expect(slept).toEqual([10, 20, 40, 40, 40]);
    expect(checked).toBe(6);
  });
});

describe('withinDeadline', () => {
  const passed = { value: false };
  const deadline: Deadline = deliveryDeadline(100, () => (passed.value ? 100 : 99));

  function recordingPorts(): {
    calls: string[];
    ports: { sender: MessageSender; orders: DocumentContainer; telemetry: string };
  } {
    const calls: string[] = [];
    const answer = async (name: string): Promise<never> => {
      calls.push(name);
      return undefined as never;
    };
    const orders: DocumentContainer = {
      name: 'orders',
      partitionKeyPath: '/orderId',
      create: () => answer('create'),
      read: () => answer('read'),
      replace: () => answer('replace'),
      upsert: () => answer('upsert'),
      delete: () => answer('delete'),
      batch: () => answer('batch'),
      query: () => answer('query'),
    };
    return { calls, ports: { sender: { send: () => answer('send') }, orders, telemetry: 'kept' } };
  }

  it('passes every call through before the deadline, and keeps the other dependencies', async () => {
    passed.value = false;
    const { calls, ports } = recordingPorts();
    const held = withinDeadline(ports, deadline);
    expect(held.telemetry).toBe('kept');
    expect(held.orders.name).toBe('orders');
    expect(held.orders.partitionKeyPath).toBe('/orderId');
    await held.sender.send('parked', []);
    await held.orders.create({ id: 'o', orderId: 'o' });
    await held.orders.read('o', 'o');
    await held.orders.replace({ id: 'o', orderId: 'o' });
    await held.orders.upsert({ id: 'o', orderId: 'o' });
    await held.orders.delete('o', 'o');
    await held.orders.batch('o', []);
    await held.orders.query({});
    expect(calls).toEqual(['send', 'create', 'read', 'replace', 'upsert', 'delete', 'batch', 'query']);
  });

  it('refuses every call once it has passed, before reaching the dependency', async () => {
    passed.value = true;
    const { calls, ports } = recordingPorts();
    const held = withinDeadline(ports, deadline);
    await expect(held.sender.send('parked', [])).rejects.toThrow(DeliveryDeadlineError);
    await expect(held.orders.batch('o', [])).rejects.toThrow(/orders\.batch not started/);
    await expect(held.orders.read('o', 'o')).rejects.toBeInstanceOf(TransientError);
    expect(calls).toEqual([]);
  });

  it('holds the saga starter too', async () => {
    passed.value = true;
    const started: string[] = [];
    const fulfillment: FulfillmentStarter = { start: async (input) => void started.push(input.orderId) };
    const held = withinDeadline({ sender: { send: async () => undefined }, fulfillment }, deadline);
    await expect(held.fulfillment.start({ orderId: 'O-1' } as FulfillmentInput)).rejects.toThrow(
      /starting the fulfillment of O-1 not started/,
    );
    expect(started).toEqual([]);
  });
});
