/**
 * The operator's HTTP functions under `/api/ops/`: parked and dead-lettered messages, their replay one
 * by one, in bulk and by order, their discard into the archive, each queue's session backlog, and the
 * archive and the audit. Reading needs the app role `Operations.Read`, changing anything
 * `Operations.Write`, or the function key and the admin key where no identity provider is configured
 * (./actor.ts). Every change writes an audit record naming who, as the platform vouched for them.
 * A messageId in a path is percent-encoded; one that holds a `/` travels in the query instead
 * (`ops/parked-message?messageId=...`, `ops/deadletter-message/{queue}?messageId=...`), since a path
 * cannot carry it unaltered (messageIdOf).
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
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
  type ShowOutcome,
} from '../../services/operations/operations-api';
import {
  bulkReplay,
  discard,
  orderedReplay,
  parseBulkReplay,
  parseDiscard,
  parseOrderReplay,
  type RecoveryDeps,
  type RecoveryReport,
} from '../../services/operations/recovery';
import { MAX_AUDIT_DAYS, type AuditEntry } from '../../services/operations/operations-journal';
import { durableClientInput } from '../../adapters/azure/durable-client';
import type { HttpFunctionDefinition } from '../definition';
import { answered, audited, jsonBody, responseOf } from './http-support';
import { authLevelFor, authorize, ROLE, type Caller, type Platform, type Role } from './actor';

/** Every HTTP function binds the durable client, so that all of them have one shape. */
const DURABLE_CLIENT = [durableClientInput];

export type OperationsHttpDeps = OperationsApiDeps & RecoveryDeps;

const DAY_MS = 86_400_000;

function replayOneEntry(
  request: HttpRequest,
  messageId: string,
  outcome: ReplayOutcome,
  status: number,
): AuditEntry {
  const detail =
    outcome.kind !== 'replay' ? outcome.error : outcome.result.replayed ? undefined : outcome.result.reason;
  return {
    action: 'replay-one',
    request: { heldIn: request.params.queue ?? 'parked', messageId },
    outcome: outcome.kind === 'replay' && outcome.result.replayed ? 'done' : 'refused',
    status,
    messages: [
      {
        messageId,
        orderId: null,
        action: outcome.kind === 'replay' && outcome.result.replayed ? 'replayed' : 'skipped',
        ...(detail === undefined ? {} : { detail }),
      },
    ],
  };
}

function reportEntry(action: string, request: Record<string, unknown>, report: RecoveryReport): AuditEntry {
  return {
    action,
    request,
    outcome: report.dryRun ? 'dry-run' : 'done',
    status: 200,
    messages: report.messages.map(({ messageId, orderId, action: done, detail }) => ({
      messageId,
      orderId,
      action: done,
      ...(detail === undefined ? {} : { detail }),
    })),
  };
}

/**
 * The messageId a request names: in the query (`?messageId=`, decoded whole), else in the route's
 * path. The Functions host decodes a path as ASP.NET Core does, all but an encoded `/`: "The path is fully
 * decoded by the server except for '%2F'" (Microsoft Learn, HttpRequest.Path), so a segment holding `%2F` could be
 * `L/1` or the text `L%2F1`: it is refused, naming the query form, rather than read as either.
 */
function messageIdOf(
  request: HttpRequest,
  queryForm: string,
): { ok: true; messageId: string } | { ok: false; response: HttpResponseInit } {
  const queried = request.query.get('messageId');
  const messageId = queried ?? request.params.messageId;
  if (messageId === undefined || messageId === '') {
    return { ok: false, response: { status: 400, jsonBody: { error: `give the messageId: ${queryForm}` } } };
  }
  if (queried === null && /%2f/i.test(messageId)) {
    return {
      ok: false,
      response: {
        status: 400,
        jsonBody: {
          error: `a messageId holding "/" (or the text "%2F") cannot travel in a URL path unaltered; give it in the query: ${queryForm}`,
        },
      },
    };
  }
  return { ok: true, messageId };
}

/** An ISO time from the query, or the fallback; an error names the parameter. */
function queryTime(request: HttpRequest, name: string, fallback: number): number | string {
  const value = request.query.get(name);
  if (value === null || value === '') return fallback;
  const ms = Date.parse(value);
  return Number.isNaN(ms)
    ? `${name} must be an ISO 8601 time such as 2026-01-31T09:00:00Z, got ${JSON.stringify(value)}`
    : ms;
}

export function operationsHttp(
  deps: (context: InvocationContext) => OperationsHttpDeps,
  platform: Platform,
): HttpFunctionDefinition[] {
  /** A route that lets in only a caller the platform vouches for in `role`. */
  const route = (
    name: string,
    path: string,
    method: 'GET' | 'POST',
    role: Role,
    handle: (request: HttpRequest, context: InvocationContext, caller: Caller) => Promise<HttpResponseInit>,
  ): HttpFunctionDefinition => ({
    name,
    route: path,
    methods: [method],
    authLevel: authLevelFor(platform, role),
    extraInputs: DURABLE_CLIENT,
    handler: async (request, context) => {
      const authorized = authorize(request, platform, role);
      if (!authorized.ok) return authorized.response;
      return handle(request, context, authorized.caller);
    },
  });

  const replayOne =
    (
      queryForm: string,
      replay: (
        d: OperationsHttpDeps,
        request: HttpRequest,
        messageId: string,
        body: unknown,
      ) => Promise<ReplayOutcome>,
    ) =>
    async (request: HttpRequest, context: InvocationContext, caller: Caller): Promise<HttpResponseInit> => {
      const named = messageIdOf(request, queryForm);
      if (!named.ok) return named.response;
      const body = await jsonBody(request);
      if (!body.ok) return body.response;
      const d = deps(context);
      const outcome = await replay(d, request, named.messageId, body.value);
      const response = responseOf(outcome);
      // A malformed request did nothing: there is nothing to audit.
      if (outcome.kind === 'malformed') return response;
      return audited(
        d.journal,
        d.now,
        caller,
        replayOneEntry(request, named.messageId, outcome, response.status ?? 200),
        response,
        context,
      );
    };

  const showOne =
    (
      queryForm: string,
      show: (d: OperationsHttpDeps, request: HttpRequest, messageId: string) => Promise<ShowOutcome>,
    ) =>
    async (request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> => {
      const named = messageIdOf(request, queryForm);
      if (!named.ok) return named.response;
      return responseOf(await show(deps(context), request, named.messageId));
    };

  const PARKED_QUERY = 'ops/parked-message?messageId=<percent-encoded>';
  const DEAD_LETTER_QUERY = 'ops/deadletter-message/{queue}?messageId=<percent-encoded>';
  const showParkedOne = showOne(PARKED_QUERY, (d, _request, messageId) => showParked(d, messageId));
  const replayParkedOne = replayOne(PARKED_QUERY, (d, _request, messageId, body) =>
    replayParkedMessage(d, messageId, body),
  );
  const showDeadLetteredOne = showOne(DEAD_LETTER_QUERY, (d, request, messageId) =>
    showDeadLettered(d, request.params.queue, messageId),
  );
  const replayDeadLetteredOne = replayOne(DEAD_LETTER_QUERY, (d, request, messageId, body) =>
    replayDeadLetteredMessage(d, request.params.queue, messageId, body),
  );

  return [
    route('opsListParked', 'ops/parked', 'GET', ROLE.read, async (_request, context) =>
      responseOf(await listParked(deps(context))),
    ),
    route('opsShowParked', 'ops/parked/{messageId}', 'GET', ROLE.read, showParkedOne),
    route('opsShowParkedByQuery', 'ops/parked-message', 'GET', ROLE.read, showParkedOne),
    route('opsReplayParked', 'ops/parked/{messageId}/replay', 'POST', ROLE.write, replayParkedOne),
    route('opsReplayParkedByQuery', 'ops/parked-message/replay', 'POST', ROLE.write, replayParkedOne),
    route('opsListDeadLettered', 'ops/deadletter/{queue}', 'GET', ROLE.read, async (request, context) =>
      responseOf(await listDeadLettered(deps(context), request.params.queue)),
    ),
    route('opsShowDeadLettered', 'ops/deadletter/{queue}/{messageId}', 'GET', ROLE.read, showDeadLetteredOne),
    route(
      'opsShowDeadLetteredByQuery',
      'ops/deadletter-message/{queue}',
      'GET',
      ROLE.read,
      showDeadLetteredOne,
    ),
    route(
      'opsReplayDeadLettered',
      'ops/deadletter/{queue}/{messageId}/replay',
      'POST',
      ROLE.write,
      replayDeadLetteredOne,
    ),
    route(
      'opsReplayDeadLetteredByQuery',
      'ops/deadletter-message/{queue}/replay',
      'POST',
      ROLE.write,
      replayDeadLetteredOne,
    ),
    route('opsSessions', 'ops/sessions/{queue}', 'GET', ROLE.read, async (request, context) =>
      responseOf(await sessionBacklog(deps(context), request.params.queue)),
    ),
    route('opsBulkReplay', 'ops/replay', 'POST', ROLE.write, async (request, context, caller) => {
      const body = await jsonBody(request);
      if (!body.ok) return body.response;
      const parsed = parseBulkReplay(body.value);
      if (!parsed.ok) return { status: 400, jsonBody: { error: parsed.error } };
      const d = deps(context);
      return answered(async () => {
        const report = await bulkReplay(d, parsed.request);
        const entry = reportEntry('replay', body.value as Record<string, unknown>, report);
        return audited(d.journal, d.now, caller, entry, { status: 200, jsonBody: report }, context);
      });
    }),
    route(
      'opsOrderReplay',
      'ops/orders/{orderId}/replay',
      'POST',
      ROLE.write,
      async (request, context, caller) => {
        const body = await jsonBody(request);
        if (!body.ok) return body.response;
        const parsed = parseOrderReplay(body.value);
        if (!parsed.ok) return { status: 400, jsonBody: { error: parsed.error } };
        const { orderId } = request.params;
        const d = deps(context);
        return answered(async () => {
          const report = await orderedReplay(d, orderId, parsed.request);
          const entry = reportEntry('ordered-replay', { orderId, dryRun: parsed.request.dryRun }, report);
          return audited(d.journal, d.now, caller, entry, { status: 200, jsonBody: report }, context);
        });
      },
    ),
    route('opsDiscard', 'ops/discard', 'POST', ROLE.write, async (request, context, caller) => {
      const body = await jsonBody(request);
      if (!body.ok) return body.response;
      const parsed = parseDiscard(body.value);
      if (!parsed.ok) return { status: 400, jsonBody: { error: parsed.error } };
      const d = deps(context);
      return answered(async () => {
        const report = await discard(d, parsed.request, caller);
        const entry = reportEntry('discard', body.value as Record<string, unknown>, report);
        return audited(d.journal, d.now, caller, entry, { status: 200, jsonBody: report }, context);
      });
    }),
    route('opsArchive', 'ops/archive', 'GET', ROLE.read, async (request, context) => {
      const orderId = request.query.get('orderId');
      const noOrder = request.query.get('noOrder') === 'true';
      if ((orderId === null || orderId === '') === !noOrder) {
        return {
          status: 400,
          jsonBody: {
            error:
              'give orderId (the order whose discarded messages to show) or noOrder=true (messages of no order), one of them',
          },
        };
      }
      return answered(async () => {
        const archived = await deps(context).journal.archived(noOrder ? null : (orderId as string));
        return { status: 200, jsonBody: { archived } };
      });
    }),
    route('opsAudit', 'ops/audit', 'GET', ROLE.read, async (request, context) => {
      const d = deps(context);
      const now = d.now();
      const since = queryTime(request, 'since', now - DAY_MS);
      if (typeof since === 'string') return { status: 400, jsonBody: { error: since } };
      const until = queryTime(request, 'until', now);
      if (typeof until === 'string') return { status: 400, jsonBody: { error: until } };
      if (since > until) return { status: 400, jsonBody: { error: 'since must not be after until' } };
      if (until - since > MAX_AUDIT_DAYS * DAY_MS) {
        return {
          status: 400,
          jsonBody: { error: `since and until may be at most ${MAX_AUDIT_DAYS} days apart` },
        };
      }
      return answered(async () => {
        return { status: 200, jsonBody: { audit: await d.journal.audited(since, until) } };
      });
    }),
  ];
}
