import * as df from 'durable-functions';
import type { ActivityHandler, OrchestrationContext, OrchestrationHandler, Task } from 'durable-functions';
import { PermanentError, TransientError, errorMessage } from '../../src/domain/errors';
import type { ActivityDefinition, OrchestrationDefinition } from '../../src/functions/definition';
import {
  createDurableDriver as createRegisteredDriver,
  type DurableDriver,
  type DurableDriverOptions,
  type HistoryEvent,
} from '../../local/durable/driver';
import { registerAndCapture } from '../../local/worker/register';

const START = Date.parse('2024-05-01T08:00:00.000Z');

function orchestration(name: string, handler: OrchestrationHandler): OrchestrationDefinition {
  return { name, handler };
}

function activity(name: string, handler: ActivityHandler): ActivityDefinition {
  return { name, handler };
}

type DriverOptions = Omit<DurableDriverOptions, 'functions'> & {
  orchestrations: OrchestrationDefinition[];
  activities: ActivityDefinition[];
};

/** A driver over these definitions, registered through `df.app.*` as the app registers its own. */
function createDurableDriver({ orchestrations, activities, ...options }: DriverOptions): DurableDriver {
  return createRegisteredDriver({
    ...options,
    functions: registerAndCapture({ orchestrations, activities }),
  });
}

const drivers: DurableDriver[] = [];

function virtualDriver(options: Omit<DriverOptions, 'clock'>): DurableDriver {
  const driver = createDurableDriver({ ...options, clock: { mode: 'virtual', start: START } });
  drivers.push(driver);
  driver.start();
  return driver;
}

afterEach(async () => {
  await Promise.all(drivers.splice(0).map((driver) => driver.stop()));
});

function types(history: readonly HistoryEvent[]): number[] {
  return history.map((event) => event.EventType);
}

async function statusOf(driver: DurableDriver, instanceId: string) {
  const status = await driver.client.getStatus(instanceId);
  if (!status) throw new Error(`no instance ${instanceId}`);
  return status;
}

// -------------------------------------------------------------------------------------------------
// Toy orchestrations
// -------------------------------------------------------------------------------------------------

const sequential = orchestration('sequential', function* (context: OrchestrationContext) {
  const start = context.df.getInput<number>();
  const doubled: number = yield context.df.callActivity('double', start);
  const plusOne: number = yield context.df.callActivity('addOne', doubled);
  const greeting: string = yield context.df.callActivity('greet', String(plusOne));
  return { doubled, plusOne, greeting };
});

const arithmetic = [
  activity('double', (n: number) => n * 2),
  activity('addOne', (n: number) => n + 1),
  // A string input travels JSON-encoded in the action; the activity must get the plain string.
  activity('greet', (who: string) => `hello ${who}`),
];

const reserveOrRelease = orchestration('reserveOrRelease', function* (context: OrchestrationContext) {
  try {
    yield context.df.callActivity('reserve', context.df.getInput());
    return { reserved: true };
  } catch (error) {
    const message = errorMessage(error);
    yield context.df.callActivity('release', context.df.getInput());
    return { reserved: false, message };
  }
});

function retrying(name: string, activityName: string, retry: df.RetryOptions): OrchestrationDefinition {
  return orchestration(name, function* (context: OrchestrationContext) {
    try {
      const result: unknown = yield context.df.callActivityWithRetry(
        activityName,
        retry,
        context.df.getInput(),
      );
      return { ok: true, result };
    } catch (error) {
      return { ok: false, message: errorMessage(error) };
    }
  });
}

function backoff(firstMs: number, attempts: number, coefficient?: number): df.RetryOptions {
  const options = new df.RetryOptions(firstMs, attempts);
  if (coefficient !== undefined) options.backoffCoefficient = coefficient;
  return options;
}

const REVIEW_TIMEOUT_MS = 60 * 60 * 1000;

const review = orchestration('review', function* (context: OrchestrationContext) {
  context.df.setCustomStatus({ stage: 'awaiting-review' });
  const deadline = new Date(context.df.currentUtcDateTime.getTime() + REVIEW_TIMEOUT_MS);
  const timeout = context.df.createTimer(deadline);
  const decision = context.df.waitForExternalEvent('review');
  const winner: Task = yield context.df.Task.any([decision, timeout]);
  if (winner === decision) {
    timeout.cancel();
    return { via: 'review', decision: decision.result };
  }
  return { via: 'timeout', at: context.df.currentUtcDateTime.toISOString() };
});

// -------------------------------------------------------------------------------------------------

describe('embedded durable driver', () => {
  test('runs sequential activities, threading each output into the next input', async () => {
    const driver = virtualDriver({ orchestrations: [sequential], activities: arithmetic });

    await expect(driver.client.startNew('sequential', 'seq-1', 20)).resolves.toBe(true);
    await driver.runUntilIdle();

    const status = await statusOf(driver, 'seq-1');
    expect(status.runtimeStatus).toBe('Completed');
    expect(status.output).toEqual({ doubled: 40, plusOne: 41, greeting: 'hello 41' });
    expect(status.input).toBe(20);
    // One new event per episode, framed by OrchestratorStarted/Completed, as the extension records it.
    expect(types(driver.history('seq-1'))).toEqual([12, 0, 4, 13, 12, 5, 4, 13, 12, 5, 4, 13, 12, 5, 13, 1]);
    const scheduled = driver.history('seq-1').filter((event) => event.EventType === 4);
    expect(scheduled.map((event) => event.EventId)).toEqual([0, 1, 2]);
    expect(driver.stats()).toMatchObject({ episodes: 4, activitiesRun: 3, activityFailures: 0 });
  });

  test('a permanent activity failure reaches the orchestrator catch, as the extension words it', async () => {
    const released: unknown[] = [];
    const driver = virtualDriver({
      orchestrations: [reserveOrRelease],
      activities: [
        activity('reserve', () => {
          throw new PermanentError('out-of-stock', 'sku-9 is out of stock');
        }),
        activity('release', (input: unknown) => {
          released.push(input);
          return null;
        }),
      ],
    });

    await driver.client.startNew('reserveOrRelease', 'order-1', { sku: 'sku-9' });
    await driver.runUntilIdle();

    const status = await statusOf(driver, 'order-1');
    expect(status.runtimeStatus).toBe('Completed');
    const output = status.output as { reserved: boolean; message: string };
    expect(output.reserved).toBe(false);
    expect(output.message).toMatch(/^Activity function 'reserve' failed: {2}sku-9 is out of stock \n \{/);
    expect(released).toEqual([{ sku: 'sku-9' }]);
    const failed = driver.history('order-1').find((event) => event.EventType === 6);
    expect(failed).toMatchObject({
      TaskScheduledId: 0,
      Reason: "Activity function 'reserve' failed:  sku-9 is out of stock",
    });
    expect(driver.stats().activityFailures).toBe(1);
  });

  test('retries a transient failure with exponential backoff until it clears', async () => {
    let calls = 0;
    const driver = virtualDriver({
      orchestrations: [retrying('charge', 'chargePayment', backoff(1000, 5, 2))],
      activities: [
        activity('chargePayment', (input: { amount: number }) => {
          calls++;
          if (calls <= 2) throw new TransientError('payment-timeout', 'payment service timed out');
          return { charged: input.amount };
        }),
      ],
    });

    await driver.client.startNew('charge', 'charge-1', { amount: 120 });
    await driver.runUntilIdle();

    expect((await statusOf(driver, 'charge-1')).output).toEqual({ ok: true, result: { charged: 120 } });
    expect(calls).toBe(3);
    expect(driver.stats()).toMatchObject({ timersFired: 2, activitiesRun: 3, activityFailures: 2 });
    // Backoff of 1 s then 2 s, on the virtual clock only.
    expect(driver.now() - START).toBe(3000);
    const history = driver.history('charge-1');
    const timers = history.filter((event) => event.EventType === 10);
    expect(timers.map((event) => [event.EventId, event.EventType === 10 && event.FireAt])).toEqual([
      [1, new Date(START + 1000).toISOString()],
      [3, new Date(START + 3000).toISOString()],
    ]);
    // The attempts after a timer take the next ids: failure 0 → timer 1 → attempt 2 → timer 3 → attempt 4.
    expect(history.filter((event) => event.EventType === 4).map((event) => event.EventId)).toEqual([0, 2, 4]);
  });

  test('when retries are exhausted the failure reaches the catch after the last backoff timer', async () => {
    let calls = 0;
    const driver = virtualDriver({
      orchestrations: [retrying('ship', 'createShipment', backoff(500, 3))],
      activities: [
        activity('createShipment', () => {
          calls++;
          throw new TransientError('carrier-unavailable', `carrier down (attempt ${calls})`);
        }),
      ],
    });

    await driver.client.startNew('ship', 'ship-1', { orderId: 'o-1' });
    await driver.runUntilIdle();

    const output = (await statusOf(driver, 'ship-1')).output as { ok: boolean; message: string };
    expect(output.ok).toBe(false);
    expect(output.message).toContain('carrier down (attempt 3)');
    expect(calls).toBe(3);
    // The SDK waits for a timer after the last attempt too: three attempts, three timers.
    expect(driver.stats().timersFired).toBe(3);
    expect(driver.now() - START).toBe(1500);
  });

  test('Task.all runs activities in parallel, bounded by maxConcurrentActivities', async () => {
    let running = 0;
    let most = 0;
    const fanOut = orchestration('fanOut', function* (context: OrchestrationContext) {
      const items = context.df.getInput<number[]>();
      const squares: number[] = yield context.df.Task.all(
        items.map((n) => context.df.callActivity('square', n)),
      );
      const total: number = yield context.df.callActivity('sum', squares);
      return { squares, total };
    });
    const driver = virtualDriver({
      orchestrations: [fanOut],
      maxConcurrentActivities: 3,
      activities: [
        activity('square', async (n: number) => {
          running++;
          most = Math.max(most, running);
          await new Promise((resolve) => setImmediate(resolve));
          running--;
          return n * n;
        }),
        activity('sum', (values: number[]) => values.reduce((a, b) => a + b, 0)),
      ],
    });

    await driver.client.startNew('fanOut', 'fan-1', [1, 2, 3, 4, 5, 6, 7]);
    await driver.runUntilIdle();

    expect((await statusOf(driver, 'fan-1')).output).toEqual({
      squares: [1, 4, 9, 16, 25, 36, 49],
      total: 140,
    });
    expect(most).toBe(3);
    const scheduled = driver.history('fan-1').filter((event) => event.EventType === 4);
    expect(scheduled.map((event) => event.EventId)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  test('Task.any: the review event wins, and runUntilIdle does not run the review timeout out', async () => {
    const driver = virtualDriver({ orchestrations: [review], activities: [] });
    await driver.client.startNew('review', 'review-1', null);
    await driver.runUntilIdle();

    // Waiting for a person: the clock did not move to the timeout.
    expect(driver.now()).toBe(START);
    expect(driver.instances()).toEqual([
      expect.objectContaining({
        instanceId: 'review-1',
        runtimeStatus: 'Running',
        waitingFor: 'event',
        pendingTimers: 1,
      }),
    ]);
    expect((await statusOf(driver, 'review-1')).customStatus).toEqual({ stage: 'awaiting-review' });

    await driver.client.raiseEvent('review-1', 'review', { action: 'resolved', by: 'ops' });
    await driver.runUntilIdle();

    const status = await statusOf(driver, 'review-1');
    expect(status.runtimeStatus).toBe('Completed');
    expect(status.output).toEqual({ via: 'review', decision: { action: 'resolved', by: 'ops' } });
    expect(driver.stats().timersFired).toBe(0);
  });

  test('Task.any: the timeout wins when the test moves the clock past it', async () => {
    const driver = virtualDriver({ orchestrations: [review], activities: [] });
    await driver.client.startNew('review', 'review-2', null);
    await driver.runUntilIdle();

    await driver.advanceTime(REVIEW_TIMEOUT_MS - 1);
    expect((await statusOf(driver, 'review-2')).runtimeStatus).toBe('Running');

    await driver.advanceTime(1);
    const status = await statusOf(driver, 'review-2');
    expect(status.runtimeStatus).toBe('Completed');
    // currentUtcDateTime follows the driver clock.
    expect(status.output).toEqual({ via: 'timeout', at: new Date(START + REVIEW_TIMEOUT_MS).toISOString() });
    // An event after completion is dropped, as the durable client does (HTTP 410).
    await expect(driver.client.raiseEvent('review-2', 'review', { action: 'late' })).resolves.toBeUndefined();
  });

  test('an event raised before the orchestrator waits for it is kept and delivered', async () => {
    const approval = orchestration('approval', function* (context: OrchestrationContext) {
      const prepared: string = yield context.df.callActivity('prepare', context.df.getInput());
      const decision: unknown = yield context.df.waitForExternalEvent('approve');
      return { prepared, decision };
    });
    const driver = createDurableDriver({
      orchestrations: [approval],
      activities: [activity('prepare', (id: string) => `prepared ${id}`)],
      clock: { mode: 'virtual', start: START },
    });
    drivers.push(driver);

    await driver.client.startNew('approval', 'approval-1', 'a-1');
    // Raised before anything ran: it is recorded before the orchestrator reaches the wait.
    await driver.client.raiseEvent('approval-1', 'approve', { ok: true });
    driver.start();
    await driver.runUntilIdle();

    const status = await statusOf(driver, 'approval-1');
    expect(status.output).toEqual({ prepared: 'prepared a-1', decision: { ok: true } });
    const history = types(driver.history('approval-1'));
    expect(history.indexOf(15)).toBeLessThan(history.indexOf(5));
  });

  test('startNew with an existing id returns false and runs nothing new', async () => {
    let calls = 0;
    const once = orchestration('once', function* (context: OrchestrationContext) {
      return yield context.df.callActivity('count', context.df.getInput());
    });
    const driver = virtualDriver({
      orchestrations: [once],
      activities: [activity('count', (input: string) => `${input}:${++calls}`)],
    });

    await expect(driver.client.startNew('once', 'once-1', 'first')).resolves.toBe(true);
    await expect(driver.client.startNew('once', 'once-1', 'second')).resolves.toBe(false);
    await driver.runUntilIdle();
    await expect(driver.client.startNew('once', 'once-1', 'third')).resolves.toBe(false);
    await driver.runUntilIdle();

    expect((await statusOf(driver, 'once-1')).output).toBe('first:1');
    expect(calls).toBe(1);
    expect(driver.stats()).toMatchObject({ instancesStarted: 1, activitiesRun: 1 });
    await expect(driver.client.getStatus('unknown')).resolves.toBeUndefined();
    await expect(driver.client.raiseEvent('unknown', 'x', null)).rejects.toThrow(
      "No instance with ID 'unknown' found.",
    );
  });

  test('replaying a finished orchestration over its full history schedules nothing new', async () => {
    let flaky = 0;
    const driver = virtualDriver({
      orchestrations: [sequential, review, retrying('flaky', 'sometimes', backoff(100, 4, 3))],
      activities: [
        ...arithmetic,
        activity('sometimes', () => {
          flaky++;
          if (flaky < 3) throw new TransientError('flaky', 'try again');
          return 'done';
        }),
      ],
    });
    await driver.client.startNew('sequential', 'seq-r', 5);
    await driver.client.startNew('review', 'review-r', null);
    await driver.client.startNew('flaky', 'flaky-r', null);
    await driver.runUntilIdle();
    await driver.client.raiseEvent('review-r', 'review', 'approved');
    await driver.runUntilIdle();

    for (const instanceId of ['seq-r', 'review-r', 'flaky-r']) {
      const status = await statusOf(driver, instanceId);
      expect(status.runtimeStatus).toBe('Completed');
      const before = driver.stats().episodes;
      const check = await driver.replayOnly(instanceId);
      expect(check).toEqual({ newActions: 0, isDone: true, output: status.output });
      expect(driver.stats().episodes).toBe(before);
    }
  });

  test('an unhandled orchestrator failure marks the instance Failed with its message', async () => {
    const explode = orchestration('explode', function* (context: OrchestrationContext) {
      context.df.setCustomStatus({ step: 'before-boom' });
      yield context.df.callActivity('double', 1);
      throw new Error('the saga record is corrupt');
    });
    const driver = virtualDriver({ orchestrations: [explode], activities: arithmetic });

    await driver.client.startNew('explode', 'explode-1', null);
    await driver.runUntilIdle();

    const status = await statusOf(driver, 'explode-1');
    expect(status.runtimeStatus).toBe('Failed');
    expect(status.output).toBe("Orchestrator function 'explode' failed: the saga record is corrupt");
    expect(status.customStatus).toEqual({ step: 'before-boom' });
    expect(driver.instances()[0].waitingFor).toBeUndefined();
  });

  test('a replay that schedules something else fails the instance as non-deterministic', async () => {
    let variant = 'first';
    const fickle = orchestration('fickle', function* (context: OrchestrationContext) {
      yield context.df.callActivity(variant === 'first' ? 'double' : 'addOne', 1);
      yield context.df.waitForExternalEvent('go');
      return 'unreachable';
    });
    const driver = virtualDriver({ orchestrations: [fickle], activities: arithmetic });
    await driver.client.startNew('fickle', 'fickle-1', null);
    await driver.runUntilIdle();

    variant = 'second';
    await driver.client.raiseEvent('fickle-1', 'go', null);
    await driver.runUntilIdle();

    const status = await statusOf(driver, 'fickle-1');
    expect(status.runtimeStatus).toBe('Failed');
    expect(status.output).toMatch(/Non-deterministic workflow detected/);
  });

  test('isReplaying lets an orchestrator log once per step despite replays', async () => {
    const lines: string[] = [];
    const chatty = orchestration('chatty', function* (context: OrchestrationContext) {
      for (const step of ['a', 'b', 'c']) {
        if (!context.df.isReplaying) context.log(`step ${step}`);
        yield context.df.callActivity('double', 1);
      }
      return 'ok';
    });
    const driver = virtualDriver({
      orchestrations: [chatty],
      activities: arithmetic,
      log: (functionName, _level, message) => lines.push(`${functionName}: ${message}`),
    });
    await driver.client.startNew('chatty', 'chatty-1', null);
    await driver.runUntilIdle();

    expect(lines).toEqual(['chatty: step a', 'chatty: step b', 'chatty: step c']);
  });

  test('injected transient activity faults are absorbed by the retry policy: same output', async () => {
    const saga = orchestration('saga', function* (context: OrchestrationContext) {
      const retry = backoff(200, 10, 2);
      const order = context.df.getInput<{ id: string; total: number }>();
      const steps: unknown[] = [];
      for (const step of ['reserve', 'charge', 'ship', 'confirm']) {
        steps.push(yield context.df.callActivityWithRetry('step', retry, { step, order }));
      }
      return steps;
    });
    const activities = [
      activity('step', (input: { step: string; order: { id: string; total: number } }) => ({
        step: input.step,
        key: `${input.order.id}:${input.step}`,
      })),
    ];
    const orders = Array.from({ length: 8 }, (_, i) => ({ id: `o-${i}`, total: 10 * i }));

    const run = async (faults: DurableDriverOptions['faults']) => {
      const driver = virtualDriver({ orchestrations: [saga], activities, faults: { ...faults, seed: 7 } });
      for (const order of orders) await driver.client.startNew('saga', `saga-${order.id}`, order);
      await driver.runUntilIdle();
      const outputs = await Promise.all(orders.map(async (order) => statusOf(driver, `saga-${order.id}`)));
      return {
        outputs: outputs.map((status) => [status.runtimeStatus, status.output]),
        stats: driver.stats(),
      };
    };

    const clean = await run(undefined);
    const faulty = await run({ activityTransient: 0.3 });
    expect(await run({ activityTransient: 0.3 })).toEqual(faulty);

    expect(faulty.outputs).toEqual(clean.outputs);
    expect(clean.stats.faultsInjected).toBe(0);
    expect(faulty.stats.faultsInjected).toBeGreaterThan(0);
    expect(faulty.stats.timersFired).toBe(faulty.stats.faultsInjected);
    expect(faulty.stats.activitiesRun).toBe(clean.stats.activitiesRun + faulty.stats.faultsInjected);
  });

  test('a retry backoff raced with a cancel event is still driven; a cancel wins when it comes', async () => {
    const stepsOrCancel = orchestration('stepsOrCancel', function* (context: OrchestrationContext) {
      const cancel = context.df.waitForExternalEvent('cancel');
      const done: string[] = [];
      for (const step of ['reserve', 'charge', 'ship']) {
        const input = { step, id: context.df.instanceId };
        const task = context.df.callActivityWithRetry('flaky', backoff(1000, 5), input);
        const first: Task = yield context.df.Task.any([task, cancel]);
        if (first === cancel) return { done, cancelled: true };
        done.push(String(task.result));
      }
      const next: Task = yield context.df.Task.any([context.df.waitForExternalEvent('ack'), cancel]);
      return { done, cancelled: next === cancel };
    });
    const attempts = new Map<string, number>();
    const driver = virtualDriver({
      orchestrations: [stepsOrCancel],
      activities: [
        activity('flaky', (input: { step: string; id: string }) => {
          const key = `${input.id}:${input.step}`;
          const attempt = (attempts.get(key) ?? 0) + 1;
          attempts.set(key, attempt);
          if (attempt < 3) throw new TransientError('busy', `${input.step} busy`);
          return input.step;
        }),
      ],
    });
    await driver.client.startNew('stepsOrCancel', 'steps-a', null);
    await driver.client.startNew('stepsOrCancel', 'steps-b', null);
    await driver.client.raiseEvent('steps-b', 'cancel', { by: 'client' });
    await driver.runUntilIdle();

    // Two backoffs of 1 s per step, although the instance waited for a cancel all along.
    expect(driver.now() - START).toBe(6000);
    expect((await statusOf(driver, 'steps-b')).output).toEqual({ done: [], cancelled: true });
    expect(driver.instances().find((i) => i.instanceId === 'steps-a')).toMatchObject({
      waitingFor: 'event',
      pendingTimers: 0,
    });

    await driver.client.raiseEvent('steps-a', 'cancel', null);
    await driver.runUntilIdle();
    expect((await statusOf(driver, 'steps-a')).output).toEqual({
      done: ['reserve', 'charge', 'ship'],
      cancelled: true,
    });
  });

  test('a cancelled timer is dropped: the instance then waits only for the person', async () => {
    const twoStep = orchestration('twoStep', function* (context: OrchestrationContext) {
      const timeout = context.df.createTimer(
        new Date(context.df.currentUtcDateTime.getTime() + REVIEW_TIMEOUT_MS),
      );
      const decision = context.df.waitForExternalEvent('review');
      const winner: Task = yield context.df.Task.any([decision, timeout]);
      if (winner !== decision) return 'timed out';
      timeout.cancel();
      const confirmation: unknown = yield context.df.waitForExternalEvent('confirm');
      return { decision: decision.result, confirmation };
    });
    const driver = virtualDriver({ orchestrations: [twoStep], activities: [] });
    await driver.client.startNew('twoStep', 'two-1', null);
    await driver.runUntilIdle();
    await driver.client.raiseEvent('two-1', 'review', 'retry');
    await driver.runUntilIdle();

    expect(driver.instances()).toEqual([expect.objectContaining({ waitingFor: 'event', pendingTimers: 0 })]);
    await driver.advanceTime(2 * REVIEW_TIMEOUT_MS);
    await driver.client.raiseEvent('two-1', 'confirm', 'yes');
    await driver.runUntilIdle();

    expect((await statusOf(driver, 'two-1')).output).toEqual({ decision: 'retry', confirmation: 'yes' });
    expect(driver.stats().timersFired).toBe(0);
  });

  test('Task.all fails fast; the completions that arrive later do not disturb the next steps', async () => {
    const compensate = orchestration('compensate', function* (context: OrchestrationContext) {
      let firstError = '';
      try {
        yield context.df.Task.all([
          context.df.callActivity('fails', 'a'),
          context.df.callActivity('slow', 'b'),
        ]);
      } catch (error) {
        firstError = error instanceof Error ? error.message.split(' \n ')[0] : String(error);
      }
      const after: string = yield context.df.callActivity('slow', 'c');
      return { firstError, after };
    });
    const driver = virtualDriver({
      orchestrations: [compensate],
      activities: [
        activity('fails', () => {
          throw new PermanentError('refused', 'refused');
        }),
        activity('slow', async (input: string) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return `slow ${input}`;
        }),
      ],
    });
    await driver.client.startNew('compensate', 'comp-1', null);
    await driver.runUntilIdle();

    expect((await statusOf(driver, 'comp-1')).output).toEqual({
      firstError: "Activity function 'fails' failed:  refused",
      after: 'slow c',
    });
    expect(driver.stats().activitiesRun).toBe(3);
    await expect(driver.replayOnly('comp-1')).resolves.toMatchObject({ newActions: 0, isDone: true });
  });

  test('timers: a month-long one fires once at its time, a past one at once', async () => {
    const waits = orchestration('waits', function* (context: OrchestrationContext) {
      const now = context.df.currentUtcDateTime.getTime();
      yield context.df.createTimer(new Date(now - 1000));
      const afterPast = context.df.currentUtcDateTime.toISOString();
      yield context.df.createTimer(new Date(now + 30 * 24 * 3600 * 1000));
      return { afterPast, afterMonth: context.df.currentUtcDateTime.toISOString() };
    });
    const driver = virtualDriver({ orchestrations: [waits], activities: [] });
    await driver.client.startNew('waits', 'waits-1', null);
    await driver.runUntilIdle();

    expect((await statusOf(driver, 'waits-1')).output).toEqual({
      afterPast: new Date(START).toISOString(),
      afterMonth: new Date(START + 30 * 24 * 3600 * 1000).toISOString(),
    });
    expect(driver.stats().timersFired).toBe(2);
  });

  test('continueAsNew starts the instance over with a fresh history', async () => {
    const countdown = orchestration('countdown', function* (context: OrchestrationContext) {
      const left = context.df.getInput<number>();
      if (left === 0) return 'liftoff';
      yield context.df.callActivity('double', left);
      context.df.continueAsNew(left - 1);
      return undefined;
    });
    const driver = virtualDriver({ orchestrations: [countdown], activities: arithmetic });
    await driver.client.startNew('countdown', 'count-1', 3);
    await driver.runUntilIdle();

    const status = await statusOf(driver, 'count-1');
    expect(status).toMatchObject({ runtimeStatus: 'Completed', output: 'liftoff', input: 0 });
    expect(types(driver.history('count-1'))).toEqual([12, 0, 13, 1]);
    expect(driver.stats().activitiesRun).toBe(3);
  });

  test('with an exception properties provider, failures carry FailureDetails into a TaskFailedError', async () => {
    df.app.setExceptionPropertiesProvider({
      getExceptionProperties: (error) => (error instanceof PermanentError ? { code: error.code } : undefined),
    });
    try {
      const detailed = orchestration('detailed', function* (context: OrchestrationContext) {
        try {
          yield context.df.callActivity('reserve', null);
          return 'reserved';
        } catch (error) {
          if (!(error instanceof df.TaskFailedError)) return 'plain error';
          return { type: error.failureDetails.errorType, properties: error.failureDetails.properties };
        }
      });
      const driver = virtualDriver({
        orchestrations: [detailed],
        activities: [
          activity('reserve', () => {
            throw new PermanentError('out-of-stock', 'no stock');
          }),
        ],
      });
      await driver.client.startNew('detailed', 'detailed-1', null);
      await driver.runUntilIdle();

      expect((await statusOf(driver, 'detailed-1')).output).toEqual({
        type: 'PermanentError',
        properties: { code: 'out-of-stock' },
      });
    } finally {
      df.app.setExceptionPropertiesProvider(undefined);
    }
  });

  test('with the real clock, timers use setTimeout and stop() leaves nothing behind', async () => {
    const short = orchestration('short', function* (context: OrchestrationContext) {
      const fireAt = new Date(context.df.currentUtcDateTime.getTime() + 20);
      yield context.df.createTimer(fireAt);
      return 'woke up';
    });
    const driver = createDurableDriver({ orchestrations: [short, review], activities: [] });
    drivers.push(driver);
    driver.start();

    await driver.client.startNew('short', 'short-1', null);
    // A review timeout of an hour stays pending until stop() clears it.
    await driver.client.startNew('review', 'review-real', null);
    await driver.whenIdle();

    expect((await statusOf(driver, 'short-1')).output).toBe('woke up');
    expect((await statusOf(driver, 'review-real')).runtimeStatus).toBe('Running');
    await expect(driver.advanceTime(1)).rejects.toThrow('virtual clock');
  });
});
