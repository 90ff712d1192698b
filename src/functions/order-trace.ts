/**
 * One trace per order (docs/architecture.md, "Tracing"). An order's entries arrive in many ledger
 * batches, over many deliveries, and its saga runs later still, so no one span can be its root.
 * Its trace id is derived from the order id instead, `orderTraceId`: any delivery, activity or
 * HTTP call that works for the order places its span in that trace, continuing the trace context it
 * was given when that context is already in the order's trace, else as a root of the order's trace
 * linked to what it was given. An operator, a query or a tool computes the id from the order id.
 *
 * The context travels as W3C `traceparent` (and `Diagnostic-Id`, the name Service Bus tools read)
 * in each message's application properties, and in the saga's input. A ledger batch, which carries
 * entries of many orders, has a trace of its own and links to each order's span it started.
 *
 * With no tracer provider registered (src/adapters/tracing.ts) every span here is the API's no-op
 * span and nothing is added to messages.
 */
import { createHash } from 'node:crypto';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Link,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import type { InvocationContext } from '@azure/functions';
import { startRootSpanInTrace } from '../adapters/tracing';
import { estimateMessageBytes } from '../services/message-size';
import type {
  ApplicationProperties,
  FulfillmentStarter,
  MessageSender,
  OutgoingMessage,
} from '../services/ports';

export { SpanKind };

/**
 * The trace id of an order: the first 16 bytes of SHA-256 of `order:<orderId>` (UTF-8), as 32
 * lowercase hex digits. In Application Insights, `operation_Id ==
 * substring(hash_sha256(strcat("order:", "<orderId>")), 0, 32)`. W3C Trace Context asks for a
 * globally unique trace id and prefers, without requiring, a random one; a hash of a unique order
 * id is unique (a collision is as likely as one of random ids), and it is uniformly distributed,
 * so a sampler on the trace id keeps or drops whole orders. It is not random, so the level 2
 * `random-trace-id` flag is never set (the SDK's propagator writes only `sampled`). All zeros, the
 * one invalid id, has probability 2^-128.
 */
export function orderTraceId(orderId: string): string {
  return createHash('sha256').update(`order:${orderId}`, 'utf8').digest('hex').slice(0, 32);
}

/** Span attribute names: OpenTelemetry's messaging semantic conventions, and the app's own. */
export const ATTRIBUTE = {
  orderId: 'order.id',
  messagingSystem: 'messaging.system',
  destination: 'messaging.destination.name',
  operation: 'messaging.operation.type',
  messageId: 'messaging.message.id',
  deliveryCount: 'messaging.servicebus.message.delivery_count',
  functionName: 'faas.name',
  invocationId: 'faas.invocation_id',
} as const;

export const TRACEPARENT = 'traceparent';
/** What `@azure/service-bus` and Service Bus tools name the W3C `traceparent` of a message. */
export const DIAGNOSTIC_ID = 'Diagnostic-Id';
const TRACESTATE = 'tracestate';

function tracer() {
  return trace.getTracer('order-convoy');
}

function spanContextOf(carrier: Record<string, string>): SpanContext | undefined {
  const extracted = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, carrier));
  return extracted !== undefined && trace.isSpanContextValid(extracted) ? extracted : undefined;
}

/**
 * The trace context a message carries: `traceparent`, else `Diagnostic-Id`. Read here because the
 * Node worker does not make it the invocation's (azure-functions-nodejs-worker#632).
 */
export function messageTraceContext(properties: ApplicationProperties): SpanContext | undefined {
  const parent = properties[TRACEPARENT] ?? properties[DIAGNOSTIC_ID];
  if (typeof parent !== 'string') return undefined;
  const state = properties[TRACESTATE];
  return spanContextOf(
    typeof state === 'string' ? { traceparent: parent, tracestate: state } : { traceparent: parent },
  );
}

/** The trace context the Functions host gave the invocation (its own span for it, on Azure). */
export function hostTraceContext(invocation: InvocationContext): SpanContext | undefined {
  const { traceParent, traceState } = invocation.traceContext ?? {};
  if (typeof traceParent !== 'string' || traceParent === '') return undefined;
  return spanContextOf(
    typeof traceState === 'string' && traceState !== ''
      ? { traceparent: traceParent, tracestate: traceState }
      : { traceparent: traceParent },
  );
}

/** A span's context in W3C form: `traceparent`, and `tracestate` when it has one. */
export function traceCarrier(span: Span): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier;
}

export interface InvocationSpan {
  name: string;
  kind: SpanKind;
  /** The order the invocation works for: its span belongs to the order's trace. */
  orderId?: string;
  /** Trace contexts the invocation came with, the nearest first: the host's span, then the message's. */
  incoming: ReadonlyArray<SpanContext | undefined>;
  attributes?: Attributes;
}

/**
 * What names a `requests` row and its `operation_Name`. The Azure Monitor exporter names a server
 * span's row after the span, but a consumer span's only after this attribute, which it takes as
 * the `ai.operation.name` tag and leaves out of `customDimensions` (utils/spanUtils.js
 * `createTagsFromSpan`, `createPropertiesFromSpanAttributes`, `readableSpanToEnvelope` of
 * @azure/monitor-opentelemetry-exporter).
 */
const OPERATION_NAME = 'ai.operation.name';

/**
 * The invocation's span: for an order, under the first incoming context in the order's trace, else
 * a root of that trace linked to the incoming ones; otherwise under the first incoming context,
 * else the root of a new trace. A consumer span (a delivery, an activity) says its name as its row's.
 */
function startInvocationSpan(spec: InvocationSpan): Span {
  const incoming = spec.incoming.filter((context): context is SpanContext => context !== undefined);
  const traceId = spec.orderId === undefined ? undefined : orderTraceId(spec.orderId);
  const parent =
    traceId === undefined ? incoming[0] : incoming.find((context) => context.traceId === traceId);
  const named: Attributes =
    spec.kind === SpanKind.CONSUMER
      ? { ...spec.attributes, [OPERATION_NAME]: spec.name }
      : { ...spec.attributes };
  const options = {
    kind: spec.kind,
    attributes: spec.orderId === undefined ? named : { ...named, [ATTRIBUTE.orderId]: spec.orderId },
    links: incoming.filter((context) => context !== parent).map((context): Link => ({ context })),
  };
  if (parent !== undefined)
    return tracer().startSpan(spec.name, options, trace.setSpanContext(ROOT_CONTEXT, parent));
  if (traceId !== undefined) return startRootSpanInTrace(tracer(), traceId, spec.name, options);
  return tracer().startSpan(spec.name, options, ROOT_CONTEXT);
}

/** Runs `work` with `span` active, and ends the span: an error it throws marks the span failed. */
async function within<T>(span: Span, work: (span: Span) => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(ROOT_CONTEXT, span), () => work(span));
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
    throw error;
  } finally {
    span.end();
  }
}

/** Runs one invocation inside its span (see `startInvocationSpan`). */
export function inInvocationSpan<T>(spec: InvocationSpan, work: (span: Span) => Promise<T>): Promise<T> {
  return within(startInvocationSpan(spec), work);
}

/**
 * A span for work done for `orderId` inside the active span: its child when the active span is in
 * the order's trace (or there is no order), else a root of the order's trace, the two linked each
 * way (a ledger batch's span and the orders it carries).
 */
function startOrderSpan(
  name: string,
  kind: SpanKind,
  orderId: string | undefined,
  attributes: Attributes,
): Span {
  const active = trace.getActiveSpan();
  if (orderId === undefined) return tracer().startSpan(name, { kind, attributes });
  const traceId = orderTraceId(orderId);
  const withOrder = { ...attributes, [ATTRIBUTE.orderId]: orderId };
  if (active?.spanContext().traceId === traceId)
    return tracer().startSpan(name, { kind, attributes: withOrder });
  const links: Link[] = active === undefined ? [] : [{ context: active.spanContext() }];
  const span = startRootSpanInTrace(tracer(), traceId, name, { kind, attributes: withOrder, links });
  if (trace.isSpanContextValid(span.spanContext())) active?.addLink({ context: span.spanContext() });
  return span;
}

/** The order a message is for: an entry's `orderId` (the body of entries and their parked copies). */
function orderOfMessage(message: OutgoingMessage): string | undefined {
  const body = message.body;
  if (typeof body !== 'object' || body === null || !Object.hasOwn(body, 'orderId')) return undefined;
  const orderId = (body as { orderId: unknown }).orderId;
  return typeof orderId === 'string' ? orderId : undefined;
}

/**
 * The message with the span's context in its application properties, unless that would take it
 * over the size limit: the ledger admits an entry by its size without them (src/services/message-size.ts),
 * and a message must not fail for its trace context.
 */
function withTraceContext(message: OutgoingMessage, span: Span, maxMessageBytes: number): OutgoingMessage {
  const carrier = traceCarrier(span);
  if (carrier.traceparent === undefined) return message;
  const traced: OutgoingMessage = {
    ...message,
    applicationProperties: {
      ...message.applicationProperties,
      ...carrier,
      [DIAGNOSTIC_ID]: carrier.traceparent,
    },
  };
  return estimateMessageBytes(traced) <= maxMessageBytes ? traced : message;
}

/**
 * The sender, each message sent in a producer span of its own (`send <queue>`), in its order's
 * trace, and carrying that span's context.
 */
export function tracedSender(sender: MessageSender, maxMessageBytes: number): MessageSender {
  return {
    async send(queue, messages) {
      const spans = messages.map((message) =>
        startOrderSpan(`send ${queue}`, SpanKind.PRODUCER, orderOfMessage(message), {
          [ATTRIBUTE.messagingSystem]: 'servicebus',
          [ATTRIBUTE.destination]: queue,
          [ATTRIBUTE.operation]: 'send',
          [ATTRIBUTE.messageId]: message.messageId,
        }),
      );
      try {
        await sender.send(
          queue,
          messages.map((message, index) => withTraceContext(message, spans[index], maxMessageBytes)),
        );
      } catch (error) {
        for (const span of spans) span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
        throw error;
      } finally {
        for (const span of spans) span.end();
      }
    },
  };
}

/**
 * The saga's starter, the start in a span of the order's trace that is active while the durable
 * client calls (durable-functions sends `traceparent` to the Durable extension only when a span is
 * active: `DurableClient.getDistributedTracingHeaders`, azure-functions-durable-js pull request 632),
 * and whose context the saga's input carries for its activities (./registration.ts).
 */
export function tracedStarter(starter: FulfillmentStarter, orchestration: string): FulfillmentStarter {
  return {
    start(input) {
      const span = startOrderSpan(`start ${orchestration}`, SpanKind.PRODUCER, input.orderId, {});
      return within(span, () => {
        const { traceparent } = traceCarrier(span);
        return starter.start(traceparent === undefined ? input : { ...input, traceparent });
      });
    },
  };
}
