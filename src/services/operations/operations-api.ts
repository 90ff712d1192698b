/**
 * What the operations HTTP functions do, independent of HTTP. Status codes follow what the caller
 * may do next: 404 no such message, 400 malformed request (unknown queue, bad body), 409 replay
 * refused (the reason says what to fix), 503 the broker or store failed in a way that may clear.
 */
import { AppError } from '../../domain/errors';
import { detailOf, summaryOf } from './held-messages';
import { isOperableQueue, OPERABLE_QUEUES, type OperableQueue } from './ports';
import type { ApiResult } from '../fulfillment/orders-api';
import { inspect, replayDeadLettered, replayParked, type ReplayDeps, type ReplayResult } from './replay';

export type OperationsApiDeps = ReplayDeps;

const badRequest = (error: string): ApiResult => ({ status: 400, body: { error } });
const notFound = (error: string): ApiResult => ({ status: 404, body: { error } });

export function parseReplayBody(body: unknown): { ok: true; force: boolean } | { ok: false; error: string } {
  if (body === undefined) return { ok: true, force: false };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: 'body must be empty or a JSON object such as {"force": true}' };
  }
  const { force, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest);
  // A misspelt "force" must not quietly become a replay that was not meant to be forced, or the reverse.
  if (unknown.length > 0)
    return { ok: false, error: `unknown field ${unknown.join(', ')}; only "force" is taken` };
  if (force !== undefined && typeof force !== 'boolean') {
    return { ok: false, error: `force must be true or false, got ${JSON.stringify(force)}` };
  }
  return { ok: true, force: force === true };
}

function queueOf(name: string): { ok: true; queue: OperableQueue } | { ok: false; result: ApiResult } {
  if (isOperableQueue(name)) return { ok: true, queue: name };
  return {
    ok: false,
    result: badRequest(`unknown queue ${JSON.stringify(name)}; one of ${OPERABLE_QUEUES.join(', ')}`),
  };
}

function replayResponse(result: ReplayResult): ApiResult {
  if (result.replayed) return { status: 200, body: { ...result } };
  const status = result.refusal === 'not-found' ? 404 : 409;
  return {
    status,
    body: { error: result.reason, refusal: result.refusal, prediction: result.prediction },
  };
}

/** Failures the app classifies become answers; anything else is a bug and stays a 500 from the host. */
async function guarded(operation: () => Promise<ApiResult>): Promise<ApiResult> {
  try {
    return await operation();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return {
      status: error.kind === 'transient' ? 503 : 500,
      body: { error: error.message, code: error.code },
    };
  }
}

export function listParked(deps: OperationsApiDeps): Promise<ApiResult> {
  return guarded(async () => {
    const listing = await deps.operations.listParked();
    return { status: 200, body: { messages: listing.messages.map(summaryOf), truncated: listing.truncated } };
  });
}

export function showParked(deps: OperationsApiDeps, messageId: string): Promise<ApiResult> {
  return guarded(async () => {
    const message = await deps.operations.findParked(messageId);
    if (message === undefined) return notFound(`no parked message ${messageId}`);
    const { replay } = await inspect(deps, message);
    return { status: 200, body: { ...detailOf(message), replay } };
  });
}

export function replayParkedMessage(
  deps: OperationsApiDeps,
  messageId: string,
  body: unknown,
): Promise<ApiResult> {
  const request = parseReplayBody(body);
  if (!request.ok) return Promise.resolve(badRequest(request.error));
  return guarded(async () => replayResponse(await replayParked(deps, messageId, { force: request.force })));
}

export function listDeadLettered(deps: OperationsApiDeps, queueName: string): Promise<ApiResult> {
  const queue = queueOf(queueName);
  if (!queue.ok) return Promise.resolve(queue.result);
  return guarded(async () => {
    const listing = await deps.operations.listDeadLettered(queue.queue);
    return { status: 200, body: { messages: listing.messages.map(summaryOf), truncated: listing.truncated } };
  });
}

export function showDeadLettered(
  deps: OperationsApiDeps,
  queueName: string,
  messageId: string,
): Promise<ApiResult> {
  const queue = queueOf(queueName);
  if (!queue.ok) return Promise.resolve(queue.result);
  return guarded(async () => {
    const message = await deps.operations.findDeadLettered(queue.queue, messageId);
    if (message === undefined) return notFound(`no dead-lettered message ${messageId} in ${queue.queue}`);
    const { replay } = await inspect(deps, message);
    return { status: 200, body: { ...detailOf(message), replay } };
  });
}

export function replayDeadLetteredMessage(
  deps: OperationsApiDeps,
  queueName: string,
  messageId: string,
  body: unknown,
): Promise<ApiResult> {
  const queue = queueOf(queueName);
  if (!queue.ok) return Promise.resolve(queue.result);
  const request = parseReplayBody(body);
  if (!request.ok) return Promise.resolve(badRequest(request.error));
  return guarded(async () =>
    replayResponse(await replayDeadLettered(deps, queue.queue, messageId, { force: request.force })),
  );
}

export function sessionBacklog(deps: OperationsApiDeps, queueName: string): Promise<ApiResult> {
  const queue = queueOf(queueName);
  if (!queue.ok) return Promise.resolve(queue.result);
  return guarded(async () => ({ status: 200, body: { ...(await deps.operations.backlog(queue.queue)) } }));
}
