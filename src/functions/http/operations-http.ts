/**
 * The operator's HTTP functions under `/api/ops/`: parked and dead-lettered messages, their replay,
 * and each queue's session backlog. Function keys guard them, as they move messages between queues.
 * A messageId with `#` or `/` in it (a ledger entry parked alone is `<batchId>#<index>`) must be
 * percent-encoded in the URL.
 */
import type { HttpRequest, InvocationContext } from '@azure/functions';
import type { ApiResult } from '../../services/fulfillment/orders-api';
import {
  listDeadLettered,
  listParked,
  replayDeadLetteredMessage,
  replayParkedMessage,
  sessionBacklog,
  showDeadLettered,
  showParked,
  type OperationsApiDeps,
} from '../../services/operations/operations-api';
import { durableClientInput } from '../../adapters/azure/durable-client';
import type { HttpFunctionDefinition } from '../definition';
import { jsonBody, respond } from './http-support';

/** Every HTTP function binds the durable client, so that all of them have one shape. */
const DURABLE_CLIENT = [durableClientInput];

/** Every replay is logged: the log is the record of who moved what, and when. */
function logReplay(context: InvocationContext, request: HttpRequest, result: ApiResult): void {
  context.log('replay requested', {
    queue: request.params.queue ?? 'parked',
    messageId: request.params.messageId,
    status: result.status,
    outcome: result.status === 200 ? 'replayed' : String(result.body.refusal ?? result.body.error),
  });
}

export function operationsHttp(
  deps: (context: InvocationContext) => OperationsApiDeps,
): HttpFunctionDefinition[] {
  return [
    {
      name: 'opsListParked',
      route: 'ops/parked',
      methods: ['GET'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (_request, context) => respond(await listParked(deps(context))),
    },
    {
      name: 'opsShowParked',
      route: 'ops/parked/{messageId}',
      methods: ['GET'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => respond(await showParked(deps(context), request.params.messageId)),
    },
    {
      name: 'opsReplayParked',
      route: 'ops/parked/{messageId}/replay',
      methods: ['POST'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => {
        const body = await jsonBody(request);
        if (!body.ok) return { status: 400, jsonBody: { error: 'body is not valid JSON' } };
        const result = await replayParkedMessage(deps(context), request.params.messageId, body.value);
        logReplay(context, request, result);
        return respond(result);
      },
    },
    {
      name: 'opsListDeadLettered',
      route: 'ops/deadletter/{queue}',
      methods: ['GET'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) =>
        respond(await listDeadLettered(deps(context), request.params.queue)),
    },
    {
      name: 'opsShowDeadLettered',
      route: 'ops/deadletter/{queue}/{messageId}',
      methods: ['GET'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) =>
        respond(await showDeadLettered(deps(context), request.params.queue, request.params.messageId)),
    },
    {
      name: 'opsReplayDeadLettered',
      route: 'ops/deadletter/{queue}/{messageId}/replay',
      methods: ['POST'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => {
        const body = await jsonBody(request);
        if (!body.ok) return { status: 400, jsonBody: { error: 'body is not valid JSON' } };
        const result = await replayDeadLetteredMessage(
          deps(context),
          request.params.queue,
          request.params.messageId,
          body.value,
        );
        logReplay(context, request, result);
        return respond(result);
      },
    },
    {
      name: 'opsSessions',
      route: 'ops/sessions/{queue}',
      methods: ['GET'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => respond(await sessionBacklog(deps(context), request.params.queue)),
    },
  ];
}
