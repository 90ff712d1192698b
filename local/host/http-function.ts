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

/** `%XX` at `at`, unless it is not two hex digits or is `%2F`, which Kestrel leaves as written. */
function escapedByteAt(bytes: Uint8Array, at: number): { value: number; next: number } | undefined {
  const hex = (index: number): number => {
    const digit = index < bytes.length ? String.fromCharCode(bytes[index]) : '';
    return /^[0-9A-Fa-f]$/.test(digit) ? parseInt(digit, 16) : -1;
  };
  if (bytes[at] !== 0x25) return undefined;
  const high = hex(at + 1);
  const low = hex(at + 2);
  if (high < 0 || low < 0 || (high === 2 && low === 15)) return undefined;
  return { value: (high << 4) + low, next: at + 3 };
}

/**
 * One percent-encoded character at `at` (a `%`), as Kestrel's `UrlDecoder.DecodeCore` reads it:
 * its UTF-8 bytes when the escapes form a valid sequence, else how far the escapes that were read
 * reach (they stay as written). `null-character`: `%00`, which Kestrel refuses.
 */
function decodeEscapes(
  bytes: Uint8Array,
  at: number,
): { ok: true; bytes: number[]; next: number } | { ok: false; next: number } | 'null-character' {
  const first = escapedByteAt(bytes, at);
  if (first === undefined) return { ok: false, next: at + 1 };
  if (first.value === 0) return 'null-character';
  if (first.value <= 0x7f) return { ok: true, bytes: [first.value], next: first.next };
  const lead = first.value;
  const [count, min, leadBits] =
    (lead & 0xe0) === 0xc0
      ? [2, 0x80, lead & 0x1f]
      : (lead & 0xf0) === 0xe0
        ? [3, 0x800, lead & 0x0f]
        : (lead & 0xf8) === 0xf0
          ? [4, 0x10000, lead & 0x07]
          : [0, 0, 0];
  if (count === 0) return { ok: false, next: first.next };
  const out = [lead];
  let bits = leadBits;
  let next = first.next;
  for (let remaining = count - 1; remaining > 0;) {
    const following = escapedByteAt(bytes, next);
    if (following === undefined || (following.value & 0xc0) !== 0x80) return { ok: false, next };
    bits = (bits << 6) | (following.value & 0x3f);
    remaining--;
    // A UTF-16 surrogate (U+D800-U+DFFF), or past U+10FFFF: not UTF-8.
    if (remaining === 1 && bits >= 0x360 && bits <= 0x37f) return { ok: false, next };
    if (remaining === 2 && bits >= 0x110) return { ok: false, next };
    next = following.next;
    out.push(following.value);
  }
  return bits < min ? { ok: false, next } : { ok: true, bytes: out, next };
}

/** RFC 3986 remove_dot_segments on a decoded path, as Kestrel's `PathNormalizer.RemoveDotSegments`. */
function withoutDotSegments(path: string): string {
  const kept: string[] = [];
  const segments = path.split('/');
  for (const [index, segment] of segments.entries()) {
    const last = index === segments.length - 1;
    if (segment === '.' || segment === '..') {
      if (segment === '..' && kept.length > 1) kept.pop();
      if (last) kept.push('');
      continue;
    }
    kept.push(segment);
  }
  return kept.join('/');
}

/**
 * The path of a request target as Kestrel gives it to the Functions host (and to the Durable
 * extension's own listener): aspnetcore `src/Shared/UrlDecoder/UrlDecoder.cs` (`DecodeInPlace`) and
 * the path normalizer. Each `%XX` run that forms UTF-8 is decoded, except `%2F`, which stays `%2F` so
 * that a decoded `/` never splits a segment; a `%` that is not such a run stays as it is; `%00`
 * refuses the request ("The path contains null characters": 400); then `.` and `..` segments go.
 * The host routes this path, so a route parameter is percent-decoded once.
 */
export function kestrelRequestPath(
  target: string,
): { ok: true; path: string } | { ok: false; error: string } {
  const bytes = Buffer.from(target, 'utf8');
  const decoded: number[] = [];
  for (let at = 0; at < bytes.length;) {
    if (bytes[at] !== 0x25) {
      decoded.push(bytes[at]);
      at += 1;
      continue;
    }
    const escapes = decodeEscapes(bytes, at);
    if (escapes === 'null-character') return { ok: false, error: 'The path contains null characters.' };
    if (escapes.ok) decoded.push(...escapes.bytes);
    else decoded.push(...bytes.subarray(at, escapes.next));
    at = escapes.next;
  }
  let path: string;
  try {
    path = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(decoded));
  } catch {
    return { ok: false, error: 'The path is not UTF-8.' };
  }
  return { ok: true, path: withoutDotSegments(path) };
}

/**
 * Matches `orders/{orderId}/cancel`-style templates segment by segment against a path as Kestrel
 * decoded it (`kestrelRequestPath`): parameters take their segment as it stands. `{name?}` may be
 * absent.
 */
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
      params.set(parameter[1], value);
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
  // Kestrel refuses such a request before the host sees it: no function runs.
  if (!kestrelRequestPath(pathOf(request)).ok) return { status: 400, headers: {}, body: '' };
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

/** The request's path as the host receives it, `/api/...`, without its query string. */
function pathOf(request: EmbeddedHttpRequest): string {
  return `/${ROUTE_PREFIX}/${request.path.split('?')[0].replace(/^\//, '')}`;
}

/**
 * The function a request goes to: its route matches the path as Kestrel decoded it and it takes the
 * method. A path Kestrel refuses is matched as written, and `invokeHttp` answers it 400 as Kestrel
 * does; one that matches no route is 404 here (on Azure Kestrel answers 400 before any route).
 */
export function routeRequest(
  functions: readonly HttpFunction[],
  request: EmbeddedHttpRequest,
): { fn: HttpFunction; params: Map<string, string> } | undefined {
  const kestrel = kestrelRequestPath(pathOf(request));
  const under = `/${ROUTE_PREFIX}/`;
  const full = kestrel.ok ? kestrel.path : pathOf(request);
  // Dot segments may climb out of the route prefix: then no function's route matches.
  if (!full.startsWith(under)) return undefined;
  const path = full.slice(under.length);
  for (const fn of functions) {
    if (!fn.methods.includes(request.method.toUpperCase())) continue;
    const params = matchRoute(fn.route, path);
    if (params) return { fn, params };
  }
  return undefined;
}
