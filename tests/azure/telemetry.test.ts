/**
 * Telemetry without a network: the adapter's calls and properties are observed through a recording
 * sink in place of the Application Insights client, and the absence of a connection string must
 * leave the SDK unloaded.
 */
import type { TokenCredential } from '@azure/identity';
import {
  consoleTelemetry,
  createApplicationInsightsTelemetry,
  type TelemetrySink,
} from '../../src/adapters/telemetry';
import { createEmbeddedApp } from '../../local/app';

function recordingSink(): TelemetrySink & { calls: Array<[string, unknown]> } {
  const calls: Array<[string, unknown]> = [];
  return {
    calls,
    trackTrace: (trace) => calls.push(['trace', trace]),
    trackEvent: (event) => calls.push(['event', event]),
    trackMetric: (metric) => calls.push(['metric', metric]),
  };
}

describe('Application Insights telemetry', () => {
  it('sends traces and events with every property, and metrics with low-cardinality dimensions only', () => {
    const sink = recordingSink();
    const credential: TokenCredential = { getToken: async () => null };
    let given: [string, TokenCredential | undefined] | undefined;
    const telemetry = createApplicationInsightsTelemetry(
      'InstrumentationKey=00000000-0000-0000-0000-000000000000',
      credential,
      (cs, cred) => {
        given = [cs, cred];
        return sink;
      },
    );
    telemetry.trace('warning', 'order transaction parked', {
      orderId: 'O-1',
      sequence: 3,
      correlationId: 'c-1',
      missing: undefined,
    });
    telemetry.event('MessageParked', { reason: 'misrouted', messageId: 'T-1:abc', sessionId: 'O-2' });
    telemetry.metric('messages.parked', 1, {
      reason: 'misrouted',
      queue: 'order-transactions',
      messageId: 'T-1:abc',
    });

    expect(given).toEqual(['InstrumentationKey=00000000-0000-0000-0000-000000000000', credential]);
    expect(sink.calls).toEqual([
      [
        'trace',
        {
          message: 'order transaction parked',
          severity: 'Warning',
          properties: { orderId: 'O-1', sequence: '3', correlationId: 'c-1' },
        },
      ],
      [
        'event',
        {
          name: 'MessageParked',
          properties: { reason: 'misrouted', messageId: 'T-1:abc', sessionId: 'O-2' },
        },
      ],
      [
        'metric',
        {
          name: 'messages.parked',
          value: 1,
          properties: { reason: 'misrouted', queue: 'order-transactions' },
        },
      ],
    ]);
  });

  it('without a connection string loads nothing of the SDK and writes traces to the console', () => {
    let loaded = false;
    jest.isolateModules(() => {
      jest.doMock('applicationinsights', () => {
        loaded = true;
        return {};
      });
      const isolated =
        require('../../src/adapters/telemetry') as typeof import('../../src/adapters/telemetry');
      const lines: string[] = [];
      const log = jest.spyOn(console, 'log').mockImplementation((line: string) => lines.push(line));
      try {
        const telemetry = isolated.createApplicationInsightsTelemetry(undefined);
        telemetry.trace('information', 'ledger batch forwarded', { batchId: 'B-1' });
        telemetry.event('Saga.completed', { orderId: 'O-1' });
        telemetry.metric('entries.applied', 1);
      } finally {
        log.mockRestore();
      }
      expect(lines).toEqual(['[information] ledger batch forwarded {"batchId":"B-1"}']);
    });
    expect(loaded).toBe(false);
  });

  it('console telemetry drops events and metrics', () => {
    const lines: string[] = [];
    const telemetry = consoleTelemetry((line) => lines.push(line));
    telemetry.event('x');
    telemetry.metric('y', 1);
    expect(lines).toEqual([]);
  });
});

describe('one correlation id from the ledger message through the order to the saga', () => {
  it('carries the ledger message id on every trace of its entries and on the saga events', async () => {
    const app = createEmbeddedApp({
      // Above the pauses of the HTTP durable client under jest; a lost lock redelivers and traces again.
      lockDurationMs: 200,
      timeScale: 2000,
      log: () => undefined,
      clock: { mode: 'virtual' },
      catalog: { 'SKU-1': 10 },
    });
    try {
      await app.sendLedger([
        {
          messageId: 'B-CORR',
          sessionId: 'main',
          body: {
            batchId: 'B-CORR',
            entries: [
              {
                transactionId: 'T-1',
                orderId: 'O-C',
                sequence: 1,
                type: 'OrderCreated',
                data: { customerId: 'C', currency: 'EUR' },
              },
              {
                transactionId: 'T-2',
                orderId: 'O-C',
                sequence: 2,
                type: 'TransactionAdded',
                final: true,
                data: { sku: 'SKU-1', quantity: 1, unitPrice: 5 },
              },
            ],
          },
        },
      ]);
      await app.drain();
      const entryTraces = app.telemetry.traces.filter((t) => t.message.startsWith('order transaction'));
      expect(entryTraces.map((t) => [t.properties.sequence, t.properties.correlationId])).toEqual([
        [1, 'B-CORR'],
        [2, 'B-CORR'],
      ]);
      const sagaEvents = app.telemetry.events.filter((e) => e.name.startsWith('Saga.'));
      expect(sagaEvents.map((e) => e.name)).toEqual(['Saga.running', 'Saga.completed']);
      expect(
        sagaEvents.every((e) => e.properties.correlationId === 'B-CORR' && e.properties.orderId === 'O-C'),
      ).toBe(true);
    } finally {
      await app.stop();
    }
  });
});
