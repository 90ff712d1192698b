import type { ServiceBusQueueFunction } from '../../src/functions/definition';
import { createEmbeddedBroker, type EmbeddedBroker } from '../../local/broker/broker';
import { createFunctionsHost, type FunctionsHost } from '../../local/functions-host';
import { registerAndCapture } from '../../local/worker/register';

/**
 * The Functions host waits out a Service Bus round trip for each call its pumps make, as the
 * extension's processor does on Azure: a message's receive (prefetchCount 0), its settlement, and a
 * session slot's accept. Each wait is logged with how many messages the broker had completed by then,
 * so the log shows where in a delivery it falls.
 */
describe('broker round trips in the embedded Functions host', () => {
  let broker: EmbeddedBroker;
  let host: FunctionsHost | undefined;
  let events: string[];

  const recordingWait =
    (queue: string) =>
    (ms: number): Promise<void> => {
      events.push(`wait ${ms} ms, ${broker.stats()[queue]?.completed ?? 0} completed`);
      return Promise.resolve();
    };

  function start(fn: ServiceBusQueueFunction, latencyMs: number): FunctionsHost {
    host = createFunctionsHost({
      broker,
      functions: registerAndCapture({ serviceBus: [fn] }),
      maxConcurrentSessions: 1,
      maxConcurrentCalls: 1,
      sessionIdleTimeoutMs: 10,
      log: () => undefined,
      brokerLatencyMs: latencyMs,
      brokerWait: recordingWait(fn.queueName),
    });
    host.start();
    return host;
  }

  const handler =
    (label: (body: unknown) => string, fail = false): ServiceBusQueueFunction['handler'] =>
    async (body) => {
      events.push(`handler ${label(body)}`);
      await Promise.resolve();
      if (fail) throw new Error('fails on purpose');
    };

  const ordersFunction: ServiceBusQueueFunction = {
    name: 'onOrders',
    queueName: 'orders',
    connection: 'ServiceBusConnection',
    isSessionsEnabled: true,
    handler: handler(String),
  };

  beforeEach(() => {
    broker = createEmbeddedBroker();
    host = undefined;
    events = [];
  });

  afterEach(async () => {
    await host?.stop();
    broker.close();
  });

  it('waits for a session accept, then for each receive and each completion before the next receive', async () => {
    broker.createQueue('orders', { requiresSession: true, lockDurationMs: 5000 });
    await broker.send('orders', [
      { messageId: 'a1', sessionId: 'A', body: 'a1' },
      { messageId: 'a2', sessionId: 'A', body: 'a2' },
    ]);
    const running = start(ordersFunction, 3);
    await running.whenIdle();
    // The last completion's round trip is waited out before the receive that finds nothing, and the
    // session is let go after the idle timeout.
    while (running.stats().activeSessions > 0) await new Promise((resolve) => setTimeout(resolve, 5));

    // Calls that follow each other with nothing between them are waited out together.
    expect(events).toEqual([
      'wait 6 ms, 0 completed', // accept session A, receive a1
      'handler a1',
      'wait 6 ms, 1 completed', // complete a1, receive a2
      'handler a2',
      'wait 3 ms, 2 completed', // complete a2, before the receive that finds the session drained
    ]);
    expect(running.stats().byFunction['onOrders']?.brokerRoundTrips).toBe(5);
  });

  it('waits for the receive and the settlement of a message without a session, an abandon too', async () => {
    broker.createQueue('work', { lockDurationMs: 5000, maxDeliveryCount: 1 });
    await broker.send('work', [{ messageId: 'w', body: 'w' }]);
    const running = start(
      {
        name: 'onWork',
        queueName: 'work',
        connection: 'ServiceBusConnection',
        isSessionsEnabled: false,
        handler: handler(String, true),
      },
      2,
    );
    await running.whenIdle();

    expect(events).toEqual(['wait 2 ms, 0 completed', 'handler w', 'wait 2 ms, 0 completed']);
    expect(broker.stats()['work']).toMatchObject({ abandoned: 1, deadLettered: 1 });
    expect(running.stats().brokerRoundTrips).toBe(2);
  });

  it('waits for nothing when the broker has no latency', async () => {
    broker.createQueue('orders', { requiresSession: true, lockDurationMs: 5000 });
    await broker.send('orders', [{ messageId: 'a1', sessionId: 'A', body: 'a1' }]);
    const running = start(ordersFunction, 0);
    await running.whenIdle();

    expect(events).toEqual(['handler a1']);
    expect(running.stats().brokerRoundTrips).toBe(0);
  });
});
