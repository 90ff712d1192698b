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
import { InvocationContext } from '@azure/functions';
import { createEmbeddedApp } from '../../local/app';
import { exporterMappings } from '../../local/telemetry-bytes';
import { enqueuedAt, recordDeliveryWait } from '../../src/functions/delivery-wait';
import { inInvocationSpan, SpanKind } from '../../src/functions/order-trace';
import type { Telemetry, TelemetryProperties } from '../../src/services/ports';
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

describe('every requests row is named after its span', () => {
  it("names a delivery's and an activity's row, and its operation, as the exporter maps the span", async () => {
    const exporters = recordingExporters();
    const telemetry = createApplicationInsightsTelemetry(CONNECTION_STRING, {
      serviceName: 'orders-app',
      exporters: () => exporters,
    });
    for (const name of ['process order-transactions', 'process ledger', 'activity reserveInventory'])
      await inInvocationSpan({ name, kind: SpanKind.CONSUMER, orderId: 'O-1', incoming: [] }, async () => {});
    await telemetry.shutdown();
    const { readableSpanToEnvelope } = exporterMappings();
    const rows = exporters.spans.got.map((span) => readableSpanToEnvelope(span, 'k'));
    expect(
      rows.map((row) => [row.data?.baseType, row.data?.baseData?.name, row.tags?.['ai.operation.name']]),
    ).toEqual([
      ['RequestData', 'process order-transactions', 'process order-transactions'],
      ['RequestData', 'process ledger', 'process ledger'],
      ['RequestData', 'activity reserveInventory', 'activity reserveInventory'],
    ]);
    // The name is the row's, not one more of its customDimensions.
    for (const row of rows) expect(row.data?.baseData?.properties).not.toHaveProperty('ai.operation.name');
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

describe('messages.waitMs: how long each delivered message waited in its queue', () => {
  const invocation = (enqueuedTimeUtc: unknown) =>
    new InvocationContext({
      functionName: 'orderTransactions',
      invocationId: 'i-1',
      triggerMetadata: { enqueuedTimeUtc },
    });

  it('reads the enqueued time the extension writes with no offset as UTC', () => {
    const at = Date.parse('2026-12-02T09:00:00.123Z');
    expect(enqueuedAt(invocation('2026-12-02T09:00:00.1230000'))).toBe(at);
    expect(enqueuedAt(invocation('2026-12-02T09:00:00.1230000Z'))).toBe(at);
    expect(enqueuedAt(invocation('2026-12-02T10:00:00.1230000+01:00'))).toBe(at);
    expect(enqueuedAt(invocation(undefined))).toBeUndefined();
    expect(enqueuedAt(invocation('not a time'))).toBeUndefined();
  });

  it('records the wait per queue, none when the time is unknown', () => {
    const got: Array<[string, number, TelemetryProperties | undefined]> = [];
    const telemetry: Telemetry = {
      trace: () => undefined,
      event: () => undefined,
      metric: (name, value, properties) => got.push([name, value, properties]),
    };
    const now = Date.parse('2026-12-02T09:15:00.123Z');
    recordDeliveryWait(telemetry, 'order-transactions', invocation('2026-12-02T09:00:00.1230000'), now);
    recordDeliveryWait(telemetry, 'order-transactions', invocation(undefined), now);
    expect(got).toEqual([['messages.waitMs', 15 * 60_000, { queue: 'order-transactions' }]]);
  });

  it('reaches Application Insights as a distribution: count, sum, minimum and maximum', async () => {
    const exporters = recordingExporters();
    const telemetry = createApplicationInsightsTelemetry(CONNECTION_STRING, {
      serviceName: 'orders-app',
      exporters: () => exporters,
    });
    telemetry.metric('messages.waitMs', 300, { queue: 'order-transactions' });
    telemetry.metric('messages.waitMs', 1200, { queue: 'order-transactions' });
    await telemetry.shutdown();
    const { resourceMetricsToEnvelope } = exporterMappings();
    const rows = exporters.metrics.got.flatMap((batch) =>
      resourceMetricsToEnvelope(batch, 'k').map((envelope) => envelope.data?.baseData),
    );
    expect(rows).toEqual([
      expect.objectContaining({
        metrics: [
          expect.objectContaining({ name: 'messages.waitMs', value: 1500, count: 2, min: 300, max: 1200 }),
        ],
        properties: { queue: 'order-transactions' },
      }),
    ]);
  });

  it('is recorded for every delivery of both queues of the embedded runtime', async () => {
    const waits: unknown[] = [];
    const app = createEmbeddedApp({
      log: () => undefined,
      catalog: { 'SKU-1': 10 },
      instrument: {
        telemetry: (inner) => ({
          ...inner,
          metric(name, value, properties) {
            if (name === 'messages.waitMs') waits.push(properties?.queue);
            inner.metric(name, value, properties);
          },
        }),
      },
    });
    try {
      await app.sendLedger([
        {
          messageId: 'B-WAIT',
          sessionId: 'main',
          body: {
            batchId: 'B-WAIT',
            entries: [
              {
                transactionId: 'T-1',
                orderId: 'O-W',
                sequence: 1,
                type: 'OrderCreated',
                data: { customerId: 'C', currency: 'EUR' },
              },
              {
                transactionId: 'T-2',
                orderId: 'O-W',
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
      const report = await app.report();
      expect(waits.filter((queue) => queue === 'ledger')).toHaveLength(report.stats.ledgerMessages);
      expect(waits.filter((queue) => queue === 'order-transactions')).toHaveLength(
        2 + report.stats.redeliveries,
      );
    } finally {
      await app.stop();
    }
  });
});
