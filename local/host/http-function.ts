/**
 * HTTP functions as the embedded host runs them: route, methods and auth level read from the
 * binding metadata `app.http` registered, the request converted to the host's RPC HTTP payload
 * (azure-functions-host `src/WebJobs.Script.Grpc/MessageExtensions/GrpcMessageConversionExtensions.cs`,
 * `ToRpcHttp`, with the capabilities the Node worker declares in azure-functions-nodejs-worker
 * `src/eventHandlers/getWorkerCapabilities.ts`: `UseNullableValueDictionaryForHttp` (headers, query
 * and route params as nullable strings, header names lower-cased), `RpcHttpBodyOnly` with
 * `RawHttpBodyBytes` (the body as bytes, only when there is one)), invoked through the worker's path,
 * and the response read back from the `$return` binding (`toRpcHttp`).
 *
 * The host's route prefix is `api` (host.json `extensions.http.routePrefix` default). Keys are not
 * checked: "when running locally, authorization is disabled regardless of the specified
 * authorization level" (Microsoft Learn, functions-bindings-http-webhook-trigger, Authorization level).
 */
import { randomUUID } from 'node:crypto';
import { bindExtraInputs, stringOption, triggerOf, withTrigger, type InputBinder } from '../worker/bindings';
import type { RpcHttpData } from '../worker/core-types';
import type { RegisteredFunction } from '../worker/core';
import { invokeThroughWorker, type WorkerLog } from '../worker/invoke';

export const HTTP_TRIGGER = 'httpTrigger';
const ROUTE_PREFIX = 'api';
const LOCAL_ORIGIN = 'http://localhost:7071';

export interface HttpFunction {
  readonly registered: RegisteredFunction;
  readonly name: string;
  readonly route: string;
  readonly methods: readonly string[];
  readonly authLevel: string;
  readonly triggerName: string;
}

export interface EmbeddedHttpRequest {
  method: string;
  /** Below the route prefix, e.g. `orders/O-1/cancel`, with an optional query string. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface EmbeddedHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function httpFunctionsOf(functions: readonly RegisteredFunction[]): HttpFunction[] {
  return withTrigger(functions, HTTP_TRIGGER).map((registered) => {
    const { name, binding } = triggerOf(registered);
    const methods = Array.isArray(binding.methods)
      ? binding.methods.map((method) => String(method).toUpperCase())
      : [];
    return {
      registered,
      name: registered.metadata.name,
      route: stringOption(registered, binding, 'route'),
      methods,
      authLevel: stringOption(registered, binding, 'authLevel'),
      triggerName: name,
    };
  });
}

/** Matches `orders/{orderId}/cancel`-style templates segment by segment; `{name?}` may be absent. */
export function matchRoute(template: string, path: string): Map<string, string> | undefined {
  const wanted = template.split('/').filter((segment) => segment !== '');
  const given = path.split('/').filter((segment) => segment !== '');
  const params = new Map<string, string>();
  for (let index = 0; index < Math.max(wanted.length, given.length); index++) {
    const pattern = wanted[index];
    const value = given[index];
    if (pattern === undefined) return undefined;
    const parameter = /^\{([^}:?]+)(?::[^}?]+)?(\?)?\}$/.exec(pattern);
    if (parameter) {
      if (value === undefined) {
        if (parameter[2] === '?') continue;
        return undefined;
      }
      params.set(parameter[1], decodeURIComponent(value));
      continue;
    }
    if (value === undefined || pattern.toLowerCase() !== value.toLowerCase()) return undefined;
  }
  return params;
}

function nullable(entries: Iterable<[string, string]>): Record<string, { value: string }> {
  const result: Record<string, { value: string }> = {};
  for (const [key, value] of entries) result[key] = { value };
  return result;
}

export function rpcHttpRequest(request: EmbeddedHttpRequest, params: Map<string, string>): RpcHttpData {
  const url = new URL(`${LOCAL_ORIGIN}/${ROUTE_PREFIX}/${request.path.replace(/^\//, '')}`);
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries(request.headers ?? {})) headers.set(name.toLowerCase(), value);
  const body =
    request.body === undefined || request.body === '' ? undefined : Buffer.from(request.body, 'utf8');
  if (body) headers.set('content-length', String(body.length));
  headers.set('host', url.host);
  const http: RpcHttpData = {
    url: url.href,
    method: request.method.toUpperCase(),
    nullableHeaders: nullable(headers),
    nullableQuery: nullable(url.searchParams),
    nullableParams: nullable(params),
  };
  if (body) http.body = { bytes: body };
  return http;
}

export async function invokeHttp(
  fn: HttpFunction,
  request: EmbeddedHttpRequest,
  params: Map<string, string>,
  binder: InputBinder | undefined,
  log: WorkerLog,
): Promise<EmbeddedHttpResponse> {
  const extraInputs = await bindExtraInputs(fn.registered, binder);
  const { response } = await invokeThroughWorker(
    fn.registered,
    {
      invocationId: randomUUID(),
      functionId: fn.registered.metadata.functionId ?? fn.name,
      inputData: [{ name: fn.triggerName, data: { http: rpcHttpRequest(request, params) } }, ...extraInputs],
      triggerMetadata: {},
      traceContext: { traceParent: '', traceState: '', attributes: {} },
    },
    log,
  );
  const http = response.returnValue?.http;
  if (!http) return { status: 204, headers: {}, body: '' };
  const bytes = http.body?.bytes;
  return {
    status: Number(http.statusCode ?? 200),
    headers: { ...(http.headers ?? {}) },
    body: bytes ? Buffer.from(bytes).toString('utf8') : (http.body?.string ?? ''),
  };
}

/** The function a request goes to: its route matches and it takes the method. */
export function routeRequest(
  functions: readonly HttpFunction[],
  request: EmbeddedHttpRequest,
): { fn: HttpFunction; params: Map<string, string> } | undefined {
  const path = request.path.split('?')[0];
  for (const fn of functions) {
    if (!fn.methods.includes(request.method.toUpperCase())) continue;
    const params = matchRoute(fn.route, path);
    if (params) return { fn, params };
  }
  return undefined;
}
