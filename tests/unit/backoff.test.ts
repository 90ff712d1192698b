/** The handlers' backoff (src/services/backoff.ts): how long one delivery waits, and for what. */
import { PermanentError, TransientError } from '../../src/domain/errors';
import {
  backoffDelays,
  HANDLER_BACKOFF,
  realTimeBackoff,
  rideOut,
  type Backoff,
} from '../../src/services/backoff';

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

describe('backoffDelays', () => {
  it('grows by the factor up to the cap, and cuts the last wait to what is left of the budget', () => {
    expect(backoffDelays({ firstDelayMs: 1_000, factor: 3, maxDelayMs: 5_000, budgetMs: 12_500 })).toEqual([
      1_000, 3_000, 5_000, 3_500,
    ]);
    expect(backoffDelays({ firstDelayMs: 1_000, factor: 2, maxDelayMs: 8_000, budgetMs: 7_000 })).toEqual([
      1_000, 2_000, 4_000,
    ]);
  });

  it('caps even the first wait', () => {
    expect(backoffDelays({ firstDelayMs: 10_000, factor: 2, maxDelayMs: 4_000, budgetMs: 9_000 })).toEqual([
      4_000, 4_000, 1_000,
    ]);
  });

  it('allows no wait with no budget, or with a first wait of zero', () => {
    expect(backoffDelays({ firstDelayMs: 1_000, factor: 2, maxDelayMs: 30_000, budgetMs: 0 })).toEqual([]);
    expect(backoffDelays({ firstDelayMs: 0, factor: 2, maxDelayMs: 30_000, budgetMs: 10_000 })).toEqual([]);
  });
});

describe('rideOut', () => {
  const policy = { firstDelayMs: 100, factor: 2, maxDelayMs: 1_000, budgetMs: 300 };

  it('tries once more than there are waits, then throws the last failure', async () => {
    const slept: number[] = [];
    let calls = 0;
    await expect(
      rideOut({ policy, sleep: async (ms) => void slept.push(ms) }, async () => {
        calls += 1;
        throw new TransientError('store-throttled', `down ${calls}`);
      }),
    ).rejects.toThrow('down 3');
    expect(calls).toBe(3);
    expect(slept).toEqual([100, 200]);
  });

  it('tells each retry: the failure, the attempts failed so far, the wait and the total waited', async () => {
    const notices: unknown[] = [];
    const failures = [new TransientError('a', 'first'), new Error('second, unknown so transient')];
    let calls = 0;
    const result = await rideOut(
      { policy, sleep: async () => {} },
      async () => {
        const failure = failures[calls];
        calls += 1;
        if (failure !== undefined) throw failure;
        return calls;
      },
      (notice) => notices.push(notice),
    );
    expect(result).toBe(3);
    expect(notices).toEqual([
      { error: failures[0], attempt: 1, delayMs: 100, waitedMs: 100 },
      { error: failures[1], attempt: 2, delayMs: 200, waitedMs: 300 },
    ]);
  });

  it('tells nothing and waits nothing when the first attempt succeeds or fails for good', async () => {
    const notices: unknown[] = [];
    const slept: number[] = [];
    const backoff = { policy, sleep: async (ms: number) => void slept.push(ms) };
    await expect(
      rideOut(
        backoff,
        async () => 'ok',
        (n) => notices.push(n),
      ),
    ).resolves.toBe('ok');
    await expect(
      rideOut(
        backoff,
        async () => {
          throw new PermanentError('bad', 'never');
        },
        (n) => notices.push(n),
      ),
    ).rejects.toThrow('never');
    expect(notices).toEqual([]);
    expect(slept).toEqual([]);
  });
});

describe('realTimeBackoff', () => {
  afterEach(() => jest.useRealTimers());

  it('keeps the handler policy by default and sleeps on a timer of the given length', async () => {
    jest.useFakeTimers();
    const backoff = realTimeBackoff();
    expect(backoff.policy).toBe(HANDLER_BACKOFF);
    let woke = false;
    const sleeping = backoff.sleep(500).then(() => {
      woke = true;
    });
    await jest.advanceTimersByTimeAsync(499);
    expect(woke).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await sleeping;
    expect(woke).toBe(true);
  });

  it('takes another policy', () => {
    const policy = { firstDelayMs: 1, factor: 1, maxDelayMs: 1, budgetMs: 1 };
    expect(realTimeBackoff(policy).policy).toBe(policy);
  });
});
