/**
 * The operators' console (docs/operations.md, "The console"): `GET /api/ops/console`, one
 * self-contained page (./console-page.ts), and the two reads it adds to the operations API,
 * `GET /api/ops/overview` and `GET /api/ops/orders/{orderId}`. Everything else the page does goes
 * through the functions that already exist (inspect, replay, review), each checking its own caller.
 * Reading takes the app role `Operations.Read` where App Service authentication is on, else the
 * function key (./actor.ts).
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import type { MessageOperations } from '../../services/operations/message-operations-port';
import type { DocumentContainer } from '../../services/ports';
import { overview } from '../../services/operations/overview';
import { inspectOrder } from '../../services/operations/order-view';
import { durableClientInput } from '../../adapters/azure/durable-client';
import { orderTraceId } from '../order-trace';
import type { HttpFunctionDefinition } from '../definition';
import { answered, responseOf } from './http-support';
import { CONSOLE_HTML, CONSOLE_SCRIPT_HASH } from './console-page';
import { authLevelFor, authorize, ROLE, type Platform } from './actor';

export interface ConsoleDeps {
  operations: MessageOperations;
  orders: DocumentContainer;
  now: () => number;
}

/** Every HTTP function binds the durable client, so that all of them have one shape. */
const DURABLE_CLIENT = [durableClientInput];

/**
 * The page runs its one inline script and nothing else, talks only to this app, and is framed by
 * nobody. No referrer: the page's own URL may carry `?code=<function key>`.
 */
const CONSOLE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': [
    "default-src 'none'",
    `script-src '${CONSOLE_SCRIPT_HASH}'`,
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

export function consoleHttp(
  deps: (context: InvocationContext) => ConsoleDeps,
  platform: Platform,
): HttpFunctionDefinition[] {
  /** A read: only a caller the platform vouches for as an operator gets past it. */
  const read = (
    name: string,
    route: string,
    handle: (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit>,
  ): HttpFunctionDefinition => ({
    name,
    route,
    methods: ['GET'],
    authLevel: authLevelFor(platform, ROLE.read),
    extraInputs: DURABLE_CLIENT,
    handler: async (request, context) => {
      const authorized = authorize(request, platform, ROLE.read);
      return authorized.ok ? handle(request, context) : authorized.response;
    },
  });
  return [
    read('opsConsole', 'ops/console', async () => ({
      status: 200,
      headers: CONSOLE_HEADERS,
      body: CONSOLE_HTML,
    })),
    read('opsOverview', 'ops/overview', (_request, context) =>
      answered(async () => ({ status: 200, jsonBody: await overview(deps(context)) })),
    ),
    read('opsInspectOrder', 'ops/orders/{orderId}', (request, context) =>
      answered(async () => {
        const outcome = await inspectOrder(
          { ...deps(context), traceIdOf: orderTraceId },
          request.params.orderId,
        );
        return outcome.kind === 'inspection'
          ? { status: 200, jsonBody: outcome.inspection }
          : responseOf(outcome);
      }),
    ),
  ];
}
