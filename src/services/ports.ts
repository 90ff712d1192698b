/**
 * The ports the use cases need. Adapters implement them for Azure (`@azure/cosmos`,
 * `@azure/service-bus`, Durable Functions, Application Insights) and for the embedded runtime.
 */

// ---------------------------------------------------------------------------------------------
// Document store: Cosmos-shaped, so the 409 / 412 / batch logic is written once (docs/architecture.md decision 4).
// Expected outcomes (201, 409, 412, 404) are returned as status codes, as Cosmos reports them;
// failures throw TransientError (throttling, timeouts, unavailability) or PermanentError.
// ---------------------------------------------------------------------------------------------

/** A JSON document. `id` is unique within its partition; the partition key is a top-level field. */
export interface Document {
  id: string;
  /** Seconds to live, counted from the last write; needs TTL enabled on the container. */
  ttl?: number;
  [field: string]: unknown;
}

export interface Stored<T extends Document = Document> {
  document: T;
  etag: string;
}

export type CreateResult = { status: 201; etag: string } | { status: 409 };
export type ReplaceResult = { status: 200; etag: string } | { status: 404 } | { status: 412 };
export type UpsertResult = { status: 200 | 201; etag: string } | { status: 412 };
export type DeleteResult = { status: 204 } | { status: 404 } | { status: 412 };

export interface WriteOptions {
  /** Write only if the stored document still has this etag (optimistic concurrency). */
  ifMatch?: string;
}

export type BatchOperation =
  | { op: 'create'; document: Document }
  | { op: 'replace'; document: Document; ifMatch?: string }
  | { op: 'upsert'; document: Document; ifMatch?: string }
  | { op: 'delete'; id: string; ifMatch?: string }
  | { op: 'read'; id: string };

export interface BatchOperationResult {
  /** 200/201/204 on success; 409, 412 or 404 for the operation that failed; 424 for the others. */
  status: number;
  etag?: string;
  document?: Document;
}

export interface BatchResult {
  /** All or nothing: when one operation fails, none of the batch is written. */
  ok: boolean;
  results: BatchOperationResult[];
}

export const MAX_BATCH_OPERATIONS = 100;

export interface QuerySpec {
  /** Restrict to one partition (cheap); omit for a cross-partition query. */
  partitionKey?: string;
  /** Top-level fields that must equal these values. */
  where?: Record<string, string | number | boolean>;
  /** Top-level fields that must be numbers greater than these values. */
  above?: Record<string, number>;
}

export interface DocumentContainer {
  readonly name: string;
  /** A single-level path such as `/orderId`. */
  readonly partitionKeyPath: string;
  create(document: Document): Promise<CreateResult>;
  read<T extends Document>(partitionKey: string, id: string): Promise<Stored<T> | undefined>;
  replace(document: Document, options?: WriteOptions): Promise<ReplaceResult>;
  upsert(document: Document, options?: WriteOptions): Promise<UpsertResult>;
  delete(partitionKey: string, id: string, options?: WriteOptions): Promise<DeleteResult>;
  /** A transactional batch within one partition, at most MAX_BATCH_OPERATIONS operations. */
  batch(partitionKey: string, operations: readonly BatchOperation[]): Promise<BatchResult>;
  query<T extends Document>(spec: QuerySpec): Promise<Array<Stored<T>>>;
}

// ---------------------------------------------------------------------------------------------
// Messaging
// ---------------------------------------------------------------------------------------------

export type ApplicationProperties = Record<string, string | number | boolean>;

export interface OutgoingMessage {
  messageId: string;
  sessionId?: string;
  body: unknown;
  correlationId?: string;
  subject?: string;
  applicationProperties?: ApplicationProperties;
}

export interface MessageSender {
  /**
   * Sends the messages to the queue in as few calls as the batch size limit allows, in order.
   * Resolves when every message is accepted; throws TransientError when it may be tried again.
   */
  send(queue: string, messages: readonly OutgoingMessage[]): Promise<void>;
}

/** What the Functions host tells a handler about the message it delivers (trigger metadata). */
export interface DeliveredMessage {
  body: unknown;
  messageId: string;
  sessionId: string | undefined;
  deliveryCount: number;
  sequenceNumber: number | undefined;
  correlationId: string | undefined;
  applicationProperties: ApplicationProperties;
}

// ---------------------------------------------------------------------------------------------
// Fulfillment and telemetry
// ---------------------------------------------------------------------------------------------

/** What `fulfillOrder` starts with. Its lines are not in it: the activities that need them read
 * them from the order's transaction records (they never change once the order is submitted), so
 * neither the order's header nor the orchestration's history grows with the order. */
export interface FulfillmentInput {
  orderId: string;
  customerId: string;
  currency: string;
  total: number;
  correlationId: string | null;
  /**
   * The W3C trace context of the span that started the saga, in the order's trace: the saga's
   * activities continue it (src/functions/order-trace.ts). Absent when nothing is traced.
   */
  traceparent?: string;
}

export interface OrderLineInput {
  transactionId: string;
  sku: string;
  quantity: number;
  unitPrice: number;
}

export interface FulfillmentStarter {
  /** Starts `fulfillOrder` under the order's instance id (`fulfillmentInstanceId`); starting it again is a no-op. */
  start(input: FulfillmentInput): Promise<void>;
}

export type TelemetryProperties = Record<string, string | number | boolean | null | undefined>;

export type TraceLevel = 'information' | 'warning' | 'error';

/**
 * Structured telemetry (docs/architecture.md decision 6): traces carry orderId, messageId, sessionId,
 * correlationId and sequence as properties, so they can be queried, not parsed out of text.
 */
export interface Telemetry {
  trace(level: TraceLevel, message: string, properties?: TelemetryProperties): void;
  event(name: string, properties?: TelemetryProperties): void;
  metric(name: string, value: number, properties?: TelemetryProperties): void;
}

// ---------------------------------------------------------------------------------------------
// Durable orchestrations: the client operations the app uses. Implemented on the Durable Functions
// client on Azure and by the embedded durable driver locally.
// ---------------------------------------------------------------------------------------------

export type OrchestrationRuntimeStatus = 'Pending' | 'Running' | 'Completed' | 'Failed' | 'Terminated';

export interface OrchestrationStatus {
  instanceId: string;
  name: string;
  runtimeStatus: OrchestrationRuntimeStatus;
  input: unknown;
  output: unknown;
  customStatus: unknown;
  createdTime: string;
  lastUpdatedTime: string;
}

export interface OrchestrationClient {
  /** Starts the instance unless one with that id exists; resolves true when this call started it. */
  startNew(name: string, instanceId: string, input: unknown): Promise<boolean>;
  getStatus(instanceId: string): Promise<OrchestrationStatus | undefined>;
  raiseEvent(instanceId: string, eventName: string, data: unknown): Promise<void>;
}
