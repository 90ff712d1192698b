/**
 * The fulfillment orchestration under faults, on the durable driver's virtual time:
 * every saga ends, the point of no return holds, and a person's decision is taken once.
 */
import { fulfillmentInstanceId } from '../../src/domain/saga';
import { STEPS } from '../../src/domain/saga';
import { CANCEL_CONFIRMED_ORDER, cancellationInstanceId } from '../../src/services/fulfillment/starter';
import { fulfillmentInput, line, linesIn, stockOf } from '../support/saga';
import { failingRecordWrites, POLICY, sagaHarness, stopHarnesses } from '../support/saga-orchestration';

afterEach(stopHarnesses);

describe('every saga ends', () => {
  it('a status write whose retries run out is tried again later: the saga still completes', async () => {
    let left = 4; // more than the 3 attempts of the retry policy
    const refused = failingRecordWrites((next) => next.status === 'completed' && left-- > 0);
    const h = sagaHarness({ orders: refused.wrap });

    await h.start(await linesIn(h.w, 'O-1', [line('SKU-A', 1)]));
    await h.driver.runUntilIdle();

    expect(refused.failures()).toBe(4);
    expect(await h.runtimeStatus(fulfillmentInstanceId('O-1'))).toBe('Completed');
    expect((await h.record('O-1')).status).toBe('completed');
  });

  it('an alert that cannot be raised does not end the saga: it still waits for a person', async () => {
    const refused = failingRecordWrites((next) => next.alerts > 0);
    const h = sagaHarness({
      orders: refused.wrap,
      downstream: (builtIn) => ({
        ...builtIn,
        inventory: {
          ...builtIn.inventory,
          release: async () => {
            throw new Error('release unavailable');
          },
        },
      }),
    });

    // Over the credit limit: the charge fails for good, and the release of the stock keeps failing.
    await h.start(await linesIn(h.w, 'O-2', [line('SKU-A', 1, 5000)]));
    await h.driver.runUntilIdle();

    expect(refused.failures()).toBeGreaterThan(0);
    expect(await h.runtimeStatus(fulfillmentInstanceId('O-2'))).toBe('Running');
    expect((await h.record('O-2')).status).toBe('needs-attention');
  });
});

describe('one seed, one run', () => {
  it('the activity faults an order meets do not depend on which other orders run beside it', async () => {
    const faults = { activityTransient: 0.3, activityResultLost: 0.2, seed: 11 };
    const attemptsOf = async (orderIds: string[]): Promise<unknown> => {
      const h = sagaHarness({ faults, policy: { retry: { ...POLICY.retry, maxAttempts: 10 } } });
      for (const orderId of orderIds) await h.start(await linesIn(h.w, orderId, [line('SKU-A', 1)]));
      await h.driver.runUntilIdle();
      const record = await h.record('O-1');
      return {
        status: record.status,
        attempts: Object.fromEntries(
          Object.entries(record.steps).map(([name, step]) => [name, step?.attempts]),
        ),
        history: h.driver.history(fulfillmentInstanceId('O-1')).length,
      };
    };

    const alone = await attemptsOf(['O-1']);
    expect(await attemptsOf(['O-2', 'O-3', 'O-1', 'O-4'])).toEqual(alone);
    expect(await attemptsOf(['O-1', 'O-5'])).toEqual(alone);
  });
});

describe('holds of finished orders leave the stock document', () => {
  it('a completed order holds nothing in the stock; cancelled after confirmation, its stock comes back', async () => {
    const h = sagaHarness();
    await h.start(await linesIn(h.w, 'O-1', [line('SKU-A', 2)]));
    await h.start(await linesIn(h.w, 'O-2', [line('SKU-A', 1, 5000)])); // over the credit limit
    await h.driver.runUntilIdle();

    expect((await h.record('O-1')).status).toBe('completed');
    expect((await h.record('O-2')).status).toBe('compensated');
    // Failed before: the completed order's hold stayed in the stock document for ever.
    expect(await stockOf(h.w, 'SKU-A')).toMatchObject({ available: 8, holds: {} });

    await h.driver.client.startNew(CANCEL_CONFIRMED_ORDER, cancellationInstanceId('O-1'), {
      order: fulfillmentInput('O-1', [line('SKU-A', 2)]),
      completed: [...STEPS],
    });
    await h.driver.runUntilIdle();
    expect((await h.record('O-1')).status).toBe('cancelled');
    expect(await stockOf(h.w, 'SKU-A')).toMatchObject({ available: 10, holds: {} });
  });
});
