/** OpenTelemetry exporters for tests: they keep what they are given, as Azure Monitor's would send it. */
import type { ExportResult } from '@opentelemetry/core';
import type { LogRecordExporter, ReadableLogRecord } from '@opentelemetry/sdk-logs';
import {
  AggregationTemporality,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TelemetryExporters } from '../../src/adapters/telemetry';

const SUCCESS: ExportResult = { code: 0 };

/** Exporters that keep what they are given, as Azure Monitor's would send it. */
export function recordingExporters(): TelemetryExporters & {
  spans: SpanExporter & { got: ReadableSpan[] };
  logs: LogRecordExporter & { got: ReadableLogRecord[] };
  metrics: PushMetricExporter & { got: ResourceMetrics[] };
} {
  const spans: ReadableSpan[] = [];
  const logs: ReadableLogRecord[] = [];
  const metrics: ResourceMetrics[] = [];
  return {
    spans: {
      got: spans,
      export: (items, done) => (spans.push(...items), done(SUCCESS)),
      shutdown: async () => {},
    },
    logs: {
      got: logs,
      export: (items, done) => (logs.push(...items), done(SUCCESS)),
      forceFlush: async () => {},
      shutdown: async () => {},
    },
    metrics: {
      got: metrics,
      export: (items, done) => (metrics.push(items), done(SUCCESS)),
      forceFlush: async () => {},
      shutdown: async () => {},
      // As AzureMonitorMetricExporter selects for counters: each export a delta.
      selectAggregationTemporality: () => AggregationTemporality.DELTA,
    },
  };
}
