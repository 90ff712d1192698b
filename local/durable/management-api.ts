/**
 * The Durable extension's HTTP management API, served on 127.0.0.1 for the real `DurableClient` of
 * durable-functions (`df.getClient`), which calls it at `rpcBaseUrl` (durable-functions
 * `lib/src/durableClient/DurableClient.js`: `startNew` → POST `orchestrators/{name}/{id}`,
 * `getStatus` → GET `instances/{id}`, `raiseEvent` → POST `instances/{id}/raiseEvent/{event}`,
 * `purgeInstanceHistory(By)` → DELETE `instances/...`).
 *
 * Routes, status codes and bodies follow azure-functions-durable-extension
 * `src/WebJobs.Extensions.DurableTask/HttpApiHandler.cs`:
 * - start: 202 with the management payload and a Location header (`CreateCheckStatusResponse`);
 *   400 for an unknown orchestrator (ArgumentException), 500 for an instance that is still running
 *   (InvalidOperationException); a finished instance is started afresh (the default overridable
 *   states are the non-running ones).
 * - status (`HandleGetStatusRequestAsync`): 200 for Completed, Failed, Terminated; 202 (with
 *   Location and Retry-After: 5) for Pending, Running; 404 with no body for an unknown instance.
 *   Times are written `ToString("s") + "Z"`: whole seconds.
 * - raise event (`HandleRaiseEventRequestAsync`): 404 unknown, 410 finished, 400 unless the body is
 *   application/json, else 202.
 * - purge (`HandleDeleteHistoryByIdRequestAsync`, `...WithFiltersRequestAsync`): 200 with
 *   `{ instancesDeleted }`, 404 when nothing was deleted, 400 without `createdTimeFrom`.
 * - instance ids in the path: the listener is Kestrel (`LocalHttpListener.cs`), which decodes the
 *   path once (`kestrelRequestPath`: `%2F` kept, `%00` refused with 400), and the handler decodes
 *   that again, `WebUtility.UrlDecode(request.RequestUri.AbsolutePath)` (`+` is a space, a `%` that
 *   is no escape stays), before it trims `/` and matches its route templates. An id reaches the
 *   extension unchanged only when none of this touches it (docs/saga.md, "Instance ids").
 * - start (`DurableClient.StartNewAsync`): an instance id that starts with `@`, holds `/ \ ? #` or
 *   a control character (`char.IsControl`), or is over 256 characters is an ArgumentException: 400.
 * The extension listens on 17071 or a random port in 30000-31000 (`LocalHttpListener.cs`); several
 * embedded apps share one machine here, so this takes any free port. The same handler also answers
 * under `/runtime/webhooks/durabletask/`, the public base the binding's URLs point at.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '../../src/domain/errors';
import { kestrelRequestPath } from '../host/http-function';
import type { OrchestrationRuntimeStatus, OrchestrationStatus } from '../../src/services/ports';

export type StartResult = 'started' | 'unknown-orchestrator' | 'running' | { invalidInstanceId: string };

/** `DurableClient.MaxInstanceIdLength`. */
export const MAX_INSTANCE_ID_LENGTH = 256;

/**
 * Why the extension's `StartNewAsync` refuses an instance id (an ArgumentException), or null:
 * azure-functions-durable-extension `ContextImplementations/DurableClient.cs`.
 */
export function instanceIdProblem(instanceId: string): string | null {
  if (instanceId.startsWith('@')) return 'Orchestration instance ids must not start with @.';
  const invalid = [...instanceId].some((char) => {
    const code = char.charCodeAt(0);
    // char.IsControl: U+0000-U+001F and U+007F-U+009F.
    return '/\\?#'.includes(char) || code <= 0x1f || (code >= 0x7f && code <= 0x9f);
  });
  if (invalid) return 'Orchestration instance ids must not contain /, \\, #, ?, or control characters.';
  if (instanceId.length > MAX_INSTANCE_ID_LENGTH)
    return `Instance ID lengths must not exceed ${MAX_INSTANCE_ID_LENGTH} characters.`;
  return null;
}

export type RaiseResult = 'accepted' | 'gone' | 'not-found';

export interface PurgeFilter {
  createdTimeFrom: number;
  createdTimeTo: number | undefined;
  runtimeStatus: readonly OrchestrationRuntimeStatus[] | undefined;
}

/** What the API asks of the driver. */
export interface ManagedInstances {
  start(name: string, instanceId: string, input: unknown): StartResult;
  status(instanceId: string): OrchestrationStatus | undefined;
  raiseEvent(instanceId: string, eventName: string, data: unknown): RaiseResult;
  /** Deletes one instance and its history, in any state; false when there is none. */
  purge(instanceId: string): boolean;
  purgeWhere(filter: PurgeFilter): number;
}

export interface ManagementApi {
  /** Requests served so far. */
  requests(): number;
  /** The base the client calls, e.g. `http://127.0.0.1:40123/durabletask/`; listens on first use. */
  rpcBaseUrl(): Promise<string>;
  close(): Promise<void>;
}

const RPC_BASE = '/durabletask/';
const WEBHOOK_BASE = '/runtime/webhooks/durabletask/';

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** `request.CreateErrorResponse(status, message, exception)`: Web API's HttpError shape. */
function errorReply(status: number, message: string, exceptionType: string, exceptionMessage: string): Reply {
  return {
    status,
    body: { Message: message, ExceptionMessage: exceptionMessage, ExceptionType: exceptionType },
  };
}

function seconds(iso: string): string {
  return `${iso.slice(0, 19)}Z`;
}

/** `StatusResponsePayload` (`ConvertFrom`), without history: the client asks for none. */
function statusPayload(status: OrchestrationStatus): Record<string, unknown> {
  return {
    name: status.name,
    instanceId: status.instanceId,
    runtimeStatus: status.runtimeStatus,
    input: status.input ?? null,
    customStatus: status.customStatus ?? null,
    output: status.output ?? null,
    createdTime: seconds(status.createdTime),
    lastUpdatedTime: seconds(status.lastUpdatedTime),
  };
}

/** The `HttpManagementPayload` of one instance (`GetClientResponseLinks`). */
export function managementPayload(
  webhookBase: string,
  instanceId: string,
  taskHub: string,
): Record<string, string> {
  const prefix = `${webhookBase}/instances/${encodeURIComponent(instanceId)}`;
  const query = `taskHub=${encodeURIComponent(taskHub)}&connection=Storage`;
  return {
    id: instanceId,
    statusQueryGetUri: `${prefix}?${query}`,
    sendEventPostUri: `${prefix}/raiseEvent/{eventName}?${query}`,
    terminatePostUri: `${prefix}/terminate?reason={text}&${query}`,
    rewindPostUri: `${prefix}/rewind?reason={text}&${query}`,
    purgeHistoryDeleteUri: `${prefix}?${query}`,
    restartPostUri: `${prefix}/restart?${query}`,
    suspendPostUri: `${prefix}/suspend?reason={text}&${query}`,
    resumePostUri: `${prefix}/resume?reason={text}&${query}`,
  };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: errorMessage(error) };
  }
}

/**
 * `System.Net.WebUtility.UrlDecode`: `+` is a space and each `%XX` a byte, the bytes read as UTF-8
 * (U+FFFD for what is not); a `%` without two hex digits, and every other character, stay as they are.
 */
export function webUtilityUrlDecode(text: string): string {
  let out = '';
  let bytes: number[] = [];
  const flush = (): void => {
    if (bytes.length > 0) out += Buffer.from(bytes).toString('utf8');
    bytes = [];
  };
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    const escape = char === '%' ? /^[0-9A-Fa-f]{2}$/.exec(text.slice(at + 1, at + 3)) : null;
    if (escape !== null) {
      bytes.push(parseInt(escape[0], 16));
      at += 2;
    } else if (char === '+') bytes.push(0x20);
    else if (char.charCodeAt(0) < 0x80) bytes.push(char.charCodeAt(0));
    else {
      flush();
      out += char;
    }
  }
  flush();
  return out;
}

function timeParameter(query: URLSearchParams, name: string): number | undefined | 'invalid' {
  const value = query.get(name);
  if (value === null) return undefined;
  const time = Date.parse(value);
  return Number.isFinite(time) ? time : 'invalid';
}

const STATUSES: readonly OrchestrationRuntimeStatus[] = [
  'Pending',
  'Running',
  'Completed',
  'Failed',
  'Terminated',
  'ContinuedAsNew',
] as OrchestrationRuntimeStatus[];

export function createManagementApi(instances: ManagedInstances, taskHub: string): ManagementApi {
  let server: Server | undefined;
  let listening: Promise<string> | undefined;
  let served = 0;

  const route = (
    method: string,
    path: string,
    query: URLSearchParams,
    body: string,
    contentType: string,
    origin: string,
  ): Reply => {
    const webhookBase = `${origin}${WEBHOOK_BASE.slice(0, -1)}`;
    const segments = path.split('/').filter((segment) => segment !== '');
    const [controller, ...rest] = segments;
    if (controller === 'orchestrators' && (rest.length === 1 || rest.length === 2)) {
      if (method !== 'POST') return { status: 404 };
      const [name, instanceId = randomUUID().replace(/-/g, '')] = rest;
      const input = parseJson(body);
      if (!input.ok)
        return errorReply(400, 'Invalid JSON content', 'Newtonsoft.Json.JsonReaderException', input.error);
      const started = instances.start(name, instanceId, input.value);
      if (typeof started === 'object') {
        return errorReply(
          400,
          'One or more of the arguments submitted is incorrect',
          'System.ArgumentException',
          started.invalidInstanceId,
        );
      }
      if (started === 'unknown-orchestrator') {
        return errorReply(
          400,
          'One or more of the arguments submitted is incorrect',
          'System.ArgumentException',
          `The function '${name}' doesn't exist, is disabled, or is not an orchestrator function.`,
        );
      }
      if (started === 'running') {
        return errorReply(
          500,
          'Something went wrong while processing your request',
          'System.InvalidOperationException',
          `An Orchestration instance with the status Running already exists.`,
        );
      }
      const payload = managementPayload(webhookBase, instanceId, taskHub);
      return {
        status: 202,
        body: payload,
        headers: { Location: payload.statusQueryGetUri, 'Retry-After': '10' },
      };
    }
    if (controller !== 'instances') return { status: 404 };
    const [instanceId, operation, eventName] = rest;
    if (instanceId === undefined) {
      if (method !== 'DELETE') return { status: 404 };
      const from = timeParameter(query, 'createdTimeFrom');
      const to = timeParameter(query, 'createdTimeTo');
      if (from === undefined || from === 'invalid' || to === 'invalid') {
        return errorReply(
          400,
          'Please provide value for createdTimeFrom.',
          'System.ArgumentException',
          'createdTimeFrom',
        );
      }
      const statusList = query.get('runtimeStatus');
      const runtimeStatus =
        statusList === null
          ? undefined
          : statusList
              .split(',')
              .filter((status): status is OrchestrationRuntimeStatus =>
                (STATUSES as readonly string[]).includes(status),
              );
      const deleted = instances.purgeWhere({ createdTimeFrom: from, createdTimeTo: to, runtimeStatus });
      return deleted === 0 ? { status: 404 } : { status: 200, body: { instancesDeleted: deleted } };
    }
    if (operation === undefined) {
      if (method === 'GET') {
        const status = instances.status(instanceId);
        if (status === undefined) return { status: 404 };
        const running = status.runtimeStatus === 'Pending' || status.runtimeStatus === 'Running';
        return running
          ? {
              status: 202,
              body: statusPayload(status),
              headers: {
                Location: `${origin}${RPC_BASE}instances/${encodeURIComponent(instanceId)}`,
                'Retry-After': '5',
              },
            }
          : { status: 200, body: statusPayload(status) };
      }
      if (method === 'DELETE') {
        return instances.purge(instanceId) ? { status: 200, body: { instancesDeleted: 1 } } : { status: 404 };
      }
      return { status: 404 };
    }
    if (operation === 'raiseEvent' && eventName !== undefined && rest.length === 3 && method === 'POST') {
      const status = instances.status(instanceId);
      if (status === undefined) return { status: 404 };
      if (status.runtimeStatus !== 'Pending' && status.runtimeStatus !== 'Running') return { status: 410 };
      if (contentType.split(';')[0].trim().toLowerCase() !== 'application/json') {
        return errorReply(
          400,
          'Only application/json request content is supported',
          'System.Net.Http.HttpRequestException',
          '',
        );
      }
      const data = parseJson(body);
      if (!data.ok)
        return errorReply(400, 'Invalid JSON content', 'Newtonsoft.Json.JsonReaderException', data.error);
      const raised = instances.raiseEvent(instanceId, eventName, data.value);
      return { status: raised === 'accepted' ? 202 : raised === 'gone' ? 410 : 404 };
    }
    return { status: 404 };
  };

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    served += 1;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let reply: Reply;
      const origin = `http://${request.headers.host ?? '127.0.0.1'}`;
      try {
        // The request target as it came: the path is decoded as the extension does, not as a URL.
        const target = request.url ?? '/';
        const queryAt = target.indexOf('?');
        const kestrel = kestrelRequestPath(queryAt < 0 ? target : target.slice(0, queryAt));
        const query = new URLSearchParams(queryAt < 0 ? '' : target.slice(queryAt + 1));
        const pathname = kestrel.ok ? webUtilityUrlDecode(kestrel.path) : '';
        const base = pathname.startsWith(RPC_BASE)
          ? RPC_BASE
          : pathname.startsWith(WEBHOOK_BASE)
            ? WEBHOOK_BASE
            : undefined;
        reply = !kestrel.ok
          ? { status: 400 }
          : base === undefined
            ? { status: 404 }
            : route(
                request.method ?? 'GET',
                pathname.slice(base.length).replace(/^\/+|\/+$/g, ''),
                query,
                Buffer.concat(chunks).toString('utf8'),
                request.headers['content-type'] ?? '',
                origin,
              );
      } catch (error) {
        reply = errorReply(
          500,
          'Something went wrong while processing your request',
          'System.Exception',
          errorMessage(error),
        );
      }
      const text = reply.body === undefined ? '' : JSON.stringify(reply.body);
      response.writeHead(reply.status, {
        ...(text === '' ? {} : { 'Content-Type': 'application/json; charset=utf-8' }),
        'Content-Length': Buffer.byteLength(text),
        ...reply.headers,
      });
      response.end(text);
    });
  };

  return {
    requests: () => served,
    rpcBaseUrl() {
      listening ??= new Promise<string>((resolve, reject) => {
        const created = createServer(handle);
        server = created;
        created.once('error', reject);
        created.listen(0, '127.0.0.1', () => {
          const { port } = created.address() as AddressInfo;
          resolve(`http://127.0.0.1:${port}${RPC_BASE}`);
        });
      });
      return listening;
    },
    async close() {
      const running = server;
      server = undefined;
      listening = undefined;
      if (!running) return;
      await new Promise<void>((resolve) => {
        running.close(() => resolve());
        running.closeAllConnections();
      });
    },
  };
}
