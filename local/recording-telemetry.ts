/**
 * Telemetry that keeps what it is given, in memory: the embedded runtime's, the bench's and the tests'
 * sink, where the app on Azure sends its telemetry to Application Insights (src/adapters/telemetry.ts).
 */
import { trace as otelTrace } from '@opentelemetry/api';
import type { Telemetry, TelemetryProperties, TraceLevel } from '../src/services/ports';
import type { MeasuredTelemetry } from './telemetry-bytes';

/**
 * `traceId`: the trace of the span active when it was written, when one was (a run with `--traces`),
 * as the log record Application Insights gets carries it (src/adapters/telemetry.ts).
 */
export interface RecordedEvent {
  name: string;
  properties: TelemetryProperties;
  traceId?: string;
}

export interface RecordedTrace {
  level: TraceLevel;
  message: string;
  properties: TelemetryProperties;
  traceId?: string;
}

export interface RecordedTelemetry extends Telemetry {
  /** Sum of every metric's values by name, e.g. `entries.applied`. */
  readonly totals: Map<string, number>;
  readonly events: RecordedEvent[];
  readonly traces: RecordedTrace[];
  total(name: string, where?: (properties: TelemetryProperties) => boolean): number;
  /** What the app would export of it to Application Insights, when measured (`RecordingOptions.measure`). */
  readonly measured?: MeasuredTelemetry;
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
  /** Sends every trace, event and metric on to be measured as exported too (./telemetry-bytes.ts). */
  measure?: MeasuredTelemetry;
}

/** The latest traces and events a run that keeps only totals still holds, for a look at how it ended. */
export const TELEMETRY_TAIL = 1000;

/** Appends, and past twice `limit` drops the oldest so that `limit` remain: amortised O(1) per record. */
function pushBounded<T>(records: T[], record: T, limit: number): void {
  records.push(record);
  if (records.length > 2 * limit) records.splice(0, records.length - limit);
}

function inActiveTrace(): { traceId?: string } {
  const context = otelTrace.getActiveSpan()?.spanContext();
  return context !== undefined && otelTrace.isSpanContextValid(context) ? { traceId: context.traceId } : {};
}

export function createRecordingTelemetry(options: RecordingOptions = {}): RecordedTelemetry {
  const keep = options.keepRecords ?? true;
  const limit = keep ? Infinity : Math.max(0, options.tail ?? TELEMETRY_TAIL);
  const totals = new Map<string, number>();
  const metrics: Array<{ name: string; value: number; properties: TelemetryProperties }> = [];
  const events: RecordedEvent[] = [];
  const traces: RecordedTrace[] = [];
  const exported = options.measure?.telemetry;
  return {
    totals,
    events,
    traces,
    ...(options.measure === undefined ? {} : { measured: options.measure }),
    trace(level, message, properties = {}) {
      exported?.trace(level, message, properties);
      if (limit > 0) pushBounded(traces, { level, message, properties, ...inActiveTrace() }, limit);
    },
    event(name, properties = {}) {
      exported?.event(name, properties);
      if (limit > 0) pushBounded(events, { name, properties, ...inActiveTrace() }, limit);
    },
    metric(name, value, properties = {}) {
      exported?.metric(name, value, properties);
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
