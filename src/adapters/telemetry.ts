/**
 * The Telemetry port. On Azure, when the Application Insights connection string is set
 * (docs/architecture.md decision 6), OpenTelemetry: spans through the tracer provider of
 * ./tracing.ts, traces and events as log records (an event is a log record with
 * `microsoft.custom_event.name`, which the exporter sends to `customEvents`), metrics as counters
 * (`customMetrics`, delta sums), each exported by `@azure/monitor-opentelemetry-exporter`
 * (Microsoft Learn "Use OpenTelemetry with Azure Functions", JavaScript; the exporter's README).
 * A log record carries the span active when it was written, so it lands in that span's trace: the
 * order's. Without a connection string the console; in the embedded runtime a recording one
 * (local/recording-telemetry.ts).
 */
import type { TokenCredential } from '@azure/identity';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { trace, TraceFlags, type Context, type Counter } from '@opentelemetry/api';
import {
  BatchLogRecordProcessor,
  LoggerProvider,
  type LogRecordExporter,
  type LogRecordProcessor,
  type SdkLogRecord,
} from '@opentelemetry/sdk-logs';
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, type Sampler, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Telemetry, TelemetryProperties, TraceLevel } from '../services/ports';
import { setOwn } from '../domain/own-properties';
import { ExportSampledOrFailed, serviceResource, startTracing } from './tracing';

type AttributeValue = string | number | boolean;

function attributesOf(properties: TelemetryProperties | undefined): Record<string, AttributeValue> {
  const result: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(properties ?? {})) {
    if (value !== undefined && value !== null) setOwn(result, key, value);
  }
  return result;
}

/** Each distinct value of a metric dimension makes a series: ids belong on traces and events. */
const METRIC_DIMENSIONS = new Set(['reason', 'queue', 'operation', 'outcome']);

function metricDimensions(properties: TelemetryProperties | undefined): Record<string, AttributeValue> {
  return Object.fromEntries(
    Object.entries(attributesOf(properties)).filter(([key]) => METRIC_DIMENSIONS.has(key)),
  );
}

const SEVERITY: Record<TraceLevel, { severityNumber: SeverityNumber; severityText: string }> = {
  information: { severityNumber: SeverityNumber.INFO, severityText: 'Information' },
  warning: { severityNumber: SeverityNumber.WARN, severityText: 'Warning' },
  error: { severityNumber: SeverityNumber.ERROR, severityText: 'Error' },
};

/**
 * The log attribute that makes a log record a custom event in Application Insights
 * (`ApplicationInsightsCustomEventName` of the exporter's `utils/constants/applicationinsights`).
 */
export const CUSTOM_EVENT_NAME = 'microsoft.custom_event.name';

/** Where each signal is exported to: Azure Monitor on Azure, in-memory exporters in tests. */
export interface TelemetryExporters {
  spans: SpanExporter;
  logs: LogRecordExporter;
  metrics: PushMetricExporter;
}

export interface ExportedTelemetry extends Telemetry {
  /** Exports what is buffered and stops, when the Functions host ends the worker. */
  shutdown(): Promise<void>;
}

/**
 * The events exported whatever their order's sampling decision: those an alert or a workbook panel
 * counts (bicep/modules/alerts.bicep, bicep/workbooks/), each status of a saga (the overdue alert reads
 * the latest), the saga's start, its call for a person, and a wait for a role. Any other event (a
 * park's `MessageParked`, `Alert.DigestMismatch`: counted by the `messages.parked` metric, found by
 * `npm run ops -- parked list`) is sampled with the trace it is written in. tests/contract/telemetry-names.test.ts
 * fails when an alert or a panel counts an event not listed here.
 */
export const UNSAMPLED_EVENTS: ReadonlySet<string> = new Set([
  'OrderSubmitted',
  'Saga.running',
  'Saga.compensating',
  'Saga.completed',
  'Saga.compensated',
  'Saga.cancelled',
  'Saga.needs-attention',
  'Alert.SagaNeedsAttention',
  'AuthorizationPending',
]);

/**
 * The metrics recorded as a distribution (a histogram) rather than summed: each export carries the
 * count, sum, minimum and maximum of the values (`valueCount`, `valueSum`, `valueMin`, `valueMax` in
 * `customMetrics`; the exporter's utils/metricUtils.js `resourceMetricsToEnvelope`), so that an alert
 * can read the longest. The others are counters.
 */
export const DISTRIBUTION_METRICS: ReadonlySet<string> = new Set(['messages.waitMs']);

/**
 * Passes `inner` the log records written outside a span or inside a kept one (./tracing.ts
 * `OrderSampler`), and besides them, whatever their trace's decision, every warning or error and
 * every event of `UNSAMPLED_EVENTS`: the alerts and the workbook count those. A log record carries
 * the trace flags of the span active when it was written (`LogRecord.spanContext`,
 * @opentelemetry/sdk-logs), and the Azure Monitor log exporter sends every record it is given,
 * sampled or not (its `export/log.ts`), so the filter is here.
 */
export class ExportSampledOrAlerting implements LogRecordProcessor {
  constructor(readonly inner: LogRecordProcessor) {}

  static exports(record: Pick<SdkLogRecord, 'spanContext' | 'severityNumber' | 'attributes'>): boolean {
    const span = record.spanContext;
    const event = record.attributes[CUSTOM_EVENT_NAME];
    return (
      span === undefined ||
      (span.traceFlags & TraceFlags.SAMPLED) !== 0 ||
      (record.severityNumber ?? SeverityNumber.UNSPECIFIED) >= SeverityNumber.WARN ||
      (typeof event === 'string' && UNSAMPLED_EVENTS.has(event))
    );
  }

  onEmit(record: SdkLogRecord, context?: Context): void {
    if (ExportSampledOrAlerting.exports(record)) this.inner.onEmit(record, context);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

export interface LogsAndMetricsOptions {
  serviceName: string;
  /** How log records reach their exporter; a batch processor unless given. */
  logProcessor?: (exporter: LogRecordExporter) => LogRecordProcessor;
  /** How metrics reach their exporter; a periodic reader (every 60 s) unless given. */
  metricReader?: (exporter: PushMetricExporter) => MetricReader;
}

/**
 * The port's traces, events and metrics on OpenTelemetry's logger and meter providers, log records
 * through `ExportSampledOrAlerting`. Spans are the tracer provider's (./tracing.ts).
 */
export function logsAndMetrics(
  exporters: Pick<TelemetryExporters, 'logs' | 'metrics'>,
  options: LogsAndMetricsOptions,
): ExportedTelemetry {
  const resource = serviceResource(options.serviceName);
  const processor = (options.logProcessor ?? ((exporter) => new BatchLogRecordProcessor({ exporter })))(
    exporters.logs,
  );
  const loggers = new LoggerProvider({ resource, processors: [new ExportSampledOrAlerting(processor)] });
  const reader = (options.metricReader ?? ((exporter) => new PeriodicExportingMetricReader({ exporter })))(
    exporters.metrics,
  );
  const meters = new MeterProvider({ resource, readers: [reader] });
  const logger = loggers.getLogger('order-convoy');
  const meter = meters.getMeter('order-convoy');
  const instruments = new Map<string, (value: number, attributes: Record<string, AttributeValue>) => void>();
  const instrument = (name: string) => {
    let found = instruments.get(name);
    if (found === undefined) {
      if (DISTRIBUTION_METRICS.has(name)) {
        // No buckets: the exporter sends none of them, only count, sum, minimum and maximum.
        const histogram = meter.createHistogram(name, { advice: { explicitBucketBoundaries: [] } });
        found = (value, attributes) => histogram.record(value, attributes);
      } else {
        const counter: Counter = meter.createCounter(name);
        found = (value, attributes) => counter.add(value, attributes);
      }
      instruments.set(name, found);
    }
    return found;
  };
  // What ExportSampledOrAlerting would drop is not made: a record fewer for each entry of a dropped order.
  const exported = (level: TraceLevel, attributes: SdkLogRecord['attributes']): boolean => {
    const active = trace.getActiveSpan()?.spanContext();
    const spanContext = active !== undefined && trace.isSpanContextValid(active) ? active : undefined;
    return ExportSampledOrAlerting.exports({ ...SEVERITY[level], spanContext, attributes });
  };
  return {
    trace(level, message, properties) {
      if (!exported(level, {})) return;
      logger.emit({ ...SEVERITY[level], body: message, attributes: attributesOf(properties) });
    },
    event(name, properties) {
      if (!exported('information', { [CUSTOM_EVENT_NAME]: name })) return;
      logger.emit({
        ...SEVERITY.information,
        body: name,
        attributes: { ...attributesOf(properties), [CUSTOM_EVENT_NAME]: name },
      });
    },
    metric(name, value, properties) {
      instrument(name)(value, metricDimensions(properties));
    },
    async shutdown() {
      await Promise.all([loggers.shutdown(), meters.shutdown()]);
    },
  };
}

export interface OpenTelemetryOptions {
  serviceName: string;
  /**
   * Which traces are kept (./tracing.ts): every one unless given; on Azure
   * `OrderSampler(TELEMETRY_SAMPLING_RATIO)` (src/functions/index.ts).
   */
  sampler?: Sampler;
}

/** The port on OpenTelemetry, its tracer provider registered as the process's (./tracing.ts). */
export function openTelemetry(
  exporters: TelemetryExporters,
  options: OpenTelemetryOptions,
): ExportedTelemetry {
  const tracing = startTracing({
    serviceName: options.serviceName,
    sampler: options.sampler,
    spanProcessors: [new ExportSampledOrFailed(new BatchSpanProcessor(exporters.spans))],
  });
  const signals = logsAndMetrics(exporters, { serviceName: options.serviceName });
  return {
    ...signals,
    async shutdown() {
      await Promise.all([tracing.shutdown(), signals.shutdown()]);
    },
  };
}

/**
 * The Azure Monitor exporters. Local authentication is off on the Application Insights resource
 * (Bicep): ingestion needs an Entra token, the `credential` (the app's managed identity).
 */
function azureMonitorExporters(
  connectionString: string,
  credential: TokenCredential | undefined,
): TelemetryExporters {
  // Loaded on demand: without a connection string nothing of it runs, and no exporter keeps the
  // process alive or writes retry files (NOTES-RUNTIME).
  type Exporter = typeof import('@azure/monitor-opentelemetry-exporter');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const azureMonitor = require('@azure/monitor-opentelemetry-exporter') as Exporter;
  const options = { connectionString, credential };
  return {
    spans: new azureMonitor.AzureMonitorTraceExporter(options),
    logs: new azureMonitor.AzureMonitorLogExporter(options),
    metrics: new azureMonitor.AzureMonitorMetricExporter(options),
  };
}

/** Without Application Insights, traces still reach the Functions host's log through the console. */
export function consoleTelemetry(
  write: (line: string) => void = (line) => console.log(line),
): ExportedTelemetry {
  return {
    trace(level, message, properties) {
      write(`[${level}] ${message} ${JSON.stringify(attributesOf(properties))}`);
    },
    event() {},
    metric() {},
    async shutdown() {},
  };
}

export interface ApplicationInsightsOptions extends OpenTelemetryOptions {
  credential?: TokenCredential;
  /** The exporters for a connection string; Azure Monitor's unless given (tests). */
  exporters?: (connectionString: string, credential: TokenCredential | undefined) => TelemetryExporters;
}

/** OpenTelemetry to Application Insights when a connection string is given, else the console. */
export function createApplicationInsightsTelemetry(
  connectionString: string | undefined,
  options: ApplicationInsightsOptions,
): ExportedTelemetry {
  if (connectionString === undefined) return consoleTelemetry();
  const exporters = (options.exporters ?? azureMonitorExporters)(connectionString, options.credential);
  return openTelemetry(exporters, options);
}
