/**
 * The Telemetry port: Application Insights on Azure when its connection string is set (DESIGN
 * decision 6), a recording one in the embedded runtime whose counts feed the run's report.
 */
import type { TokenCredential } from '@azure/identity';
import type { Telemetry, TelemetryProperties } from '../services/ports';

function stringProperties(properties: TelemetryProperties | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(properties ?? {})) {
    if (value !== undefined && value !== null) result[key] = String(value);
  }
  return result;
}

/**
 * Started only when a connection string is given: without one nothing is loaded, so no exporter
 * keeps the process alive or writes retry files (NOTES-RUNTIME).
 */
export function createApplicationInsightsTelemetry(
  connectionString: string | undefined,
  credential?: TokenCredential,
): Telemetry {
  if (connectionString === undefined) return { event() {}, metric() {} };
  // Loaded on demand: the package starts OpenTelemetry machinery as soon as it is used.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { TelemetryClient } = require('applicationinsights') as typeof import('applicationinsights');
  const client = new TelemetryClient(connectionString);
  // Local auth is off on the Application Insights resource (Bicep): ingestion needs a Entra token.
  if (credential !== undefined) client.config.aadTokenCredential = credential;
  return {
    event(name, properties) {
      client.trackEvent({ name, properties: stringProperties(properties) });
    },
    metric(name, value, properties) {
      client.trackMetric({ name, value, properties: metricDimensions(properties) });
    },
  };
}

/** Each distinct value of a metric dimension makes a series: ids belong on events and logs, not here. */
const METRIC_DIMENSIONS = new Set(['reason', 'queue', 'operation', 'outcome']);

function metricDimensions(properties: TelemetryProperties | undefined): Record<string, string> {
  const all = stringProperties(properties);
  return Object.fromEntries(Object.entries(all).filter(([key]) => METRIC_DIMENSIONS.has(key)));
}

export interface RecordedTelemetry extends Telemetry {
  /** Sum of every metric's values by name, e.g. `entries.applied`. */
  readonly totals: Map<string, number>;
  readonly events: Array<{ name: string; properties: TelemetryProperties }>;
  total(name: string, where?: (properties: TelemetryProperties) => boolean): number;
}

export function createRecordingTelemetry(): RecordedTelemetry {
  const totals = new Map<string, number>();
  const metrics: Array<{ name: string; value: number; properties: TelemetryProperties }> = [];
  const events: Array<{ name: string; properties: TelemetryProperties }> = [];
  return {
    totals,
    events,
    event(name, properties = {}) {
      events.push({ name, properties });
    },
    metric(name, value, properties = {}) {
      totals.set(name, (totals.get(name) ?? 0) + value);
      metrics.push({ name, value, properties });
    },
    total(name, where) {
      if (where === undefined) return totals.get(name) ?? 0;
      return metrics
        .filter((m) => m.name === name && where(m.properties))
        .reduce((sum, m) => sum + m.value, 0);
    },
  };
}
