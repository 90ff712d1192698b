/**
 * The operator's HTTP functions under `/api/ops/`: parked and dead-lettered messages, their replay,
 * and each queue's session backlog. A function key guards the reads; the replays, which move
 * messages between queues, take the admin key, and their trace names who called (./actor.ts).
 * A messageId with `#` or `/` in it (a ledger entry parked alone is `<batchId>#<index>`) must be
 * percent-encoded in the URL.
 */
import type { HttpRequest, InvocationContext } from '@azure/functions';
import {
  listDeadLettered,
  listParked,
  replayDeadLetteredMessage,
  replayParkedMessage,
  sessionBacklog,
  showDeadLettered,
  showParked,
  type OperationsApiDeps,
  type ReplayOutcome,
} from '../../services/operations/operations-api';
import { durableClientInput } from '../../adapters/azure/durable-client';
import type { HttpFunctionDefinition } from '../definition';
import { jsonBody, responseOf } from './http-support';
import { actorOf } from './actor';

/** Every HTTP function binds the durable client, so that all of them have one shape. */
const DURABLE_CLIENT = [durableClientInput];

/** Every replay is logged: the log is the record of who moved what, and when. */
function logReplay(context: InvocationContext, request: HttpRequest, outcome: ReplayOutcome): void {
  const response = responseOf(outcome);
  context.log('replay requested', {
    by: actorOf(request),
    queue: request.params.queue ?? 'parked',
    messageId: request.params.messageId,
    status: response.status,
    outcome:
      outcome.kind !== 'replay'
        ? outcome.error
        : outcome.result.replayed
          ? 'replayed'
          : outcome.result.refusal,
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
      handler: async (_request, context) => responseOf(await listParked(deps(context))),
    },
    {
      name: 'opsShowParked',
      route: 'ops/parked/{messageId}',
      methods: ['GET'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) =>
        responseOf(await showParked(deps(context), request.params.messageId)),
    },
    {
      name: 'opsReplayParked',
      route: 'ops/parked/{messageId}/replay',
      methods: ['POST'],
      authLevel: 'admin',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => {
        const body = await jsonBody(request);
        if (!body.ok) return body.response;
        const outcome = await replayParkedMessage(deps(context), request.params.messageId, body.value);
        logReplay(context, request, outcome);
        return responseOf(outcome);
      },
    },
    {
      name: 'opsListDeadLettered',
      route: 'ops/deadletter/{queue}',
      methods: ['GET'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) =>
        responseOf(await listDeadLettered(deps(context), request.params.queue)),
    },
    {
      name: 'opsShowDeadLettered',
      route: 'ops/deadletter/{queue}/{messageId}',
      methods: ['GET'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) =>
        responseOf(await showDeadLettered(deps(context), request.params.queue, request.params.messageId)),
    },
    {
      name: 'opsReplayDeadLettered',
      route: 'ops/deadletter/{queue}/{messageId}/replay',
      methods: ['POST'],
      authLevel: 'admin',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => {
        const body = await jsonBody(request);
        if (!body.ok) return body.response;
        const outcome = await replayDeadLetteredMessage(
          deps(context),
          request.params.queue,
          request.params.messageId,
          body.value,
        );
        logReplay(context, request, outcome);
        return responseOf(outcome);
      },
    },
    {
      name: 'opsSessions',
      route: 'ops/sessions/{queue}',
      methods: ['GET'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) =>
        responseOf(await sessionBacklog(deps(context), request.params.queue)),
    },
  ];
}
