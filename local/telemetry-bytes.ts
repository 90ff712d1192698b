/**
 * What the app itself would send Application Insights, measured on the embedded runtime: the run
 * report's `stats.telemetry` (docs/cli.md). The same provider setup as on Azure
 * (src/adapters/telemetry.ts `openTelemetry`): the tracer provider of src/adapters/tracing.ts with the
 * sampler the app ships (`OrderSampler` at `TELEMETRY_SAMPLING_RATIO`'s default), spans through
 * `ExportSampledOrFailed`, log records through `ExportSampledOrAlerting`, counters as delta sums;
 * only the exporters differ: these turn each item into the envelope the Azure Monitor exporter
 * would send, with the exporter's own mapping functions (node_modules/@azure/monitor-opentelemetry-
 * exporter/dist/commonjs/utils/spanUtils.js `readableSpanToEnvelope` and `spanEventsToEnvelopes`,
 * logUtils.js `logToEnvelope`, metricUtils.js `resourceMetricsToEnvelope`, as its export/trace.js,
 * export/log.js and export/metric.js call them), and count the bytes of its JSON (UTF-8). The
 * exporter gzips what it posts; Log Analytics bills what it ingests, which these bytes stand for.
 *
 * Metrics are collected once, when the report asks: on Azure a series is sent once a minute whatever
 * the number of entries, so its share of a run's bytes depends on the run's length, not on its entries.
 */
import { dirname, join } from 'node:path';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import {
  SimpleLogRecordProcessor,
  type LogRecordExporter,
  type ReadableLogRecord,
} from '@opentelemetry/sdk-logs';
import {
  AggregationTemporality,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import {
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { readSamplingRatio } from '../src/adapters/settings';
import { logsAndMetrics } from '../src/adapters/telemetry';
import { ExportSampledOrFailed, OrderSampler, startTracing } from '../src/adapters/tracing';
import type { Telemetry } from '../src/services/ports';

/** The Application Insights tables the envelopes land in, by the envelope's `data.baseType`. */
const TABLE: Record<string, TelemetryKind> = {
  RequestData: 'requests',
  RemoteDependencyData: 'dependencies',
  MessageData: 'traces',
  EventData: 'customEvents',
  MetricData: 'customMetrics',
  TelemetryExceptionData: 'exceptions',
};

export type TelemetryKind =
  'requests' | 'dependencies' | 'traces' | 'customEvents' | 'customMetrics' | 'exceptions' | 'other';

/** `stats.telemetry` of the run report (docs/cli.md). */
export interface TelemetryStats {
  /** The share of orders whose whole trace is exported (`TELEMETRY_SAMPLING_RATIO`). */
  samplingRatio: number;
  /** Bytes of every envelope's JSON. */
  bytes: number;
  /**
   * Bytes per entry of the input (rounded), of every envelope but the metrics': a metric series is
   * sent once a minute whatever the number of entries (their bytes are in `items.customMetrics`).
   */
  bytesPerEntry: number;
  /** Envelopes and their bytes, by the table each lands in. */
  items: Partial<Record<TelemetryKind, { count: number; bytes: number }>>;
}

/** What the tests and the sizing read of an envelope; the rest is counted as JSON. */
export interface Envelope {
  tags?: Record<string, string>;
  data?: { baseType?: string; baseData?: Record<string, unknown> };
}

export interface ExporterMappings {
  readableSpanToEnvelope(span: ReadableSpan, ikey: string): Envelope;
  spanEventsToEnvelopes(span: ReadableSpan, ikey: string): Envelope[];
  logToEnvelope(log: ReadableLogRecord, ikey: string): Envelope | undefined;
  resourceMetricsToEnvelope(metrics: ResourceMetrics, ikey: string): Envelope[];
}

/**
 * The exporter's mapping functions. Its package `exports` only its index, so they are loaded by file
 * path from where the index resolves (dist/commonjs/index.js).
 */
export function exporterMappings(): ExporterMappings {
  const root = dirname(require.resolve('@azure/monitor-opentelemetry-exporter'));
  /* eslint-disable @typescript-eslint/no-require-imports */
  const spans = require(join(root, 'utils', 'spanUtils.js')) as ExporterMappings;
  const logs = require(join(root, 'utils', 'logUtils.js')) as ExporterMappings;
  const metrics = require(join(root, 'utils', 'metricUtils.js')) as ExporterMappings;
  /* eslint-enable @typescript-eslint/no-require-imports */
  return {
    readableSpanToEnvelope: spans.readableSpanToEnvelope,
    spanEventsToEnvelopes: spans.spanEventsToEnvelopes,
    logToEnvelope: logs.logToEnvelope,
    resourceMetricsToEnvelope: metrics.resourceMetricsToEnvelope,
  };
}

/** An instrumentation key as a connection string gives one: a GUID, 36 characters. */
const IKEY = '00000000-0000-0000-0000-000000000000';

/** Counts envelopes and their bytes by table. */
export class EnvelopeBytes {
  readonly items: Partial<Record<TelemetryKind, { count: number; bytes: number }>> = {};
  bytes = 0;

  add(envelope: Envelope): void {
    const kind = TABLE[envelope.data?.baseType ?? ''] ?? 'other';
    const size = Buffer.byteLength(JSON.stringify(envelope), 'utf8');
    const item = (this.items[kind] ??= { count: 0, bytes: 0 });
    item.count += 1;
    item.bytes += size;
    this.bytes += size;
  }
}

const SUCCESS: ExportResult = { code: ExportResultCode.SUCCESS };

/** Exporters that size what the Azure Monitor exporters would send instead of sending it. */
export function sizingExporters(
  counted: EnvelopeBytes,
  mappings: ExporterMappings = exporterMappings(),
): { spans: SpanExporter; logs: LogRecordExporter; metrics: PushMetricExporter } {
  return {
    spans: {
      export(spans, done) {
        for (const span of spans) {
          counted.add(mappings.readableSpanToEnvelope(span, IKEY));
          for (const envelope of mappings.spanEventsToEnvelopes(span, IKEY)) counted.add(envelope);
        }
        done(SUCCESS);
      },
      shutdown: async () => undefined,
    },
    logs: {
      export(logs, done) {
        for (const log of logs) {
          const envelope = mappings.logToEnvelope(log, IKEY);
          if (envelope !== undefined) counted.add(envelope);
        }
        done(SUCCESS);
      },
      forceFlush: async () => undefined,
      shutdown: async () => undefined,
    },
    metrics: {
      export(metrics, done) {
        for (const envelope of mappings.resourceMetricsToEnvelope(metrics, IKEY)) counted.add(envelope);
        done(SUCCESS);
      },
      // As the Azure Monitor metric exporter selects for counters (export/metric.ts).
      selectAggregationTemporality: () => AggregationTemporality.DELTA,
      forceFlush: async () => undefined,
      shutdown: async () => undefined,
    },
  };
}

export interface MeasuredTelemetry {
  /** Where the app's traces, events and metrics are sent as well as recorded. */
  telemetry: Telemetry;
  /** Everything exported so far, metrics collected now; `entries` the input's. */
  stats(entries: number): Promise<TelemetryStats>;
  shutdown(): Promise<void>;
}

export interface MeasureOptions {
  /**
   * `TELEMETRY_SAMPLING_RATIO` of the environment unless given, validated as the app validates it,
   * and the app's default without it (src/adapters/settings.ts).
   */
  samplingRatio?: number;
  /** More span processors on the same tracer provider, e.g. the `--traces` file (./trace-file.ts). */
  spanProcessors?: SpanProcessor[];
  serviceName?: string;
}

/** Registers the app's tracer provider, sampler and all, and measures what it and the logs would export. */
export function startMeasuredTelemetry(options: MeasureOptions = {}): MeasuredTelemetry {
  const samplingRatio = options.samplingRatio ?? readSamplingRatio(process.env);
  const serviceName = options.serviceName ?? 'order-convoy (npm start)';
  const counted = new EnvelopeBytes();
  const exporters = sizingExporters(counted);
  const spans = new ExportSampledOrFailed(new SimpleSpanProcessor(exporters.spans));
  const tracing = startTracing({
    serviceName,
    sampler: new OrderSampler(samplingRatio),
    spanProcessors: [spans, ...(options.spanProcessors ?? [])],
  });
  const logs = new SimpleLogRecordProcessor({ exporter: exporters.logs });
  // Collected only when asked (`stats`, shutdown): the longest interval a timer takes.
  const reader = new PeriodicExportingMetricReader({
    exporter: exporters.metrics,
    exportIntervalMillis: 2 ** 31 - 1,
    exportTimeoutMillis: 30_000,
  });
  const signals = logsAndMetrics(exporters, {
    serviceName,
    logProcessor: () => logs,
    metricReader: () => reader,
  });
  return {
    telemetry: signals,
    async stats(entries) {
      await Promise.all([spans.forceFlush(), logs.forceFlush(), reader.forceFlush()]);
      const perEntry = counted.bytes - (counted.items.customMetrics?.bytes ?? 0);
      return {
        samplingRatio,
        bytes: counted.bytes,
        bytesPerEntry: entries === 0 ? 0 : Math.round(perEntry / entries),
        items: { ...counted.items },
      };
    },
    async shutdown() {
      await Promise.all([tracing.shutdown(), signals.shutdown()]);
    },
  };
}
