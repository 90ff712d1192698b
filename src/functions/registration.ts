/**
 * How every function definition is registered with the Functions host: one loop per trigger kind,
 * each definition's options (its extra inputs included) passed as they are. The Azure entry point
 * (./index) and the embedded runtime both call this; the embedded host then reads back what
 * `@azure/functions` registered, so neither side has registrations of its own.
 *
 * Activities and HTTP functions run in a span of their own here (./order-trace.ts), in the trace of
 * the order they work for; the Service Bus functions make their spans themselves, from the message.
 * Orchestrators have none: they replay their history on every episode, so a span per episode would
 * repeat; their activities are the saga's steps, retries and compensations.
 */
import { app, type HttpRequest, type InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';
import type { ActivityHandler } from 'durable-functions';
import type {
  ActivityDefinition,
  HttpFunctionDefinition,
  OrchestrationDefinition,
  ServiceBusQueueFunction,
} from './definition';
import { ATTRIBUTE, hostTraceContext, inInvocationSpan, messageTraceContext, SpanKind } from './order-trace';

export interface FunctionDefinitions {
  serviceBus: readonly ServiceBusQueueFunction[];
  http: readonly HttpFunctionDefinition[];
  orchestrations: readonly OrchestrationDefinition[];
  activities: readonly ActivityDefinition[];
}

function tracedActivity({ name, handler, orderOf }: ActivityDefinition): ActivityHandler {
  return (input: unknown, context: InvocationContext) => {
    const work = orderOf?.(input);
    return inInvocationSpan(
      {
        name: `activity ${name}`,
        kind: SpanKind.CONSUMER,
        orderId: work?.orderId,
        incoming: [
          hostTraceContext(context),
          work?.traceparent === undefined
            ? undefined
            : messageTraceContext({ traceparent: work.traceparent }),
        ],
        attributes: { [ATTRIBUTE.functionName]: name, [ATTRIBUTE.invocationId]: context.invocationId },
      },
      async () => handler(input, context),
    );
  };
}

/** An HTTP function's span: in the order's trace when its route names one (`{orderId}`). */
function tracedHttp(
  name: string,
  route: string,
  handler: HttpFunctionDefinition['handler'],
): HttpFunctionDefinition['handler'] {
  return (request: HttpRequest, context: InvocationContext) => {
    const orderId = request.params.orderId;
    const traceparent = request.headers.get('traceparent');
    return inInvocationSpan(
      {
        name: `${request.method} ${route}`,
        kind: SpanKind.SERVER,
        orderId: orderId === undefined || orderId === '' ? undefined : orderId,
        incoming: [
          hostTraceContext(context),
          traceparent === null ? undefined : messageTraceContext({ traceparent }),
        ],
        attributes: {
          [ATTRIBUTE.functionName]: name,
          [ATTRIBUTE.invocationId]: context.invocationId,
          'http.request.method': request.method,
          'http.route': route,
        },
      },
      async (span) => {
        const response = await handler(request, context);
        span.setAttribute('http.response.status_code', response.status ?? 200);
        return response;
      },
    );
  };
}

export function registerFunctions(definitions: FunctionDefinitions): void {
  for (const { name, handler, ...options } of definitions.serviceBus) {
    app.serviceBusQueue(name, { ...options, handler });
  }
  for (const { name, handler, ...options } of definitions.http) {
    app.http(name, { ...options, handler: tracedHttp(name, options.route, handler) });
  }
  for (const { name, handler } of definitions.orchestrations) df.app.orchestration(name, handler);
  for (const definition of definitions.activities) {
    df.app.activity(definition.name, { handler: tracedActivity(definition) });
  }
}
