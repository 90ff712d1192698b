/**
 * `npm run ops -- --local URL <command>` and `--url URL --key KEY <command>`: the ops commands over
 * the app's own HTTP API (src/functions/http/operations-http.ts), with Node's fetch: the app served
 * by `npm start -- --serve`, or a deployed one. Each id goes into its path segment through
 * encodeURIComponent, so no id can change the route or merge with another.
 */
import { safeCell, textTable } from '../cli/text-table';
import type { HttpCommand, HttpTarget } from './ops-args';

export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

export interface HttpOutput {
  out(text: string): void;
  err(text: string): void;
}

/** A request the command makes: its method, its path under `/api/`, and its JSON body. */
interface ApiRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: Record<string, unknown>;
}

const segment = encodeURIComponent;

/** The source fields of a bulk request: the parked queue, or one queue's dead-letter sub-queue. */
function sourceFields(source: { parked: true } | { dlq: string }): Record<string, unknown> {
  return 'parked' in source ? { source: 'parked' } : { source: 'deadletter', queue: source.dlq };
}

export function requestOf(command: HttpCommand): ApiRequest {
  switch (command.name) {
    case 'parked list':
      return { method: 'GET', path: 'ops/parked' };
    // A messageId goes in the query, which carries any id exactly: a path cannot carry a '/' unaltered.
    case 'parked show':
      return { method: 'GET', path: `ops/parked-message?messageId=${segment(command.messageId)}` };
    case 'parked replay':
      return {
        method: 'POST',
        path: `ops/parked-message/replay?messageId=${segment(command.messageId)}`,
        body: { force: command.force },
      };
    case 'dlq list':
      return { method: 'GET', path: `ops/deadletter/${segment(command.queue)}` };
    case 'dlq show':
      return {
        method: 'GET',
        path: `ops/deadletter-message/${segment(command.queue)}?messageId=${segment(command.messageId)}`,
      };
    case 'dlq replay':
      return {
        method: 'POST',
        path: `ops/deadletter-message/${segment(command.queue)}/replay?messageId=${segment(command.messageId)}`,
        body: { force: command.force },
      };
    case 'sessions':
      return { method: 'GET', path: `ops/sessions/${segment(command.queue)}` };
    case 'replay':
      return {
        method: 'POST',
        path: 'ops/replay',
        body: {
          ...sourceFields(command.source),
          ...command.filter,
          dryRun: command.dryRun,
          force: command.force,
        },
      };
    case 'replay-order':
      return {
        method: 'POST',
        path: `ops/orders/${segment(command.orderId)}/replay`,
        body: { dryRun: command.dryRun },
      };
    case 'discard':
      return {
        method: 'POST',
        path: 'ops/discard',
        body: {
          ...sourceFields(command.source),
          ...command.filter,
          why: command.why,
          dryRun: command.dryRun,
        },
      };
    case 'archive':
      return { method: 'GET', path: `ops/archive?orderId=${segment(command.orderId)}` };
    case 'audit':
      return {
        method: 'GET',
        path: command.since === undefined ? 'ops/audit' : `ops/audit?since=${segment(command.since)}`,
      };
  }
}

/** What the app answered: its status and its JSON body (undefined when the body is not JSON). */
interface ApiAnswer {
  status: number;
  body: unknown;
}

/** The URL of a path under `/api/` of the app at `base` (its root, or its `/api/`). */
export function apiUrl(base: URL, path: string): string {
  const root = base.pathname.replace(/\/+$/, '').replace(/\/api$/, '');
  return `${base.origin}${root}/api/${path}`;
}

/** Node's fetch names the cause of a failed connection only in `cause`. */
function unreachable(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

type Sent = { ok: true; answer: ApiAnswer } | { ok: false; problem: string };

async function send(fetchApi: Fetch, target: HttpTarget, request: ApiRequest): Promise<Sent> {
  const url = apiUrl(target.url, request.path);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (target.key !== undefined) headers['x-functions-key'] = target.key;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetchApi(url, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: AbortSignal.timeout(target.timeoutMs),
    });
  } catch (error) {
    return { ok: false, problem: `cannot reach ${target.url.origin}: ${unreachable(error)}` };
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { ok: true, answer: { status: response.status, body } };
}

const json = (value: unknown): string => JSON.stringify(value, null, 2);

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, name)
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

/**
 * A value of the answer as one line can show it: ids come from producers, so control and invisible
 * characters are escaped (a line a message stays one line, and no escape sequence reaches the terminal).
 */
const text = (value: unknown, fallback = '-'): string =>
  safeCell(cell(value, fallback), Number.POSITIVE_INFINITY);

/** A value as a table cell, as it came: textTable makes each cell safe itself. */
const cell = (value: unknown, fallback = '-'): string =>
  value === undefined || value === null ? fallback : String(value);

/** The problem an error answer names, on one line, with the request it answered. */
function problemOf(request: ApiRequest, answer: ApiAnswer): string {
  const error = field(answer.body, 'error');
  const said = typeof error === 'string' ? text(error) : 'no error given';
  return `HTTP ${answer.status} on ${request.method} /api/${request.path}: ${said}`;
}

function messagesOf(body: unknown): unknown[] {
  const messages = field(body, 'messages');
  return Array.isArray(messages) ? messages : [];
}

function truncationNote(body: unknown): string[] {
  return field(body, 'truncated') === true ? ['(the listing stopped at its bound: there are more)'] : [];
}

function parkedTable(body: unknown): string {
  const messages = messagesOf(body);
  if (messages.length === 0) return 'no parked messages';
  return [
    textTable([
      ['messageId', 'from', 'session', 'reason', 'parked at'],
      ...messages.map((message) => {
        const park = field(message, 'park');
        return [
          cell(field(message, 'messageId')),
          cell(field(park, 'fromQueue'), '?'),
          cell(field(park, 'fromSessionId')),
          cell(field(park, 'reason')),
          cell(field(message, 'enqueuedTimeUtc')),
        ];
      }),
    ]),
    `${messages.length} parked`,
    ...truncationNote(body),
  ].join('\n');
}

function deadLetterTable(queue: string, body: unknown): string {
  const messages = messagesOf(body);
  if (messages.length === 0) return `no dead-lettered messages in ${queue}`;
  return [
    textTable([
      ['messageId', 'session', 'deliveries', 'enqueued at', 'reason'],
      ...messages.map((message) => [
        cell(field(message, 'messageId')),
        cell(field(message, 'sessionId')),
        cell(field(message, 'deliveryCount')),
        cell(field(message, 'enqueuedTimeUtc')),
        cell(field(message, 'deadLetterReason')),
      ]),
    ]),
    `${messages.length} dead-lettered in ${queue}`,
    ...truncationNote(body),
  ].join('\n');
}

function backlogText(body: unknown): string {
  const sessions = field(body, 'sessions');
  const counts =
    `${text(field(body, 'queue'))}: ${text(field(body, 'activeMessages'))} active, ` +
    `${text(field(body, 'deadLetteredMessages'))} dead-lettered`;
  if (!Array.isArray(sessions) || sessions.length === 0) return counts;
  return [
    counts,
    '',
    textTable([
      ['session', 'pending'],
      ...sessions.map((session) => [cell(field(session, 'sessionId')), cell(field(session, 'pending'))]),
    ]),
    ...truncationNote(body),
  ].join('\n');
}

/** A bulk action's answer: one line a message with its action, then a summary line. */
function recoveryText(body: unknown): string {
  const messages = messagesOf(body);
  const counts = new Map<string, number>();
  const lines = messages.map((message) => {
    const action = text(field(message, 'action'), '?');
    counts.set(action, (counts.get(action) ?? 0) + 1);
    const detail = field(message, 'detail');
    return (
      `${action} ${text(field(message, 'messageId'))}` +
      ` order ${text(field(message, 'orderId'))} sequence ${text(field(message, 'sequence'))}` +
      ` (${text(field(message, 'reason'))}, held since ${text(field(message, 'enqueuedTime'))})` +
      (typeof detail === 'string' && detail !== '' ? `: ${text(detail)}` : '')
    );
  });
  const tally = [...counts].map(([action, count]) => `${count} ${action}`).join(', ');
  const summary =
    `${field(body, 'dryRun') === true ? 'dry run: ' : ''}matched ${text(field(body, 'matched'), '0')}` +
    (tally === '' ? '' : `; ${tally}`) +
    (field(body, 'truncated') === true ? '; the listing stopped at its bound: there are more' : '');
  return [...lines, summary].join('\n');
}

function replayText(body: unknown): string {
  const sessionId = field(body, 'sessionId');
  const prediction = field(body, 'prediction');
  return (
    `replayed ${text(field(body, 'messageId'))} into ${text(field(body, 'queue'))}` +
    (sessionId === null || sessionId === undefined ? '' : ` (session ${text(sessionId)})`) +
    (field(body, 'forced') === true ? ', forced' : '') +
    `; expected: ${text(field(prediction, 'outcome'))}: ${text(field(prediction, 'description'))}`
  );
}

function listText(name: string, key: string, body: unknown): string {
  const items = field(body, key);
  const count = Array.isArray(items) ? items.length : 0;
  return `${json(items ?? [])}\n${count} ${name}`;
}

function successText(command: HttpCommand, body: unknown): string {
  switch (command.name) {
    case 'parked list':
      return parkedTable(body);
    case 'dlq list':
      return deadLetterTable(command.queue, body);
    case 'sessions':
      return backlogText(body);
    case 'parked show':
    case 'dlq show':
      return json(body);
    case 'parked replay':
    case 'dlq replay':
      return replayText(body);
    case 'replay':
    case 'replay-order':
    case 'discard':
      return recoveryText(body);
    case 'archive':
      return listText('archived', 'archived', body);
    case 'audit':
      return listText('audit records', 'audit', body);
  }
}

/**
 * Runs one command against the app. Exit codes as on Azure through the SDK: 0 done; 1 a replay the
 * app refused (409, its reason printed) or the app failing (5xx); 2 any other 4xx (the request, the
 * key or the id is wrong: one line naming the problem) or an app that cannot be reached.
 */
export async function runHttpCommand(
  command: HttpCommand,
  target: HttpTarget,
  asJson: boolean,
  output: HttpOutput,
  fetchApi: Fetch = fetch,
): Promise<number> {
  const request = requestOf(command);
  const sent = await send(fetchApi, target, request);
  if (!sent.ok) {
    output.err(sent.problem);
    return 2;
  }
  const { answer } = sent;
  if (answer.status >= 200 && answer.status < 300) {
    output.out(asJson ? json(answer.body) : successText(command, answer.body));
    return 0;
  }
  const refusal = field(answer.body, 'refusal');
  if (answer.status === 409 && typeof refusal === 'string') {
    if (asJson) output.out(json(answer.body));
    output.err(`refused (${text(refusal)}): ${text(field(answer.body, 'error'))}`);
    return 1;
  }
  if (answer.status === 401 || answer.status === 403) {
    output.err(
      `${problemOf(request, answer)} (${command.name} needs ${target.key === undefined ? 'a key: --key KEY' : 'another key or role'})`,
    );
    return 2;
  }
  output.err(problemOf(request, answer));
  return answer.status >= 400 && answer.status < 500 ? 2 : 1;
}
