/**
 * `npm start -- --traces FILE` (docs/cli.md): every span the app finishes, one JSON object a line,
 * written as it ends. The exporter is an OpenTelemetry SpanExporter plugged into the app's own
 * tracer provider setup (src/adapters/tracing.ts) by `EverySpanProcessor`, which writes the spans of
 * every order, those the app's sampler keeps and those it drops alike (a dropped one is still
 * recorded: `OrderSampler`), so the file shows each order's trace as Application Insights holds it
 * for an order that is kept.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { SpanKind } from '@opentelemetry/api';
import { ExportResultCode, hrTimeToTimeStamp, type ExportResult } from '@opentelemetry/core';
import {
  AlwaysOnSampler,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { startTracing, type Tracing } from '../src/adapters/tracing';

/** One line of the file. */
export interface SpanLine {
  traceId: string;
  spanId: string;
  /** Absent for a root span. */
  parentSpanId?: string;
  name: string;
  kind: string;
  /** ISO 8601, to the nanosecond. */
  startTime: string;
  endTime: string;
  status: { code: 'UNSET' | 'OK' | 'ERROR'; message?: string };
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  events: Array<{ name: string; time: string; attributes: Record<string, unknown> }>;
}

const STATUS = ['UNSET', 'OK', 'ERROR'] as const;

export function spanLine(span: ReadableSpan): SpanLine {
  const { traceId, spanId } = span.spanContext();
  const parentSpanId = span.parentSpanContext?.spanId;
  return {
    traceId,
    spanId,
    ...(parentSpanId === undefined ? {} : { parentSpanId }),
    name: span.name,
    kind: SpanKind[span.kind],
    startTime: hrTimeToTimeStamp(span.startTime),
    endTime: hrTimeToTimeStamp(span.endTime),
    status: {
      code: STATUS[span.status.code],
      ...(span.status.message === undefined ? {} : { message: span.status.message }),
    },
    attributes: { ...span.attributes },
    links: span.links.map(({ context }) => ({ traceId: context.traceId, spanId: context.spanId })),
    events: span.events.map((event) => ({
      name: event.name,
      time: hrTimeToTimeStamp(event.time),
      attributes: { ...event.attributes },
    })),
  };
}

/** Appends each exported span to the file as a line, synchronously: a span is on disk once it ended. */
export class NdjsonSpanExporter implements SpanExporter {
  #fd: number | undefined;

  /** Opens (truncates) the file now, so that a path that cannot be written fails before the run. */
  constructor(path: string) {
    this.#fd = openSync(path, 'w');
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    if (this.#fd === undefined) {
      done({ code: ExportResultCode.FAILED, error: new Error('the traces file is closed') });
      return;
    }
    writeSync(this.#fd, spans.map((span) => `${JSON.stringify(spanLine(span))}\n`).join(''));
    done({ code: ExportResultCode.SUCCESS });
  }

  async shutdown(): Promise<void> {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/**
 * Hands `exporter` every span that ends, sampled or not (the SDK's simple and batch processors pass
 * on sampled spans only), one at a time as it ends.
 */
export class EverySpanProcessor implements SpanProcessor {
  constructor(readonly exporter: SpanExporter) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    this.exporter.export([span], () => undefined);
  }

  async forceFlush(): Promise<void> {}

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }
}

/** The processor that writes every span to `path` (opened, truncated, now). */
export function traceFileProcessor(path: string): SpanProcessor {
  return new EverySpanProcessor(new NdjsonSpanExporter(path));
}

/** The app's tracing, every span written to `path` as it ends. */
export function startTraceFile(path: string): Tracing {
  return startTracing({
    serviceName: 'order-convoy (npm start)',
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new SimpleSpanProcessor(new NdjsonSpanExporter(path))],
  });
}
