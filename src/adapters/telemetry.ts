/**
 * The Telemetry port: Application Insights on Azure when its connection string is set (docs/architecture.md
 * decision 6), a recording one in the embedded runtime whose counts feed the run's report.
 */
import type { TokenCredential } from '@azure/identity';
import type { Telemetry, TelemetryProperties } from '../services/ports';
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
