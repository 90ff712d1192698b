/**
 * The embedded app's HTTP functions on 127.0.0.1, for `npm start -- --serve` and the tests that drive
 * it over the wire: a thin bridge from Node's `http` to the embedded Functions host
 * (`EmbeddedApp.http`), which routes `/api/<route>` and percent-decodes route parameters as the host
 * does (./host/http-function.ts). No endpoint is implemented here.
 *
 * Keys are not checked, as `func start` does not check them (Microsoft Learn,
 * functions-bindings-http-webhook-trigger, "Authorization level": "when running locally,
 * authorization is disabled regardless of the specified authorization level").
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmbeddedHttpRequest, EmbeddedHttpResponse } from './host/http-function';

/** The host's route prefix (host.json `extensions.http.routePrefix` default). */
const ROUTE_PREFIX = '/api/';

/** Where a bare `/` leads: the operators' console. */
export const CONSOLE_PATH = '/api/ops/console';

/**
 * The most of a request body the bridge reads. The functions take far less (src/functions/http/
 * http-support.ts `MAX_REQUEST_BODY_BYTES`) and answer a larger one themselves; this bound only keeps
 * a runaway client from filling memory before any function sees the request.
 */
export const MAX_BRIDGED_BODY_BYTES = 1024 * 1024;

export interface ServeOptions {
  /** 0 or absent: a free port the system picks. */
  port?: number;
}

export interface Served {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  url: string;
  /**
   * Stops accepting, ends idle keep-alive connections, and resolves once the server is closed; a
   * second call waits for the same close.
   */
  close(): Promise<void>;
}

export interface HttpApp {
  http(request: EmbeddedHttpRequest): Promise<EmbeddedHttpResponse>;
}

class BodyTooLarge extends Error {}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BRIDGED_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Node joins repeated headers itself (`request.headers`); `set-cookie` alone stays an array. */
function headersOf(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    Object.defineProperty(headers, name, {
      value: Array.isArray(value) ? value.join(', ') : value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return headers;
}

function answer(response: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error: message });
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

async function bridge(app: HttpApp, request: IncomingMessage, response: ServerResponse): Promise<void> {
  // The request target as written: the embedded host decodes it as Kestrel does, once.
  const target = request.url ?? '/';
  const method = request.method ?? 'GET';
  if (target === '/' && (method === 'GET' || method === 'HEAD')) {
    response.writeHead(302, { location: CONSOLE_PATH });
    response.end();
    return;
  }
  if (!target.toLowerCase().startsWith(ROUTE_PREFIX)) {
    answer(response, 404, `no function here: every route is under ${ROUTE_PREFIX}`);
    return;
  }
  let body: string;
  try {
    body = await readBody(request);
  } catch (error) {
    if (error instanceof BodyTooLarge) {
      answer(response, 413, `body is over ${MAX_BRIDGED_BODY_BYTES} bytes`);
      request.resume();
      return;
    }
    throw error;
  }
  const result = await app.http({
    method,
    path: target.slice(ROUTE_PREFIX.length),
    headers: headersOf(request),
    ...(body === '' ? {} : { body }),
  });
  const bytes = Buffer.from(result.body, 'utf8');
  response.writeHead(result.status, { ...result.headers, 'content-length': bytes.length });
  response.end(method === 'HEAD' ? undefined : bytes);
}

/** Serves `app`'s HTTP functions on 127.0.0.1 until `close`. */
export function serveApp(app: HttpApp, options: ServeOptions = {}): Promise<Served> {
  const server = createServer((request, response) => {
    bridge(app, request, response).catch((error: unknown) => {
      // A function that throws is a 500 from the host too; the message helps the operator locally.
      if (!response.headersSent)
        answer(response, 500, error instanceof Error ? error.message : String(error));
      else response.destroy();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      let closing: Promise<void> | undefined;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          (closing ??= new Promise<void>((closed, failed) => {
            server.close((error) => (error === undefined ? closed() : failed(error)));
            server.closeIdleConnections();
          })),
      });
    });
  });
}
