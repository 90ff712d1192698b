/**
 * src/functions/order-trace.ts: where each span goes and what each message carries, on the app's
 * own tracer provider setup (src/adapters/tracing.ts) with an in-memory exporter.
 */
import { createHash } from 'node:crypto';
import { context, ROOT_CONTEXT, SpanKind, trace, type Span } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTracing, type Tracing } from '../../src/adapters/tracing';
import {
  DIAGNOSTIC_ID,
  inInvocationSpan,
  messageTraceContext,
  orderTraceId,
  traceCarrier,
  tracedSender,
  tracedStarter,
  TRACEPARENT,
} from '../../src/functions/order-trace';
import { estimateMessageBytes } from '../../src/services/message-size';
import type { FulfillmentInput, OutgoingMessage } from '../../src/services/ports';

const OTHER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const OTHER_PARENT = `00-${OTHER_TRACE}-b7ad6b7169203331-01`;

let exporter: InMemorySpanExporter;
let tracing: Tracing;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  tracing = startTracing({ serviceName: 'test', spanProcessors: [new SimpleSpanProcessor(exporter)] });
});

afterEach(async () => {
  await tracing.shutdown();
});

/** Every finished span by name; the exporter forgets them at shutdown. */
const finished = (name: string): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((span) => span.name === name);

function entry(orderId: string, size = 0): OutgoingMessage {
  return {
    messageId: `${orderId}-T1`,
    sessionId: orderId,
    body: { orderId, transactionId: `${orderId}-T1`, padding: 'x'.repeat(size) },
    applicationProperties: { sequence: 1 },
  };
}

function recordingSender() {
  const sent: OutgoingMessage[] = [];
  return {
    sent,
    send: async (_queue: string, messages: readonly OutgoingMessage[]) => void sent.push(...messages),
  };
}

describe('orderTraceId', () => {
  it('is the first 16 bytes of SHA-256 of "order:<orderId>", as a KQL query computes it', () => {
    expect(orderTraceId('O-17')).toBe(createHash('sha256').update('order:O-17').digest('hex').slice(0, 32));
    expect(orderTraceId('O-17')).toMatch(/^[0-9a-f]{32}$/);
    expect(orderTraceId('O-18')).not.toBe(orderTraceId('O-17'));
    // UTF-8, as hash_sha256 of a string.
    expect(orderTraceId('Ö-1')).toBe(
      createHash('sha256').update(Buffer.from('order:Ö-1', 'utf8')).digest('hex').slice(0, 32),
    );
  });
});

describe('a message trace context', () => {
  it('is its traceparent, else its Diagnostic-Id; anything else is none', () => {
    expect(messageTraceContext({ [TRACEPARENT]: OTHER_PARENT })?.traceId).toBe(OTHER_TRACE);
    expect(messageTraceContext({ [DIAGNOSTIC_ID]: OTHER_PARENT })?.spanId).toBe('b7ad6b7169203331');
    expect(
      messageTraceContext({ [TRACEPARENT]: `00-${'0'.repeat(32)}-b7ad6b7169203331-01` }),
    ).toBeUndefined();
    expect(messageTraceContext({ [DIAGNOSTIC_ID]: '|a1b2c3.1.' })).toBeUndefined();
    expect(messageTraceContext({ [TRACEPARENT]: 7 })).toBeUndefined();
    expect(messageTraceContext({})).toBeUndefined();
  });
});

describe('an invocation span', () => {
  const invoke = (orderId: string | undefined, incoming: ReturnType<typeof messageTraceContext>[]) =>
    inInvocationSpan({ name: 'work', kind: SpanKind.CONSUMER, orderId, incoming }, async (span) => span);

  it("continues an incoming context that is in the order's trace, linking the others", async () => {
    const parent = `00-${orderTraceId('O-1')}-1111111111111111-01`;
    await invoke('O-1', [
      messageTraceContext({ traceparent: OTHER_PARENT }),
      messageTraceContext({ traceparent: parent }),
    ]);
    const [span] = finished('work');
    expect(span.spanContext().traceId).toBe(orderTraceId('O-1'));
    expect(span.parentSpanContext?.spanId).toBe('1111111111111111');
    expect(span.links.map((link) => link.context.traceId)).toEqual([OTHER_TRACE]);
    expect(span.attributes['order.id']).toBe('O-1');
  });

  it("is a root of the order's trace when nothing it came with is in it, linked to what it came with", async () => {
    await invoke('O-1', [messageTraceContext({ traceparent: OTHER_PARENT })]);
    const [span] = finished('work');
    expect(span.spanContext().traceId).toBe(orderTraceId('O-1'));
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.links.map((link) => link.context.spanId)).toEqual(['b7ad6b7169203331']);
  });

  it('without an order, continues the first context it came with, else starts a trace', async () => {
    await invoke(undefined, [undefined, messageTraceContext({ traceparent: OTHER_PARENT })]);
    await invoke(undefined, []);
    const [continued, started] = finished('work');
    expect(continued.spanContext().traceId).toBe(OTHER_TRACE);
    expect(started.parentSpanContext).toBeUndefined();
    expect(started.attributes['order.id']).toBeUndefined();
  });

  it('is active while the work runs, and marked failed when it throws', async () => {
    let active: Span | undefined;
    await expect(
      inInvocationSpan({ name: 'work', kind: SpanKind.CONSUMER, orderId: 'O-1', incoming: [] }, async () => {
        active = trace.getActiveSpan();
        throw new Error('store down');
      }),
    ).rejects.toThrow('store down');
    const [span] = finished('work');
    expect(active?.spanContext().spanId).toBe(span.spanContext().spanId);
    expect(span.status).toEqual({ code: 2, message: 'store down' });
    expect(span.events.map((event) => event.name)).toEqual(['exception']);
  });
});

describe('the traced sender', () => {
  it("sends each entry from a batch's span in a span of its order's trace, each way linked, the context in the message", async () => {
    const sender = recordingSender();
    const batch = trace.getTracer('test').startSpan('process ledger', {}, ROOT_CONTEXT);
    await context.with(trace.setSpan(ROOT_CONTEXT, batch), () =>
      tracedSender(sender, 262_144).send('order-transactions', [entry('O-1'), entry('O-2')]),
    );
    batch.end();
    const sends = finished('send order-transactions');
    expect(sends.map((span) => [span.spanContext().traceId, span.attributes['order.id']])).toEqual([
      [orderTraceId('O-1'), 'O-1'],
      [orderTraceId('O-2'), 'O-2'],
    ]);
    expect(
      sends.every((span) => span.parentSpanContext === undefined && span.kind === SpanKind.PRODUCER),
    ).toBe(true);
    expect(sends.map((span) => span.links[0].context.spanId)).toEqual([
      batch.spanContext().spanId,
      batch.spanContext().spanId,
    ]);
    expect(finished('process ledger')[0].links.map((link) => link.context.spanId)).toEqual(
      sends.map((span) => span.spanContext().spanId),
    );
    expect(sender.sent.map((message) => message.applicationProperties)).toEqual(
      sends.map((span) => {
        const traceparent = `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;
        return { sequence: 1, [TRACEPARENT]: traceparent, [DIAGNOSTIC_ID]: traceparent };
      }),
    );
  });

  it("sends inside an order's span as that span's child: a park during a delivery", async () => {
    const sender = recordingSender();
    await inInvocationSpan(
      { name: 'process order-transactions', kind: SpanKind.CONSUMER, orderId: 'O-1', incoming: [] },
      () => tracedSender(sender, 262_144).send('parked', [entry('O-1')]),
    );
    const [park] = finished('send parked');
    expect(park.parentSpanContext?.spanId).toBe(
      finished('process order-transactions')[0].spanContext().spanId,
    );
    expect(park.links).toEqual([]);
  });

  it('leaves the context out of a message it would take over the size limit, and marks the spans of a failed send', async () => {
    const sender = recordingSender();
    const near = entry('O-1', 1000);
    const limit = estimateMessageBytes(near) + 50;
    await tracedSender(sender, limit).send('order-transactions', [near, entry('O-2')]);
    expect(sender.sent[0]).toEqual(near);
    expect(sender.sent[1].applicationProperties?.[TRACEPARENT]).toBeDefined();

    const refusing = { send: async () => Promise.reject(new Error('bus down')) };
    await expect(tracedSender(refusing, limit).send('parked', [entry('O-3')])).rejects.toThrow('bus down');
    expect(finished('send parked')[0].status.code).toBe(2);
  });
});

describe('the traced starter', () => {
  it('starts the saga with its span active and its context in the input', async () => {
    const order: FulfillmentInput = {
      orderId: 'O-1',
      customerId: 'C',
      currency: 'EUR',
      total: 5,
      correlationId: null,
    };
    const started: Array<{ input: FulfillmentInput; active: string | undefined }> = [];
    const starter = {
      start: async (input: FulfillmentInput) =>
        void started.push({ input, active: trace.getActiveSpan()?.spanContext().spanId }),
    };
    await tracedStarter(starter, 'fulfillOrder').start(order);
    const [span] = finished('start fulfillOrder');
    expect(span.spanContext().traceId).toBe(orderTraceId('O-1'));
    expect(started).toEqual([
      {
        input: { ...order, traceparent: `00-${orderTraceId('O-1')}-${span.spanContext().spanId}-01` },
        active: span.spanContext().spanId,
      },
    ]);
  });
});

describe('without a tracer provider', () => {
  it('adds nothing to messages or to the saga input', async () => {
    await tracing.shutdown();
    const sender = recordingSender();
    await tracedSender(sender, 262_144).send('order-transactions', [entry('O-1')]);
    expect(sender.sent).toEqual([entry('O-1')]);
    const inputs: FulfillmentInput[] = [];
    const order: FulfillmentInput = {
      orderId: 'O-1',
      customerId: 'C',
      currency: 'EUR',
      total: 5,
      correlationId: null,
    };
    await tracedStarter({ start: async (input) => void inputs.push(input) }, 'fulfillOrder').start(order);
    expect(inputs).toEqual([order]);
    expect(
      traceCarrier(
        trace.wrapSpanContext({ traceId: orderTraceId('O-1'), spanId: '1111111111111111', traceFlags: 1 }),
      ),
    ).toEqual({});
    tracing = startTracing({ serviceName: 'test', spanProcessors: [] });
  });
});
