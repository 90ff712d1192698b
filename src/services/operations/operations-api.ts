/**
 * What the operations HTTP functions do, independent of HTTP: list, inspect and replay parked and
 * dead-lettered messages, and read a queue's backlog. Each answers with an outcome; the HTTP
 * functions map outcomes to status codes (src/functions/http/http-support.ts).
 */
import { AppError } from '../../domain/errors';
import { detailOf, summaryOf } from './held-messages';
import {
  isOperableQueue,
  OPERABLE_QUEUES,
  type OperableQueue,
  type QueueBacklog,
} from './message-operations-port';
import { inspect, replayDeadLettered, replayParked, type ReplayDeps, type ReplayResult } from './replay';

export type OperationsApiDeps = ReplayDeps;

/** The request cannot be taken as it is (unknown queue, bad body); `error` names what. */
export interface Malformed {
  kind: 'malformed';
  error: string;
}

/** No such message. */
export interface NoSuchMessage {
  kind: 'no-such-message';
  error: string;
}

/** The broker or the store failed with a classified error: transient ones may clear. */
export interface Failed {
  kind: 'failed';
  transient: boolean;
  error: string;
  code: string;
}

export type ListOutcome =
  { kind: 'listed'; messages: Array<Record<string, unknown>>; truncated: boolean } | Malformed | Failed;

export type ShowOutcome =
  { kind: 'message'; message: Record<string, unknown> } | NoSuchMessage | Malformed | Failed;

export type ReplayOutcome = { kind: 'replay'; result: ReplayResult } | Malformed | Failed;

export type BacklogOutcome = { kind: 'backlog'; backlog: QueueBacklog } | Malformed | Failed;

export type OperationsOutcome = ListOutcome | ShowOutcome | ReplayOutcome | BacklogOutcome;

const malformed = (error: string): Malformed => ({ kind: 'malformed', error });

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

function queueOf(name: string): { ok: true; queue: OperableQueue } | { ok: false; outcome: Malformed } {
  if (isOperableQueue(name)) return { ok: true, queue: name };
  return {
    ok: false,
    outcome: malformed(`unknown queue ${JSON.stringify(name)}; one of ${OPERABLE_QUEUES.join(', ')}`),
  };
}

/** Failures the app classifies become outcomes; anything else is a bug and stays a 500 from the host. */
async function guarded<T>(operation: () => Promise<T>): Promise<T | Failed> {
  try {
    return await operation();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { kind: 'failed', transient: error.kind === 'transient', error: error.message, code: error.code };
  }
}

export function listParked(deps: OperationsApiDeps): Promise<ListOutcome> {
  return guarded(async () => {
    const listing = await deps.operations.listParked();
    return { kind: 'listed', messages: listing.messages.map(summaryOf), truncated: listing.truncated };
  });
}

export function showParked(deps: OperationsApiDeps, messageId: string): Promise<ShowOutcome> {
  return guarded(async (): Promise<ShowOutcome> => {
    const message = await deps.operations.findParked(messageId);
    if (message === undefined) return { kind: 'no-such-message', error: `no parked message ${messageId}` };
    const { replay } = await inspect(deps, message);
    return { kind: 'message', message: { ...detailOf(message), replay } };
  });
}

export function replayParkedMessage(
  deps: OperationsApiDeps,
  messageId: string,
  body: unknown,
): Promise<ReplayOutcome> {
  const request = parseReplayBody(body);
  if (!request.ok) return Promise.resolve(malformed(request.error));
  return guarded(async () => ({
    kind: 'replay',
    result: await replayParked(deps, messageId, { force: request.force }),
  }));
}

export function listDeadLettered(deps: OperationsApiDeps, queueName: string): Promise<ListOutcome> {
  const queue = queueOf(queueName);
  if (!queue.ok) return Promise.resolve(queue.outcome);
  return guarded(async () => {
    const listing = await deps.operations.listDeadLettered(queue.queue);
    return { kind: 'listed', messages: listing.messages.map(summaryOf), truncated: listing.truncated };
  });
}

export function showDeadLettered(
  deps: OperationsApiDeps,
  queueName: string,
  messageId: string,
): Promise<ShowOutcome> {
  const queue = queueOf(queueName);
  if (!queue.ok) return Promise.resolve(queue.outcome);
  return guarded(async (): Promise<ShowOutcome> => {
    const message = await deps.operations.findDeadLettered(queue.queue, messageId);
    if (message === undefined) {
      return { kind: 'no-such-message', error: `no dead-lettered message ${messageId} in ${queue.queue}` };
    }
    const { replay } = await inspect(deps, message);
    return { kind: 'message', message: { ...detailOf(message), replay } };
  });
}

export function replayDeadLetteredMessage(
  deps: OperationsApiDeps,
  queueName: string,
  messageId: string,
  body: unknown,
): Promise<ReplayOutcome> {
  const queue = queueOf(queueName);
  if (!queue.ok) return Promise.resolve(queue.outcome);
  const request = parseReplayBody(body);
  if (!request.ok) return Promise.resolve(malformed(request.error));
  return guarded(async () => ({
    kind: 'replay',
    result: await replayDeadLettered(deps, queue.queue, messageId, { force: request.force }),
  }));
}

export function sessionBacklog(deps: OperationsApiDeps, queueName: string): Promise<BacklogOutcome> {
  const queue = queueOf(queueName);
  if (!queue.ok) return Promise.resolve(queue.outcome);
  return guarded(async () => ({ kind: 'backlog', backlog: await deps.operations.backlog(queue.queue) }));
}
