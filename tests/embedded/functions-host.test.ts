import { input } from '@azure/functions';
import type { InvocationContext, LogLevel } from '@azure/functions';
import type { ServiceBusQueueFunction } from '../../src/functions/definition';
import { createEmbeddedBroker } from '../../local/broker/broker';
import type { BrokerOutgoingMessage, EmbeddedBroker, QueueOptions } from '../../local/broker/broker';
import { createFunctionsHost } from '../../local/functions-host';
import { keyedRandom } from '../../local/faults';
import { registerAndCapture } from '../../local/worker/register';
import type { FunctionsHost, FunctionsHostOptions } from '../../local/functions-host';
import type { OutgoingMessage } from '../../src/services/ports';

type Handler = ServiceBusQueueFunction['handler'];

interface LogLine {
  functionName: string;
  level: LogLevel;
  message: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function sessionFunction(queueName: string, handler: Handler): ServiceBusQueueFunction {
  return {
    name: `on-${queueName}`,
    queueName,
    connection: 'ServiceBusConnection',
    isSessionsEnabled: true,
    handler,
  };
}

function plainFunction(queueName: string, handler: Handler): ServiceBusQueueFunction {
  return {
    name: `on-${queueName}`,
    queueName,
    connection: 'ServiceBusConnection',
    isSessionsEnabled: false,
    handler,
  };
}

/** Random values in turn, then 0.99 (no fault) for ever. */
function draws(...values: number[]): () => number {
  return () => values.shift() ?? 0.99;
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

describe('embedded functions host', () => {
  let broker: EmbeddedBroker;
  let host: FunctionsHost | undefined;
  let logs: LogLine[];

  // Locks long enough that a busy machine never loses one, except where a test is about locks.
  function queue(name: string, options: QueueOptions): void {
    broker.createQueue(name, { lockDurationMs: 5000, ...options });
  }

  function startHost(
    options: Omit<FunctionsHostOptions, 'broker' | 'functions'> & { functions: ServiceBusQueueFunction[] },
  ): FunctionsHost {
    host = createFunctionsHost({
      broker,
      sessionIdleTimeoutMs: 20,
      log: (functionName, level, message) => logs.push({ functionName, level, message }),
      ...options,
      functions: registerAndCapture({ serviceBus: options.functions }),
    });
    host.start();
    return host;
  }

  beforeEach(() => {
    broker = createEmbeddedBroker();
    host = undefined;
    logs = [];
  });

  afterEach(async () => {
    await host?.stop();
    broker.close();
  });

  it('keeps each session in order while running sessions concurrently', async () => {
    queue('orders', { requiresSession: true });
    const sessions = 24;
    const perSession = 8;
    const seen = new Map<string, number[]>();
    const inHandler = new Set<string>();
    let maxSessionsInHandlers = 0;
    startHost({
      maxConcurrentSessions: 4,
      functions: [
        sessionFunction('orders', async (body, context) => {
          const sessionId = String(context.triggerMetadata?.sessionId);
          inHandler.add(sessionId);
          maxSessionsInHandlers = Math.max(maxSessionsInHandlers, inHandler.size);
          await sleep(1 + (Number(field(body, 'n')) % 3));
          inHandler.delete(sessionId);
          seen.set(sessionId, [...(seen.get(sessionId) ?? []), Number(field(body, 'n'))]);
        }),
      ],
    });

    // Interleaved across sessions, a round at a time, while the host already runs.
    for (let n = 1; n <= perSession; n += 1) {
      const round: OutgoingMessage[] = [];
      for (let s = 0; s < sessions; s += 1)
        round.push({ messageId: `S${s}-${n}`, sessionId: `S${s}`, body: { n } });
      await broker.send('orders', round);
    }
    await host?.whenIdle();

    expect(seen.size).toBe(sessions);
    for (const numbers of seen.values()) expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const stats = host?.stats();
    expect(stats).toMatchObject({
      invocations: sessions * perSession,
      succeeded: sessions * perSession,
      failed: 0,
    });
    expect(stats?.maxConcurrentSessions).toBeGreaterThan(1);
    expect(stats?.maxConcurrentSessions).toBeLessThanOrEqual(4);
    expect(maxSessionsInHandlers).toBeGreaterThan(1);
    expect(maxSessionsInHandlers).toBeLessThanOrEqual(4);
    expect(broker.stats().orders).toMatchObject({
      completed: sessions * perSession,
      abandoned: 0,
      lockExpired: 0,
    });
  });

  it('retries a throwing handler, then the broker dead-letters the message, and the session goes on', async () => {
    queue('orders', { requiresSession: true, maxDeliveryCount: 3 });
    const attempts: Array<[string, unknown]> = [];
    startHost({
      functions: [
        sessionFunction('orders', async (body, context) => {
          attempts.push([String(field(body, 'id')), context.triggerMetadata?.deliveryCount]);
          if (field(body, 'id') === 'bad') throw new Error('store unavailable');
        }),
      ],
    });
    await broker.send('orders', [
      { messageId: 'm-bad', sessionId: 'O-1', body: { id: 'bad' } },
      { messageId: 'm-good', sessionId: 'O-1', body: { id: 'good' } },
    ]);
    await host?.whenIdle();

    expect(attempts).toEqual([
      ['bad', 1],
      ['bad', 2],
      ['bad', 3],
      ['good', 1],
    ]);
    expect(broker.deadLetters('orders')).toMatchObject([
      {
        messageId: 'm-bad',
        sessionId: 'O-1',
        deadLetterReason: 'MaxDeliveryCountExceeded',
        deliveryCount: 3,
      },
    ]);
    expect(host?.stats()).toMatchObject({ invocations: 4, succeeded: 1, failed: 3 });
    const errors = logs.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatchObject({ functionName: 'on-orders' });
    expect(errors[0]?.message).toContain('messageId=m-bad');
    expect(errors[0]?.message).toContain('sessionId=O-1');
    expect(errors[0]?.message).toContain('store unavailable');
  });

  it('after a crash following the commit, delivers the message again with deliveryCount 2', async () => {
    queue('orders', { requiresSession: true, lockDurationMs: 60 });
    const deliveries: unknown[] = [];
    startHost({
      faults: { crashAfterCommit: 0.5 },
      random: draws(0.1),
      functions: [
        sessionFunction('orders', async (_body, context) => {
          deliveries.push(context.triggerMetadata?.deliveryCount);
        }),
      ],
    });
    await broker.send('orders', [{ messageId: 'm1', sessionId: 'O-1', body: {} }]);
    await host?.whenIdle();

    expect(deliveries).toEqual([1, 2]);
    expect(host?.stats()).toMatchObject({ invocations: 2, succeeded: 2, crashesInjected: 1 });
    expect(broker.stats().orders).toMatchObject({ completed: 1, lockExpired: 1 });
    expect(broker.peek('orders')).toEqual([]);
  });

  it('the crash fault picks the same deliveries whatever order the sessions run in', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `m${i}`);
    const crashed = async (order: readonly string[]): Promise<string[]> => {
      await host?.stop();
      broker.close();
      broker = createEmbeddedBroker();
      logs = [];
      queue('orders', { requiresSession: true, lockDurationMs: 20 });
      startHost({
        faults: { crashAfterCommit: 0.4 },
        draw: keyedRandom(5, 'crashAfterCommit'),
        // One session at a time: the sessions' turns follow the order they were sent in.
        maxConcurrentSessions: 1,
        functions: [sessionFunction('orders', async () => undefined)],
      });
      await broker.send(
        'orders',
        order.map((id) => ({ messageId: id, sessionId: `S-${id}`, body: {} })),
      );
      await host?.whenIdle();
      return logs
        .filter((line) => line.message.startsWith('fault: completion'))
        .map((line) => /messageId=(\S+)/.exec(line.message)?.[1] ?? '')
        .sort();
    };
    const forward = await crashed(ids);
    expect(forward.length).toBeGreaterThan(0);
    expect(new Set(forward).size).toBeLessThan(ids.length);
    expect(await crashed([...ids].reverse())).toEqual(forward);
  });

  it('becomes idle when a message that always loses its completion expires into the dead-letter queue', async () => {
    queue('orders', { requiresSession: true, lockDurationMs: 60, maxDeliveryCount: 2 });
    const deliveries: unknown[] = [];
    startHost({
      faults: { crashAfterCommit: 1 },
      functions: [
        sessionFunction('orders', async (_body, context) => {
          deliveries.push(context.triggerMetadata?.deliveryCount);
        }),
      ],
    });
    await broker.send('orders', [{ messageId: 'm1', sessionId: 'O-1', body: {} }]);
    await host?.whenIdle();

    expect(deliveries).toEqual([1, 2]);
    expect(broker.deadLetters('orders')).toMatchObject([
      { messageId: 'm1', deadLetterReason: 'MaxDeliveryCountExceeded', deliveryCount: 2 },
    ]);
    expect(host?.stats().crashesInjected).toBe(2);
  }, 5000);

  it('passes the trigger metadata the Service Bus extension binds, and routes context logs', async () => {
    queue('orders', { requiresSession: true });
    let captured: InvocationContext | undefined;
    let body: unknown;
    startHost({
      functions: [
        sessionFunction('orders', async (message, context) => {
          captured = context;
          body = message;
          context.log('handling', 42);
        }),
      ],
    });
    const before = Date.now();
    await broker.send('orders', [
      {
        messageId: 'T-1:abc',
        sessionId: 'O-17',
        correlationId: 'corr-1',
        contentType: 'application/json',
        body: { orderId: 'O-17' },
        applicationProperties: { transactionId: 'T-1', sequence: 2, final: true, BatchId: 'B-1' },
      } satisfies BrokerOutgoingMessage,
    ]);
    await host?.whenIdle();

    expect(body).toEqual({ orderId: 'O-17' });
    const metadata = captured?.triggerMetadata ?? {};
    expect(metadata).toMatchObject({
      messageId: 'T-1:abc',
      sessionId: 'O-17',
      deliveryCount: 1,
      sequenceNumber: 1,
      correlationId: 'corr-1',
      contentType: 'application/json',
      // The Node worker camel-cases nested keys too.
      applicationProperties: { transactionId: 'T-1', sequence: 2, final: true, batchId: 'B-1' },
    });
    expect(typeof metadata.lockToken).toBe('string');
    // EnqueuedTimeUtc is DateTimeOffset.DateTime, which Newtonsoft writes without an offset;
    // EnqueuedTime keeps it (ServiceBusTriggerBindingStrategy.cs, GrpcMessageConversionExtensions.cs).
    expect(String(metadata.enqueuedTimeUtc)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?$/);
    expect(metadata.enqueuedTime).toBe(`${String(metadata.enqueuedTimeUtc)}+00:00`);
    const enqueued = Date.parse(`${String(metadata.enqueuedTimeUtc)}Z`);
    expect(enqueued).toBeGreaterThanOrEqual(before);
    expect(enqueued).toBeLessThanOrEqual(Date.now());
    expect(captured?.functionName).toBe('on-orders');
    expect(captured?.invocationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(captured?.options.trigger).toMatchObject({ type: 'serviceBusTrigger', queueName: 'orders' });
    expect(logs).toContainEqual({ functionName: 'on-orders', level: 'information', message: 'handling 42' });
  });

  it('binds the secondary inputs a definition declares, as the embedded runtime resolves them', async () => {
    queue('orders', { requiresSession: true });
    const durableClient = input.generic({ type: 'durableClient', name: 'starter' });
    const bound: unknown[] = [];
    startHost({
      bindInput: ({ binding }, functionName) => ({
        json: JSON.stringify({ type: binding.type, functionName }),
      }),
      functions: [
        {
          ...sessionFunction('orders', async (_body, context) => {
            bound.push(context.extraInputs.get(durableClient));
          }),
          extraInputs: [durableClient],
        },
      ],
    });
    await broker.send('orders', [{ messageId: 'm1', sessionId: 'O-1', body: {} }]);
    await host?.whenIdle();

    expect(bound).toEqual([{ type: 'durableClient', functionName: 'on-orders' }]);
  });

  it('waits in whenIdle for work that handlers send on to other queues', async () => {
    queue('ledger', { requiresSession: true });
    queue('entries', { requiresSession: true });
    queue('parked', {});
    const applied: string[] = [];
    startHost({
      functions: [
        sessionFunction('ledger', async (body) => {
          await sleep(15);
          const entries = field(body, 'entries');
          const ids = Array.isArray(entries) ? entries.map(String) : [];
          await broker.send(
            'entries',
            ids.map((id) => ({ messageId: id, sessionId: id.slice(0, 2), body: { id } })),
          );
        }),
        sessionFunction('entries', async (body) => {
          await sleep(15);
          applied.push(String(field(body, 'id')));
          if (applied.length === 1)
            await broker.send('parked', [{ messageId: 'p1', body: 'kept for a person' }]);
        }),
      ],
    });
    await broker.send('ledger', [
      { messageId: 'B-1', sessionId: 'main', body: { entries: ['O1-a', 'O1-b', 'O2-a'] } },
    ]);
    await host?.whenIdle();

    expect(applied.sort()).toEqual(['O1-a', 'O1-b', 'O2-a']);
    // Nobody consumes `parked`: it does not keep the host from being idle.
    expect(broker.peek('parked')).toHaveLength(1);
  });

  it('resolves whenIdle at once when there is nothing to do', async () => {
    queue('orders', { requiresSession: true });
    startHost({ functions: [sessionFunction('orders', async () => undefined)] });
    await expect(host?.whenIdle()).resolves.toBeUndefined();
  });

  it('renews locks while a handler runs longer than the lock duration', async () => {
    queue('orders', { requiresSession: true, lockDurationMs: 60 });
    queue('work', { lockDurationMs: 60 });
    const deliveries: unknown[] = [];
    const slow: Handler = async (_body, context) => {
      deliveries.push(context.triggerMetadata?.deliveryCount);
      await sleep(250);
    };
    startHost({ functions: [sessionFunction('orders', slow), plainFunction('work', slow)] });
    await broker.send('orders', [{ messageId: 'm1', sessionId: 'O-1', body: {} }]);
    await broker.send('work', [{ messageId: 'w1', body: {} }]);
    await host?.whenIdle();

    expect(deliveries).toEqual([1, 1]);
    expect(broker.stats()).toMatchObject({
      orders: { completed: 1, lockExpired: 0 },
      work: { completed: 1, lockExpired: 0 },
    });
  });

  it('keeps the locks of a handler that blocks the event loop past the lock duration', async () => {
    // On Azure the host renews in its own process; a worker busy for longer than the lock (a
    // 3,000-order run at 64 sessions) must not lose a lock whose effect it is applying.
    queue('orders', { requiresSession: true, lockDurationMs: 30 });
    queue('work', { lockDurationMs: 30 });
    const deliveries: unknown[] = [];
    const blocking: Handler = async (_body, context) => {
      deliveries.push(context.triggerMetadata?.deliveryCount);
      await sleep(1);
      const until = Date.now() + 120;
      while (Date.now() < until) {
        // no timer can fire meanwhile
      }
    };
    startHost({ functions: [sessionFunction('orders', blocking), plainFunction('work', blocking)] });
    await broker.send('orders', [{ messageId: 'm1', sessionId: 'O-1', body: {} }]);
    await broker.send('work', [{ messageId: 'w1', body: {} }]);
    await host?.whenIdle();

    expect(deliveries).toEqual([1, 1]);
    expect(broker.stats()).toMatchObject({
      orders: { completed: 1, lockExpired: 0 },
      work: { completed: 1, lockExpired: 0 },
    });
  });

  it('renews for at most maxAutoLockRenewalDuration: past it the lock is lost and the message comes back', async () => {
    queue('orders', { requiresSession: true, lockDurationMs: 30, maxDeliveryCount: 1 });
    const deliveries: unknown[] = [];
    startHost({
      maxAutoLockRenewalDurationMs: 40,
      functions: [
        sessionFunction('orders', async (_body, context) => {
          deliveries.push(context.triggerMetadata?.deliveryCount);
          await sleep(200);
        }),
      ],
    });
    await broker.send('orders', [{ messageId: 'm1', sessionId: 'O-1', body: {} }]);
    await host?.whenIdle();

    expect(deliveries).toEqual([1]);
    expect(broker.stats().orders).toMatchObject({ completed: 0, lockExpired: 1, deadLettered: 1 });
    expect(logs.some((line) => /could not settle messageId=m1/.test(line.message))).toBe(true);
  });

  it('fails an invocation still running at functionTimeout: the message is abandoned and comes back', async () => {
    queue('work', { maxDeliveryCount: 5 });
    const deliveries: unknown[] = [];
    startHost({
      functionTimeoutMs: 50,
      functions: [
        plainFunction('work', async (_body, context) => {
          deliveries.push(context.triggerMetadata?.deliveryCount);
          if (deliveries.length === 1) await new Promise(() => undefined);
        }),
      ],
    });
    await broker.send('work', [{ messageId: 'w1', body: {} }]);
    await host?.whenIdle();

    expect(deliveries).toEqual([1, 2]);
    expect(broker.stats().work).toMatchObject({ abandoned: 1, completed: 1 });
    expect(
      logs.some((line) => /Timeout value of 50 ms was exceeded by function: on-work/.test(line.message)),
    ).toBe(true);
  });

  it('runs a function without sessions on several concurrent calls', async () => {
    queue('work', { maxDeliveryCount: 2 });
    let running = 0;
    let maxRunning = 0;
    const done: string[] = [];
    startHost({
      maxConcurrentCalls: 3,
      functions: [
        plainFunction('work', async (body) => {
          running += 1;
          maxRunning = Math.max(maxRunning, running);
          await sleep(5);
          running -= 1;
          if (body === 'poison') throw new Error('never works');
          done.push(String(body));
        }),
      ],
    });
    await broker.send('work', [
      ...Array.from({ length: 9 }, (_, i) => ({ messageId: `w${i}`, body: `w${i}` })),
      { messageId: 'poison', body: 'poison' },
    ]);
    await host?.whenIdle();

    expect(done).toHaveLength(9);
    expect(maxRunning).toBe(3);
    expect(broker.deadLetters('work')).toMatchObject([{ messageId: 'poison', deliveryCount: 2 }]);
  });

  it('closes an idle session and moves on to the next one', async () => {
    queue('orders', { requiresSession: true });
    const finishedAt = new Map<string, number>();
    startHost({
      maxConcurrentSessions: 1,
      sessionIdleTimeoutMs: 30,
      functions: [
        sessionFunction('orders', async (_body, context) => {
          finishedAt.set(String(context.triggerMetadata?.sessionId), Date.now());
        }),
      ],
    });
    await broker.send('orders', [
      { messageId: 'a', sessionId: 'A', body: {} },
      { messageId: 'b', sessionId: 'B', body: {} },
    ]);
    await host?.whenIdle();

    const a = finishedAt.get('A') ?? NaN;
    const b = finishedAt.get('B') ?? NaN;
    expect(b - a).toBeGreaterThanOrEqual(28);
    expect(host?.stats().maxConcurrentSessions).toBe(1);
  });

  it('stop waits for the handler in flight and settles it', async () => {
    queue('orders', { requiresSession: true });
    let release: () => void = () => undefined;
    const started = new Promise<void>((resolveStarted) => {
      startHost({
        functions: [
          sessionFunction('orders', async () => {
            resolveStarted();
            await new Promise<void>((resolve) => (release = resolve));
          }),
        ],
      });
    });
    await broker.send('orders', [{ messageId: 'm1', sessionId: 'O-1', body: {} }]);
    await started;
    let stopped = false;
    const stopping = host?.stop().then(() => (stopped = true));
    await sleep(10);
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(stopped).toBe(true);
    expect(broker.stats().orders?.completed).toBe(1);
    expect(host?.stats().activeSessions).toBe(0);
  });

  it('refuses to start a function whose session setting does not match its queue', () => {
    queue('orders', { requiresSession: true });
    host = createFunctionsHost({
      broker,
      functions: registerAndCapture({ serviceBus: [plainFunction('orders', async () => undefined)] }),
    });
    expect(() => host?.start()).toThrow(/isSessionsEnabled/);
  });
});
