/**
 * The shapes of `@azure/functions-core`, the module the Node worker provides at run time, narrowed to
 * what the embedded worker uses. The library declares them in azure-functions-nodejs-library
 * `types-core/index.d.ts`, which is not published to npm; these follow that file field by field.
 */

/** `RpcTypedData`: exactly one field is set; none set is how the host sends a null. */
export interface RpcTypedData {
  string?: string | null;
  json?: string | null;
  bytes?: Uint8Array | null;
  stream?: Uint8Array | null;
  http?: RpcHttpData | null;
  int?: number | null;
  double?: number | null;
}

export interface RpcHttpData {
  method?: string | null;
  url?: string | null;
  headers?: Record<string, string> | null;
  body?: RpcTypedData | null;
  params?: Record<string, string> | null;
  statusCode?: string | null;
  query?: Record<string, string> | null;
  enableContentNegotiation?: boolean | null;
  rawBody?: RpcTypedData | null;
  cookies?: unknown[] | null;
  nullableHeaders?: Record<string, RpcNullableString> | null;
  nullableParams?: Record<string, RpcNullableString> | null;
  nullableQuery?: Record<string, RpcNullableString> | null;
}

export interface RpcNullableString {
  value?: string | null;
}

/** A binding as the library writes it into the function metadata: its type and direction, plus its options. */
export interface RpcBindingInfo {
  type?: string | null;
  direction?: 'in' | 'out' | 'inout' | null;
  dataType?: 'undefined' | 'string' | 'binary' | 'stream' | null;
  [option: string]: unknown;
}

export interface FunctionMetadata {
  name: string;
  functionId?: string;
  bindings: Record<string, RpcBindingInfo>;
  retryOptions?: unknown;
}

export interface RpcFunctionMetadata {
  name?: string | null;
  functionId?: string | null;
  bindings?: Record<string, RpcBindingInfo> | null;
  rawBindings?: string[] | null;
  scriptFile?: string | null;
  retryOptions?: unknown;
}

export interface RpcParameterBinding {
  name?: string | null;
  data?: RpcTypedData | null;
}

export interface RpcTraceContext {
  traceParent?: string | null;
  traceState?: string | null;
  attributes?: Record<string, string> | null;
}

export interface RpcInvocationRequest {
  invocationId?: string | null;
  functionId?: string | null;
  inputData?: RpcParameterBinding[] | null;
  triggerMetadata?: Record<string, RpcTypedData> | null;
  traceContext?: RpcTraceContext | null;
  retryContext?: unknown;
}

export interface RpcInvocationResponse {
  invocationId?: string | null;
  outputData?: RpcParameterBinding[] | null;
  returnValue?: RpcTypedData | null;
}

export type RpcLogLevel = 'information' | 'debug' | 'error' | 'trace' | 'warning' | 'critical' | 'none';
export type RpcLogCategory = 'user' | 'system' | 'customMetric';
export type InvocationState = 'preInvocationHooks' | 'postInvocationHooks' | 'invocation';

export interface CoreInvocationContext {
  invocationId: string;
  request: RpcInvocationRequest;
  metadata: RpcFunctionMetadata;
  state?: InvocationState;
  log(level: RpcLogLevel, category: RpcLogCategory, message: string): void;
}

export type FunctionCallback = (...args: unknown[]) => unknown;

export interface InvocationArguments {
  context: unknown;
  inputs: unknown[];
}

export interface InvocationModel {
  getArguments(): Promise<InvocationArguments>;
  invokeFunction(context: unknown, inputs: unknown[], callback: FunctionCallback): Promise<unknown>;
  getResponse(context: unknown, result: unknown): Promise<RpcInvocationResponse>;
}

export interface ProgrammingModel {
  name: string;
  version: string;
  getInvocationModel(coreContext: CoreInvocationContext): InvocationModel | Promise<InvocationModel>;
}

export type HookData = Record<string, unknown>;

export interface PreInvocationContext {
  readonly hookData: HookData;
  readonly appHookData: HookData;
  readonly invocationContext: unknown;
  inputs: unknown[];
  functionCallback: FunctionCallback;
}

export interface PostInvocationContext {
  readonly hookData: HookData;
  readonly appHookData: HookData;
  readonly invocationContext: unknown;
  inputs: unknown[];
  result: unknown;
  error: unknown;
}

export type HookCallback = (context: never) => unknown;
