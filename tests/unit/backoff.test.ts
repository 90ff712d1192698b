/** The handlers' backoff (src/services/backoff.ts): how long one delivery waits, and for what. */
import { PermanentError, TransientError } from '../../src/domain/errors';
import { backoffDelays, HANDLER_BACKOFF, rideOut, type Backoff } from '../../src/services/backoff';

function recordingBackoff(): Backoff & { slept: number[] } {
  const slept: number[] = [];
  return {
    policy: HANDLER_BACKOFF,
    slept,
    sleep: async (ms) => {
      slept.push(ms);
    },
  };
}

describe('the handler backoff', () => {
  it('waits 1, 2, 4, 8, 16 then 30 seconds, 3 minutes in all, inside the 5 minutes the host renews the lock', () => {
    const delays = backoffDelays(HANDLER_BACKOFF);
    expect(delays.slice(0, 7)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(delays.reduce((sum, delay) => sum + delay, 0)).toBe(180_000);
    expect(HANDLER_BACKOFF.budgetMs).toBeLessThan(5 * 60_000);
  });

  it('tries a transient failure again until it clears', async () => {
    const backoff = recordingBackoff();
    let calls = 0;
    const result = await rideOut(backoff, async () => {
      calls += 1;
      if (calls < 4) throw new TransientError('store-throttled', 'down');
      return 'done';
    });
    expect(result).toBe('done');
    expect(backoff.slept).toEqual([1_000, 2_000, 4_000]);
  });

  it('throws the last transient failure once the budget is spent, and a permanent one at once', async () => {
    const backoff = recordingBackoff();
    await expect(
      rideOut(backoff, async () => {
        throw new TransientError('store-throttled', 'still down');
      }),
    ).rejects.toThrow('still down');
    expect(backoff.slept.reduce((sum, delay) => sum + delay, 0)).toBe(HANDLER_BACKOFF.budgetMs);

    const once = recordingBackoff();
    await expect(
      rideOut(once, async () => {
        throw new PermanentError('bad', 'never');
      }),
    ).rejects.toThrow('never');
    expect(once.slept).toEqual([]);
  });
});
