/**
 * One definition per function: the trigger options, the extra inputs and the handler, registered by
 * ./registration through `@azure/functions` on Azure and in the embedded runtime alike. The embedded
 * host runs what the library registered, never a copy.
 */
import type {
  FunctionInput,
  HttpMethod,
  HttpRequest,
  HttpResponseInit,
  InvocationContext,
} from '@azure/functions';
import type { ActivityHandler, OrchestrationHandler } from 'durable-functions';

export interface ServiceBusQueueFunction {
  name: string;
  queueName: string;
  /** Name of the app-setting prefix of the identity-based connection, e.g. `ServiceBusConnection`. */
  connection: string;
  isSessionsEnabled: boolean;
  /** Secondary inputs the host binds for each invocation (the durable client). */
  extraInputs?: FunctionInput[];
  handler: (message: unknown, context: InvocationContext) => Promise<void>;
}

/** A durable orchestrator function, exactly as passed to `df.app.orchestration`. */
export interface OrchestrationDefinition {
  name: string;
  handler: OrchestrationHandler;
}

/** The order an invocation works for, and the trace context it was handed (./order-trace.ts). */
export interface OrderWork {
  orderId: string;
  /** W3C `traceparent` of the span that asked for the work, when it was traced. */
  traceparent?: string;
}

/** A durable activity, exactly as passed to `df.app.activity`. */
export interface ActivityDefinition {
  name: string;
  handler: ActivityHandler;
  /** The order its input is for: its span joins the order's trace (./registration.ts). */
  orderOf?: (input: unknown) => OrderWork | undefined;
}

/** An HTTP function, as passed to `app.http`. */
export interface HttpFunctionDefinition {
  name: string;
  route: string;
  methods: HttpMethod[];
  authLevel: 'anonymous' | 'function' | 'admin';
  extraInputs?: FunctionInput[];
  handler: (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit>;
}
