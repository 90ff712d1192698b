/**
 * The one OpenTelemetry tracer provider setup, for Azure (spans to Application Insights through
 * `@azure/monitor-opentelemetry-exporter`, src/adapters/telemetry.ts) and for the embedded runtime
 * (`npm start -- --traces FILE`, local/trace-file.ts) alike, so that what the local run proves is
 * what deploys. The light path of Microsoft Learn "Use OpenTelemetry with Azure Functions"
 * (JavaScript): `@opentelemetry/api`, the SDK's tracer provider, an AsyncLocalStorage context
 * manager and the W3C propagator, without the auto-instrumentations, which load every
 * instrumentation and cost cold start (docs/architecture.md, decision 6).
 */
import {
  context,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  ParentBasedSampler,
  RandomIdGenerator,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type IdGenerator,
  type ReadableSpan,
  type Sampler,
  type SamplingResult,
  type Span as SdkSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/**
 * Random ids, except for a root span started by `startRootSpanInTrace`: that one gets the trace id
 * it was asked for. The SDK asks its IdGenerator for a trace id only for a root span, synchronously
 * inside `startSpan` (sdk-trace `Tracer.startSpan`), so a value set just around that call is read by
 * that span alone.
 */
class ChosenTraceIds implements IdGenerator {
  readonly #random = new RandomIdGenerator();
  chosen: string | undefined;

  generateTraceId(): string {
    return this.chosen ?? this.#random.generateTraceId();
  }

  generateSpanId(): string {
    return this.#random.generateSpanId();
  }
}

const TRACE_IDS = new ChosenTraceIds();

/**
 * A root span (no parent) in the trace `traceId` (32 lowercase hex digits). With a provider of
 * `startTracing` it carries that id; with none registered it is the API's no-op span.
 */
export function startRootSpanInTrace(
  tracer: Tracer,
  traceId: string,
  name: string,
  options: Omit<SpanOptions, 'root'> = {},
): Span {
  TRACE_IDS.chosen = traceId;
  try {
    return tracer.startSpan(name, { ...options, root: true });
  } finally {
    TRACE_IDS.chosen = undefined;
  }
}

/** `microsoft.sample_rate`, the exporter's `AzureMonitorSampleRate` (utils/constants/applicationinsights). */
export const SAMPLE_RATE = 'microsoft.sample_rate';

/**
 * Keeps a whole trace or none of it: a root span is kept when `TraceIdRatioBasedSampler(ratio)`
 * keeps its trace id, every other span follows its parent's decision (the W3C `sampled` flag of
 * `traceparent` for a delivery). An order's trace id is derived from its order id
 * (src/functions/order-trace.ts), so each order is kept or dropped whole, and the same way in every
 * process. A span dropped is still recorded (`RECORD`, not `NOT_RECORD`), so that one which ends in
 * error can still be exported by `ExportSampledOrFailed`; nothing else of it leaves the process.
 */
export class OrderSampler implements Sampler {
  readonly #ratio: TraceIdRatioBasedSampler;

  constructor(readonly ratio: number) {
    this.#ratio = new TraceIdRatioBasedSampler(ratio);
  }

  /** Whether the trace `traceId` is kept, as a root span of it decides. */
  keeps(traceId: string): boolean {
    return (
      this.#ratio.shouldSample(context.active(), traceId).decision === SamplingDecision.RECORD_AND_SAMPLED
    );
  }

  shouldSample(parentContext: Context, traceId: string): SamplingResult {
    const parent = trace.getSpanContext(parentContext);
    const kept =
      parent !== undefined && trace.isSpanContextValid(parent)
        ? (parent.traceFlags & TraceFlags.SAMPLED) !== 0
        : this.keeps(traceId);
    if (!kept) return { decision: SamplingDecision.RECORD };
    // The share kept, in percent, as the Azure Monitor exporter reads it into the envelope's
    // `sampleRate` (its spanUtils `AzureMonitorSampleRate`): Application Insights then counts each
    // kept span for 100 / sampleRate (`itemCount`).
    return { decision: SamplingDecision.RECORD_AND_SAMPLED, attributes: { [SAMPLE_RATE]: this.ratio * 100 } };
  }

  toString(): string {
    return `OrderSampler{${this.ratio}}`;
  }
}

/**
 * A view of a failed span as exported whatever its trace's decision: sampled, and without the kept
 * share (`SAMPLE_RATE`), since every failure is exported and each counts once.
 */
function asAlwaysExported(span: ReadableSpan): ReadableSpan {
  const spanContext = {
    ...span.spanContext(),
    traceFlags: span.spanContext().traceFlags | TraceFlags.SAMPLED,
  };
  const attributes = Object.fromEntries(
    Object.entries(span.attributes).filter(([key]) => key !== SAMPLE_RATE),
  );
  return new Proxy(span, {
    get(target, property) {
      if (property === 'spanContext') return () => spanContext;
      if (property === 'attributes') return attributes;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Whether the Azure Monitor exporter makes the span a failed row (`success == false`), by the rules
 * of its utils/spanUtils.js: a dependency (`createDependencyData`) when its status is an error; a
 * request, a server or consumer span (`createRequestData`), when its status is an error, or it has
 * none and an HTTP status of 400 or more. An HTTP function that answers 5xx sets the status code, not
 * an error (src/functions/registration.ts).
 */
export function isFailedSpan(span: Pick<ReadableSpan, 'kind' | 'status' | 'attributes'>): boolean {
  const request = span.kind === SpanKind.SERVER || span.kind === SpanKind.CONSUMER;
  if (span.status.code !== SpanStatusCode.UNSET || !request) return span.status.code === SpanStatusCode.ERROR;
  const status = span.attributes['http.response.status_code'] ?? span.attributes['http.status_code'];
  return (Number(status) || 0) >= 400;
}

/**
 * Passes `inner` the spans of kept traces, and besides them every span the exporter makes a failed
 * row of (`isFailedSpan`), whatever its trace's decision: the function-failures alert counts failed
 * deliveries and 5xx answers (`requests` with `success == false`, bicep/modules/alerts.bicep), which
 * sampling must not take away. So every row with `success == false` is in Application Insights, each
 * counting once.
 */
export class ExportSampledOrFailed implements SpanProcessor {
  constructor(readonly inner: SpanProcessor) {}

  onStart(span: SdkSpan, parentContext: Context): void {
    this.inner.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    if (isFailedSpan(span)) this.inner.onEnd(asAlwaysExported(span));
    else if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) this.inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/** What every signal says of its source: `service.name`, which Application Insights shows as the cloud role name. */
export function serviceResource(serviceName: string): Resource {
  return resourceFromAttributes({ 'service.name': serviceName });
}

export interface TracingOptions {
  /** Where finished spans go: a batch processor with an exporter on Azure, a simple one locally. */
  spanProcessors: SpanProcessor[];
  /**
   * Which traces are kept. Every one by default; a parent-based sampler keeps or drops a whole
   * trace, and since an order's trace id is derived from the order id (src/functions/order-trace.ts),
   * a ratio sampler on the trace id keeps or drops a whole order.
   */
  sampler?: Sampler;
  /** See `serviceResource`. */
  serviceName: string;
}

export interface Tracing {
  /** Exports what is buffered and stops; the global API is left without a provider. */
  shutdown(): Promise<void>;
}

/**
 * Registers the tracer provider, the context manager (AsyncLocalStorage: the active span follows
 * every await of an invocation) and the W3C `traceparent` propagator as the process's globals, as
 * `NodeTracerProvider.register()` would, and returns how to stop them.
 */
export function startTracing(options: TracingOptions): Tracing {
  const provider = new BasicTracerProvider({
    resource: serviceResource(options.serviceName),
    sampler: options.sampler ?? new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    idGenerator: TRACE_IDS,
    spanProcessors: options.spanProcessors,
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
