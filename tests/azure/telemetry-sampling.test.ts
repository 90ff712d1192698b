/**
 * Sampling of the app's telemetry (src/adapters/tracing.ts `OrderSampler`, src/adapters/telemetry.ts
 * `ExportSampledOrAlerting`): each order's spans and information-level log records are exported
 * whole or not at all, decided by its trace id; warnings, errors, events and failed spans always are.
 * And the run report's `stats.telemetry` (local/telemetry-bytes.ts), sized as the Azure Monitor
 * exporter would send it.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { ConfigurationError } from '../../src/domain/errors';
import { DEFAULTS, readSamplingRatio, SETTING } from '../../src/adapters/settings';
import { CUSTOM_EVENT_NAME, openTelemetry, type ExportedTelemetry } from '../../src/adapters/telemetry';
import { OrderSampler, SAMPLE_RATE, startRootSpanInTrace } from '../../src/adapters/tracing';
import { orderTraceId } from '../../src/functions/order-trace';
import { createEmbeddedApp } from '../../local/app';
import { exporterMappings, startMeasuredTelemetry } from '../../local/telemetry-bytes';
import { readInputFile } from '../../local/cli/input-file';
import { START_RETENTION } from '../../local/cli/start';
import { join } from 'node:path';
import { generateBenchWorkload } from '../../bench/workload';
import { recordingExporters } from '../support/recording-exporters';

const ORDERS = Array.from({ length: 60 }, (_, i) => `O-${i + 1}`);

/**
 * What one order's processing writes, as the convoy does: a root span in the order's trace, a send,
 * a delivery that continues it in "another process" through `traceparent`, and log records inside.
 */
function processOrder(telemetry: ExportedTelemetry, orderId: string, fail = false): void {
  const tracer = trace.getTracer('test');
  const root = startRootSpanInTrace(tracer, orderTraceId(orderId), `order ${orderId}`);
  const carrier: Record<string, string> = {};
  context.with(trace.setSpan(context.active(), root), () => {
    const send = tracer.startSpan('send order-transactions', { kind: SpanKind.PRODUCER });
    propagation.inject(trace.setSpan(context.active(), send), carrier);
    send.end();
    telemetry.trace('information', 'ledger batch forwarded', { orderId });
  });
  root.end();
  const remote = propagation.extract(context.active(), carrier);
  const delivery = tracer.startSpan('process order-transactions', { kind: SpanKind.CONSUMER }, remote);
  context.with(trace.setSpan(remote, delivery), () => {
    telemetry.trace('information', 'order transaction applied', { orderId });
    telemetry.trace('warning', 'transient failure; trying again in the same delivery', { orderId });
    telemetry.event('AuthorizationPending', { orderId, role: 'r', resource: 'q' });
    telemetry.event('Saga.running', { orderId });
    telemetry.event('MessageParked', { orderId, reason: 'rejected' });
  });
  if (fail) delivery.setStatus({ code: SpanStatusCode.ERROR, message: 'boom' });
  delivery.end();
}

function orderOf(attributes: Record<string, unknown>): string {
  return String(attributes.orderId);
}

describe('OrderSampler: an order is exported whole or not at all', () => {
  it('keeps every span and information record of a kept order and none of a dropped one, by its trace id', async () => {
    const exporters = recordingExporters();
    const sampler = new OrderSampler(0.5);
    const telemetry = openTelemetry(exporters, { serviceName: 'test', sampler });
    for (const orderId of ORDERS) processOrder(telemetry, orderId);
    await telemetry.shutdown();

    const kept = ORDERS.filter((orderId) => sampler.keeps(orderTraceId(orderId)));
    // Some of each, so that the test sees both decisions.
    expect(kept.length).toBeGreaterThan(10);
    expect(kept.length).toBeLessThan(ORDERS.length - 10);
    const keptTraces = new Set(kept.map(orderTraceId));
    const spanTraces = exporters.spans.got.map((span) => span.spanContext().traceId);
    // Three spans of each kept order (root, send, delivery), none of another.
    expect([...new Set(spanTraces)].sort()).toEqual([...keptTraces].sort());
    expect(spanTraces).toHaveLength(3 * kept.length);
    // Each says the share kept, which the exporter turns into the envelope's sampleRate (percent).
    for (const span of exporters.spans.got) expect(span.attributes[SAMPLE_RATE]).toBe(50);
    const information = exporters.logs.got.filter(
      (log) => log.severityText === 'Information' && log.attributes[CUSTOM_EVENT_NAME] === undefined,
    );
    expect(information.map((log) => orderOf(log.attributes)).sort()).toEqual(
      kept.flatMap((orderId) => [orderId, orderId]).sort(),
    );
    for (const log of information) expect(keptTraces.has(log.spanContext?.traceId ?? '')).toBe(true);
    const parks = exporters.logs.got.filter((log) => log.attributes[CUSTOM_EVENT_NAME] === 'MessageParked');
    expect(parks.map((log) => orderOf(log.attributes)).sort()).toEqual([...kept].sort());
  });

  it('decides an order the same in every process: the decision is its trace id only', () => {
    const one = new OrderSampler(0.3);
    const other = new OrderSampler(0.3);
    for (const orderId of ORDERS) {
      expect(one.keeps(orderTraceId(orderId))).toBe(other.keeps(orderTraceId(orderId)));
    }
    expect(ORDERS.every((orderId) => new OrderSampler(1).keeps(orderTraceId(orderId)))).toBe(true);
    expect(ORDERS.some((orderId) => new OrderSampler(0).keeps(orderTraceId(orderId)))).toBe(false);
  });
});

describe('what the alerts count is never sampled away', () => {
  it("exports warnings, the alerts' events and failed spans of a dropped order, and nothing else of it", async () => {
    const exporters = recordingExporters();
    const telemetry = openTelemetry(exporters, { serviceName: 'test', sampler: new OrderSampler(0) });
    for (const orderId of ORDERS) processOrder(telemetry, orderId, orderId === 'O-7');
    await telemetry.shutdown();

    const byKind = (test: (log: ReadableLogRecord) => boolean) =>
      exporters.logs.got.filter(test).map((log) => orderOf(log.attributes));
    expect(byKind((log) => log.severityText === 'Warning')).toEqual(ORDERS);
    expect(byKind((log) => log.attributes[CUSTOM_EVENT_NAME] === 'AuthorizationPending')).toEqual(ORDERS);
    expect(byKind((log) => log.attributes[CUSTOM_EVENT_NAME] === 'Saga.running')).toEqual(ORDERS);
    expect(
      byKind((log) => log.severityText === 'Information' && log.attributes[CUSTOM_EVENT_NAME] === undefined),
    ).toEqual([]);
    // A park is counted by the `messages.parked` metric; its event, the ids, goes with its order.
    expect(byKind((log) => log.attributes[CUSTOM_EVENT_NAME] === 'MessageParked')).toEqual([]);
    // The failed delivery only: the function-failures alert counts it in `requests`.
    expect(exporters.spans.got.map((span) => [span.name, span.spanContext().traceId])).toEqual([
      ['process order-transactions', orderTraceId('O-7')],
    ]);
    expect(exporters.spans.got[0]?.attributes[SAMPLE_RATE]).toBeUndefined();
  });
});

describe('a failed request is exported whatever its trace', () => {
  it('exports a server span that answered 5xx or 4xx, as the exporter marks it failed, and not one that answered 2xx', async () => {
    const exporters = recordingExporters();
    const telemetry = openTelemetry(exporters, { serviceName: 'test', sampler: new OrderSampler(0) });
    const tracer = trace.getTracer('test');
    for (const status of [200, 404, 500, 503]) {
      const span = startRootSpanInTrace(tracer, orderTraceId(`O-${status}`), 'GET /orders/{orderId}', {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': 'GET', 'http.route': 'orders/{orderId}' },
      });
      // As the HTTP functions answer (src/functions/registration.ts): the status on the span, no error.
      span.setAttribute('http.response.status_code', status);
      span.end();
    }
    await telemetry.shutdown();
    const { readableSpanToEnvelope } = exporterMappings();
    const rows = exporters.spans.got.map((span) => readableSpanToEnvelope(span, 'k').data?.baseData);
    expect(rows.map((row) => [row?.responseCode, row?.success])).toEqual([
      ['404', false],
      ['500', false],
      ['503', false],
    ]);
    for (const span of exporters.spans.got) expect(span.attributes[SAMPLE_RATE]).toBeUndefined();
  });
});

describe('TELEMETRY_SAMPLING_RATIO', () => {
  it('is a number from 0 to 1, the default unless set, and a bad one names the setting', () => {
    expect(readSamplingRatio({})).toBe(DEFAULTS.telemetrySamplingRatio);
    expect(readSamplingRatio({ [SETTING.telemetrySamplingRatio]: '0.25' })).toBe(0.25);
    for (const bad of ['1.5', '-0.1', 'all']) {
      expect(() => readSamplingRatio({ [SETTING.telemetrySamplingRatio]: bad })).toThrow(ConfigurationError);
      expect(() => readSamplingRatio({ [SETTING.telemetrySamplingRatio]: bad })).toThrow(
        /TELEMETRY_SAMPLING_RATIO/,
      );
    }
  });
});

describe('stats.telemetry: the bytes the app would export', () => {
  async function sampleRun(samplingRatio: number) {
    const measured = startMeasuredTelemetry({ samplingRatio });
    try {
      const input = join(__dirname, '..', '..', 'samples', 'ledger.ndjson');
      const catalog = require('../../samples/catalog.json') as Record<string, number>;
      const app = createEmbeddedApp({
        seed: 1,
        catalog,
        ...START_RETENTION,
        measureTelemetry: measured,
        log: () => undefined,
      });
      for (const message of readInputFile(input, input)) await app.sendLedger([message]);
      await app.drain();
      const report = await app.report();
      await app.stop();
      return report.stats;
    } finally {
      await measured.shutdown();
    }
  }

  it('sizes the envelopes of the sample run, fewer when fewer orders are kept', async () => {
    const all = await sampleRun(1);
    const none = await sampleRun(0);
    const entries = all.account.entries;
    expect(all.telemetry?.bytesPerEntry).toBeGreaterThan(0);
    expect(all.telemetry?.items.requests?.count).toBeGreaterThan(0);
    expect(all.telemetry?.items.dependencies?.count).toBeGreaterThan(0);
    expect(all.telemetry?.items.customMetrics?.count).toBeGreaterThan(0);
    // Dropping every order takes its spans, information records and park events, not the events
    // the alerts count (each saga's statuses).
    expect(none.telemetry?.items.requests).toBeUndefined();
    const events = (stats: typeof all) => stats.telemetry?.items.customEvents?.count ?? 0;
    expect(events(none)).toBeGreaterThan(0);
    expect(events(all) - events(none)).toBeGreaterThanOrEqual(all.parked);
    expect(none.telemetry!.bytesPerEntry).toBeLessThan(all.telemetry!.bytesPerEntry / 2);
    const perEntry = (stats: typeof all) =>
      Math.round((stats.telemetry!.bytes - (stats.telemetry!.items.customMetrics?.bytes ?? 0)) / entries);
    expect(all.telemetry?.bytesPerEntry).toBe(perEntry(all));
  }, 60_000);

  it('stays within docs/performance.md bound on a clean workload of 10-entry orders at the shipped ratio', async () => {
    const workload = generateBenchWorkload({
      orders: 1000,
      entriesPerOrder: 10,
      batchSize: 100,
      activeOrders: 100,
      seed: 1,
    });
    const skus = new Set(workload.entries.flatMap((entry) => ('sku' in entry.data ? [entry.data.sku] : [])));
    const measured = startMeasuredTelemetry({ samplingRatio: DEFAULTS.telemetrySamplingRatio });
    let stats;
    try {
      const app = createEmbeddedApp({
        seed: 1,
        catalog: Object.fromEntries([...skus].map((sku) => [sku, 1_000_000_000])),
        ...START_RETENTION,
        measureTelemetry: measured,
        log: () => undefined,
      });
      for (const message of workload.ledger) await app.sendLedger([message]);
      await app.drain();
      stats = (await app.report()).stats;
      await app.stop();
    } finally {
      await measured.shutdown();
    }
    expect(stats.account.applied).toBe(workload.entries.length);
    // Some orders kept whole, so the bound holds with the sampled detail in it, not without it.
    expect(stats.telemetry?.items.requests?.count).toBeGreaterThan(0);
    expect(stats.telemetry?.bytesPerEntry).toBeGreaterThan(0);
    expect(stats.telemetry?.bytesPerEntry).toBeLessThanOrEqual(250);
  }, 120_000);
});
