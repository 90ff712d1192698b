/**
 * Telemetry without a network: the OpenTelemetry adapter's log records, metrics and spans are
 * observed through recording exporters in place of Azure Monitor's, and the absence of a
 * connection string must leave the exporter package unloaded.
 */
import type { TokenCredential } from '@azure/identity';
import { context, trace } from '@opentelemetry/api';
import {
  consoleTelemetry,
  createApplicationInsightsTelemetry,
  CUSTOM_EVENT_NAME,
} from '../../src/adapters/telemetry';
import { createEmbeddedApp } from '../../local/app';
import { recordingExporters } from '../support/recording-exporters';

const CONNECTION_STRING = 'InstrumentationKey=00000000-0000-0000-0000-000000000000';

describe('Application Insights telemetry on OpenTelemetry', () => {
  it('traces and events are log records with every property, metrics counters with low-cardinality dimensions only', async () => {
    const exporters = recordingExporters();
    const credential: TokenCredential = { getToken: async () => null };
    let given: [string, TokenCredential | undefined] | undefined;
    const telemetry = createApplicationInsightsTelemetry(CONNECTION_STRING, {
      credential,
      serviceName: 'orders-app',
      exporters: (cs, cred) => {
        given = [cs, cred];
        return exporters;
      },
    });
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
    telemetry.metric('messages.parked', 1, {
      reason: 'misrouted',
      queue: 'order-transactions',
      messageId: 'T-2:abc',
    });
    await telemetry.shutdown();

    expect(given).toEqual([CONNECTION_STRING, credential]);
    expect(
      exporters.logs.got.map((log) => ({
        severity: log.severityText,
        body: log.body,
        attributes: log.attributes,
        role: log.resource.attributes['service.name'],
      })),
    ).toEqual([
      {
        severity: 'Warning',
        body: 'order transaction parked',
        attributes: { orderId: 'O-1', sequence: 3, correlationId: 'c-1' },
        role: 'orders-app',
      },
      {
        severity: 'Information',
        body: 'MessageParked',
        attributes: {
          reason: 'misrouted',
          messageId: 'T-1:abc',
          sessionId: 'O-2',
          [CUSTOM_EVENT_NAME]: 'MessageParked',
        },
        role: 'orders-app',
      },
    ]);
    const points = exporters.metrics.got.flatMap((batch) =>
      batch.scopeMetrics.flatMap((scope) =>
        scope.metrics.flatMap((metric) =>
          metric.dataPoints.map((point) => ({
            name: metric.descriptor.name,
            value: point.value,
            attributes: point.attributes,
          })),
        ),
      ),
    );
    // The two ids made no second series: the count is one series of 2.
    expect(points).toEqual([
      { name: 'messages.parked', value: 2, attributes: { reason: 'misrouted', queue: 'order-transactions' } },
    ]);
  });

  it("a log record written inside a span is in that span's trace (Application Insights: its operation)", async () => {
    const exporters = recordingExporters();
    const telemetry = createApplicationInsightsTelemetry(CONNECTION_STRING, {
      serviceName: 'orders-app',
      exporters: () => exporters,
    });
    const span = trace.getTracer('test').startSpan('process order-transactions');
    context.with(trace.setSpan(context.active(), span), () =>
      telemetry.event('OrderSubmitted', { orderId: 'O-1' }),
    );
    span.end();
    await telemetry.shutdown();
    expect(exporters.logs.got.map((log) => log.spanContext?.traceId)).toEqual([span.spanContext().traceId]);
    expect(exporters.spans.got.map((exported) => exported.name)).toEqual(['process order-transactions']);
  });

  it('without a connection string loads nothing of the exporter and writes traces to the console', () => {
    let loaded = false;
    jest.isolateModules(() => {
      jest.doMock('@azure/monitor-opentelemetry-exporter', () => {
        loaded = true;
        return {};
      });
      const isolated =
        require('../../src/adapters/telemetry') as typeof import('../../src/adapters/telemetry');
      const lines: string[] = [];
      const log = jest.spyOn(console, 'log').mockImplementation((line: string) => lines.push(line));
      try {
        const telemetry = isolated.createApplicationInsightsTelemetry(undefined, {
          serviceName: 'orders-app',
        });
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
