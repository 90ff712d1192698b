/**
 * The Telemetry port: Application Insights on Azure when its connection string is set (docs/architecture.md
 * decision 6), a recording one in the embedded runtime whose counts feed the run's report.
 */
import type { TokenCredential } from '@azure/identity';
import type { Telemetry, TelemetryProperties, TraceLevel } from '../services/ports';
import { setOwn } from '../domain/own-properties';

/** What the adapter needs of `applicationinsights`' TelemetryClient; tests hand in a recorder. */
export interface TelemetrySink {
  trackTrace(trace: {
    message: string;
    severity: 'Information' | 'Warning' | 'Error';
    properties: Record<string, string>;
  }): void;
  trackEvent(event: { name: string; properties: Record<string, string> }): void;
  trackMetric(metric: { name: string; value: number; properties: Record<string, string> }): void;
}

function stringProperties(properties: TelemetryProperties | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(properties ?? {})) {
    if (value !== undefined && value !== null) setOwn(result, key, String(value));
  }
  return result;
}

/** Each distinct value of a metric dimension makes a series: ids belong on traces and events. */
const METRIC_DIMENSIONS = new Set(['reason', 'queue', 'operation', 'outcome']);

function metricDimensions(properties: TelemetryProperties | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(stringProperties(properties)).filter(([key]) => METRIC_DIMENSIONS.has(key)),
  );
}

const SEVERITY = { information: 'Information', warning: 'Warning', error: 'Error' } as const;

function applicationInsightsClient(
  connectionString: string,
  credential: TokenCredential | undefined,
): TelemetrySink {
  // Loaded on demand: the package starts OpenTelemetry machinery as soon as it is loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { TelemetryClient } = require('applicationinsights') as typeof import('applicationinsights');
  const client = new TelemetryClient(connectionString);
  // Local auth is off on the Application Insights resource (Bicep): ingestion needs an Entra token.
  if (credential !== undefined) client.config.aadTokenCredential = credential;
  return client;
}

export function telemetryOn(sink: TelemetrySink): Telemetry {
  return {
    trace(level, message, properties) {
      sink.trackTrace({ message, severity: SEVERITY[level], properties: stringProperties(properties) });
    },
    event(name, properties) {
      sink.trackEvent({ name, properties: stringProperties(properties) });
    },
    metric(name, value, properties) {
      sink.trackMetric({ name, value, properties: metricDimensions(properties) });
    },
  };
}

/** Without Application Insights, traces still reach the Functions host's log through the console. */
export function consoleTelemetry(write: (line: string) => void = (line) => console.log(line)): Telemetry {
  return {
    trace(level, message, properties) {
      write(`[${level}] ${message} ${JSON.stringify(stringProperties(properties))}`);
    },
    event() {},
    metric() {},
  };
}

/**
 * Started only when a connection string is given: without one the package is never loaded, so no
 * exporter keeps the process alive or writes retry files (NOTES-RUNTIME).
 */
export function createApplicationInsightsTelemetry(
  connectionString: string | undefined,
  credential?: TokenCredential,
  makeSink: (
    connectionString: string,
    credential: TokenCredential | undefined,
  ) => TelemetrySink = applicationInsightsClient,
): Telemetry {
  return connectionString === undefined
    ? consoleTelemetry()
    : telemetryOn(makeSink(connectionString, credential));
}

export interface RecordedTelemetry extends Telemetry {
  /** Sum of every metric's values by name, e.g. `entries.applied`. */
  readonly totals: Map<string, number>;
  readonly events: Array<{ name: string; properties: TelemetryProperties }>;
  readonly traces: Array<{ level: TraceLevel; message: string; properties: TelemetryProperties }>;
  total(name: string, where?: (properties: TelemetryProperties) => boolean): number;
}

export interface RecordingOptions {
  /**
   * Keeps every trace, event and metric with its properties (the default). Without, only the totals
   * and the latest `tail` traces and events (at most twice as many between trims) are kept, as a sink that ships its records away holds
   * nothing for long: a long run's records would otherwise be much of the heap.
   */
  keepRecords?: boolean;
  /** Without `keepRecords`: how many of the latest traces and events are kept (1,000 unless given). */
  tail?: number;
}

/** The latest traces and events a run that keeps only totals still holds, for a look at how it ended. */
export const TELEMETRY_TAIL = 1000;

/** Appends, and past twice `limit` drops the oldest so that `limit` remain: amortised O(1) per record. */
function pushBounded<T>(records: T[], record: T, limit: number): void {
  records.push(record);
  if (records.length > 2 * limit) records.splice(0, records.length - limit);
}

export function createRecordingTelemetry(options: RecordingOptions = {}): RecordedTelemetry {
  const keep = options.keepRecords ?? true;
  const limit = keep ? Infinity : Math.max(0, options.tail ?? TELEMETRY_TAIL);
  const totals = new Map<string, number>();
  const metrics: Array<{ name: string; value: number; properties: TelemetryProperties }> = [];
  const events: Array<{ name: string; properties: TelemetryProperties }> = [];
  const traces: Array<{ level: TraceLevel; message: string; properties: TelemetryProperties }> = [];
  return {
    totals,
    events,
    traces,
    trace(level, message, properties = {}) {
      if (limit > 0) pushBounded(traces, { level, message, properties }, limit);
    },
    event(name, properties = {}) {
      if (limit > 0) pushBounded(events, { name, properties }, limit);
    },
    metric(name, value, properties = {}) {
      totals.set(name, (totals.get(name) ?? 0) + value);
      if (keep) metrics.push({ name, value, properties });
    },
    total(name, where) {
      if (where === undefined) return totals.get(name) ?? 0;
      if (!keep) throw new Error(`total of ${name} by its properties: this telemetry keeps totals only`);
      return metrics
        .filter((m) => m.name === name && where(m.properties))
        .reduce((sum, m) => sum + m.value, 0);
    },
  };
}
