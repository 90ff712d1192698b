/**
 * Recovering in bulk (docs/operations.md, "Recovering in bulk"): replay the held messages a filter
 * selects, replay one order's held entries in sequence order, discard with a reason into the archive.
 * Each message goes through the single replay's own checks (./replay.ts), one at a time; a dry run
 * stops after the checks and moves nothing.
 *
 * Two actions racing over one message never both move it: each takes the very copy it listed (by
 * the broker's sequence number) under a peek-lock before it sends or archives anything, and removes
 * it only afterwards (MessageOperations); the one that finds it gone or held reports it `skipped`.
 * On `order-transactions` a replay also travels under a messageId fixed by that copy
 * (held-messages.ts `replayMessageId`), so even a replay sent twice (a crash between the send and
 * the removal) is dropped by the queue's duplicate detection.
 */
import { compareText } from '../../domain/compare';
import { groupBy } from '../../domain/group-by';
import { ownValue } from '../../domain/own-properties';
import { QUEUE } from '../queues';
import {
  DEAD_LETTER_QUEUES,
  entrySequenceOf,
  inSequenceOrder,
  isDeadLetterQueue,
  isOrderTransactionsEntry,
  matches,
  orderIdOf,
  reasonOf,
  type Held,
  type HeldFilter,
  type HeldSource,
} from './held-selection';
import type { Actor, OperationsJournal } from './operations-journal';
import { checkReplay, replayHeld, type ReplayDeps } from './replay';
import { AppError } from '../../domain/errors';

export interface RecoveryDeps extends ReplayDeps {
  journal: OperationsJournal;
}

export type RecoveryAction = 'would-replay' | 'replayed' | 'would-discard' | 'discarded' | 'skipped';

export interface RecoveredMessage {
  messageId: string;
  /** `parked`, or the queue whose dead-letter sub-queue held it. */
  heldIn: string;
  orderId: string | null;
  sequence: number | null;
  reason: string | null;
  enqueuedTime: string;
  action: RecoveryAction;
  detail?: string;
}

export interface RecoveryReport {
  dryRun: boolean;
  matched: number;
  /** True when a listing stopped at its bound: more held messages exist than were looked at. */
  truncated: boolean;
  messages: RecoveredMessage[];
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

export interface BulkReplayRequest {
  source: HeldSource;
  filter: HeldFilter;
  dryRun: boolean;
  force: boolean;
}

export interface DiscardRequest {
  source: HeldSource;
  filter: HeldFilter;
  why: string;
  dryRun: boolean;
}

export type Parsed<T> = { ok: true; request: T } | { ok: false; error: string };

/** The longest `why` a discard keeps: it goes into every archived copy. */
export const MAX_WHY_LENGTH = 500;
/** The most ids one discard names: a listing holds at most 500 (service-bus-operations.ts). */
export const MAX_MESSAGE_IDS = 500;

const BULK_REPLAY_FIELDS = ['source', 'queue', 'reason', 'from', 'to', 'orderId', 'dryRun', 'force'];
const DISCARD_FIELDS = ['source', 'queue', 'messageIds', 'reason', 'from', 'to', 'orderId', 'why', 'dryRun'];

type Fields = Record<string, unknown>;

function objectBody(body: unknown, example: string): Fields | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return `body must be a JSON object such as ${example}`;
  }
  return body as Fields;
}

function unknownFields(body: Fields, known: readonly string[]): string | null {
  const unknown = Object.keys(body).filter((field) => !known.includes(field));
  return unknown.length === 0
    ? null
    : `unknown field ${unknown.join(', ')}; the fields are ${known.join(', ')}`;
}

function flag(body: Fields, field: string): boolean | string {
  const value = ownValue(body, field);
  if (value === undefined) return false;
  return typeof value === 'boolean' ? value : `${field} must be true or false, got ${JSON.stringify(value)}`;
}

function text(body: Fields, field: string): string | undefined | { error: string } {
  const value = ownValue(body, field);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    return { error: `${field} must be a non-empty string, got ${JSON.stringify(value)}` };
  }
  return value;
}

function time(body: Fields, field: string): number | undefined | { error: string } {
  const value = text(body, field);
  if (value === undefined || typeof value === 'object') return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    return {
      error: `${field} must be an ISO 8601 time such as 2026-01-31T09:00:00Z, got ${JSON.stringify(value)}`,
    };
  return ms;
}

function sourceOf(body: Fields): HeldSource | string {
  const { source, queue } = body;
  if (source === 'parked') {
    return queue === undefined ? { source: 'parked' } : 'queue is only taken with "source": "deadletter"';
  }
  if (source !== 'deadletter') {
    return `source must be "parked" or "deadletter", got ${JSON.stringify(source)}`;
  }
  if (queue === undefined) return { source: 'deadletter', queues: [...DEAD_LETTER_QUEUES] };
  if (typeof queue !== 'string' || !isDeadLetterQueue(queue)) {
    return `queue must be one of ${DEAD_LETTER_QUEUES.join(', ')}, got ${JSON.stringify(queue)}`;
  }
  return { source: 'deadletter', queues: [queue] };
}

/** reason, from, to and orderId, checked; an error names the field. */
function filterOf(body: Fields): HeldFilter | string {
  const reason = text(body, 'reason');
  const orderId = text(body, 'orderId');
  const from = time(body, 'from');
  const to = time(body, 'to');
  for (const value of [reason, orderId, from, to]) {
    if (typeof value === 'object') return value.error;
  }
  const filter: HeldFilter = {
    ...(reason === undefined ? {} : { reason: reason as string }),
    ...(orderId === undefined ? {} : { orderId: orderId as string }),
    ...(from === undefined ? {} : { from: from as number }),
    ...(to === undefined ? {} : { to: to as number }),
  };
  if (filter.from !== undefined && filter.to !== undefined && filter.from > filter.to) {
    return 'from must not be after to';
  }
  return filter;
}

export function parseBulkReplay(body: unknown): Parsed<BulkReplayRequest> {
  const fields = objectBody(body, '{"source": "parked", "reason": "rejected", "dryRun": true}');
  if (typeof fields === 'string') return { ok: false, error: fields };
  const problem = unknownFields(fields, BULK_REPLAY_FIELDS);
  if (problem !== null) return { ok: false, error: problem };
  const source = sourceOf(fields);
  if (typeof source === 'string') return { ok: false, error: source };
  const filter = filterOf(fields);
  if (typeof filter === 'string') return { ok: false, error: filter };
  if (Object.keys(filter).length === 0) {
    return {
      ok: false,
      error: 'give at least one of reason, from, to, orderId: a bulk replay never takes everything unasked',
    };
  }
  const dryRun = flag(fields, 'dryRun');
  if (typeof dryRun === 'string') return { ok: false, error: dryRun };
  const force = flag(fields, 'force');
  if (typeof force === 'string') return { ok: false, error: force };
  return { ok: true, request: { source, filter, dryRun, force } };
}

export function parseOrderReplay(body: unknown): Parsed<{ dryRun: boolean }> {
  if (body === undefined) return { ok: true, request: { dryRun: false } };
  const fields = objectBody(body, '{"dryRun": true}');
  if (typeof fields === 'string') return { ok: false, error: fields };
  const problem = unknownFields(fields, ['dryRun']);
  if (problem !== null) return { ok: false, error: problem };
  const dryRun = flag(fields, 'dryRun');
  if (typeof dryRun === 'string') return { ok: false, error: dryRun };
  return { ok: true, request: { dryRun } };
}

export function parseDiscard(body: unknown): Parsed<DiscardRequest> {
  const fields = objectBody(body, '{"source": "parked", "messageIds": ["..."], "why": "..."}');
  if (typeof fields === 'string') return { ok: false, error: fields };
  const problem = unknownFields(fields, DISCARD_FIELDS);
  if (problem !== null) return { ok: false, error: problem };
  const why = text(fields, 'why');
  if (why === undefined || typeof why === 'object') {
    return {
      ok: false,
      error: 'why is required: a non-empty string saying why these messages are discarded',
    };
  }
  if (why.length > MAX_WHY_LENGTH) {
    return { ok: false, error: `why must be at most ${MAX_WHY_LENGTH} characters, got ${why.length}` };
  }
  const source = sourceOf(fields);
  if (typeof source === 'string') return { ok: false, error: source };
  const filter = filterOf(fields);
  if (typeof filter === 'string') return { ok: false, error: filter };
  const { messageIds } = fields;
  if (messageIds !== undefined) {
    if (
      !Array.isArray(messageIds) ||
      messageIds.length === 0 ||
      messageIds.length > MAX_MESSAGE_IDS ||
      !messageIds.every((id) => typeof id === 'string' && id !== '')
    ) {
      return {
        ok: false,
        error: `messageIds must be a list of 1 to ${MAX_MESSAGE_IDS} non-empty strings, got ${JSON.stringify(messageIds).slice(0, 200)}`,
      };
    }
    filter.messageIds = messageIds as string[];
  }
  if (Object.keys(filter).length === 0) {
    return {
      ok: false,
      error:
        'give at least one of messageIds, reason, from, to, orderId: a discard never takes everything unasked',
    };
  }
  const dryRun = flag(fields, 'dryRun');
  if (typeof dryRun === 'string') return { ok: false, error: dryRun };
  return { ok: true, request: { source, filter, why, dryRun } };
}

// ---------------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------------

async function listHeld(deps: ReplayDeps, source: HeldSource): Promise<{ held: Held[]; truncated: boolean }> {
  if (source.source === 'parked') {
    const listing = await deps.operations.listParked();
    return { held: listing.messages, truncated: listing.truncated };
  }
  const held: Held[] = [];
  let truncated = false;
  for (const queue of source.queues) {
    const listing = await deps.operations.listDeadLettered(queue);
    held.push(...listing.messages);
    truncated ||= listing.truncated;
  }
  return { held, truncated };
}

function heldIn(message: Held): string {
  return message.kind === 'parked' ? QUEUE.parked : message.queue;
}

function described(message: Held, action: RecoveryAction, detail?: string): RecoveredMessage {
  return {
    messageId: message.messageId,
    heldIn: heldIn(message),
    orderId: orderIdOf(message),
    sequence: entrySequenceOf(message),
    reason: reasonOf(message),
    enqueuedTime: new Date(message.enqueuedTimeUtc).toISOString(),
    action,
    ...(detail === undefined ? {} : { detail }),
  };
}

/**
 * The order a bulk replay sends in: each order's entries in sequence order, orders by their oldest
 * held message, messages of no order by age; so a session never gets a later entry before an
 * earlier one the same replay holds.
 */
export function replayOrder(messages: readonly Held[]): Held[] {
  const groups = groupBy(messages, (message) => {
    const orderId = orderIdOf(message);
    // A message of no order is a group of its own; the prefixes keep the two kinds of key apart.
    return orderId === null ? `message:${heldIn(message)}:${message.sequenceNumber}` : `order:${orderId}`;
  });
  const oldest = (group: Held[]): number => Math.min(...group.map((message) => message.enqueuedTimeUtc));
  return [...groups.entries()]
    .sort(([keyA, a], [keyB, b]) => oldest(a) - oldest(b) || compareText(keyA, keyB))
    .flatMap(([, group]) => inSequenceOrder(group));
}

/** One message's failure is its own: reported on it, and the action goes on with the next. */
async function eachMessage(
  messages: readonly Held[],
  act: (message: Held) => Promise<RecoveredMessage>,
): Promise<RecoveredMessage[]> {
  const results: RecoveredMessage[] = [];
  for (const message of messages) {
    try {
      results.push(await act(message));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      results.push(described(message, 'skipped', `failed (${error.code}): ${error.message}`));
    }
  }
  return results;
}

async function replayEach(
  deps: ReplayDeps,
  messages: readonly Held[],
  options: { dryRun: boolean; force: boolean },
): Promise<RecoveredMessage[]> {
  return eachMessage(messages, async (message) => {
    if (options.dryRun) {
      const checked = await checkReplay(deps, message, { force: options.force });
      return 'allowed' in checked
        ? described(message, 'would-replay', `to ${checked.queue}: ${checked.prediction.description}`)
        : described(message, 'skipped', checked.reason);
    }
    const result = await replayHeld(deps, message, { force: options.force });
    return result.replayed
      ? described(
          message,
          'replayed',
          `sent as ${result.sentAs} to ${result.queue}: ${result.prediction.description}`,
        )
      : described(message, 'skipped', result.reason);
  });
}

export async function bulkReplay(deps: RecoveryDeps, request: BulkReplayRequest): Promise<RecoveryReport> {
  const { held, truncated } = await listHeld(deps, request.source);
  const selected = replayOrder(held.filter((message) => matches(message, request.filter)));
  return {
    dryRun: request.dryRun,
    matched: selected.length,
    truncated,
    messages: await replayEach(deps, selected, request),
  };
}

/**
 * The order's entries held on their way into `order-transactions`, parked or dead-lettered, replayed
 * in sequence order into the order's session, which hands them to the consumer in that order.
 */
export async function orderedReplay(
  deps: RecoveryDeps,
  orderId: string,
  request: { dryRun: boolean },
): Promise<RecoveryReport> {
  const parked = await listHeld(deps, { source: 'parked' });
  const deadLettered = await listHeld(deps, { source: 'deadletter', queues: [QUEUE.orderTransactions] });
  const selected = inSequenceOrder(
    [...parked.held, ...deadLettered.held].filter(
      (message) => isOrderTransactionsEntry(message) && orderIdOf(message) === orderId,
    ),
  );
  return {
    dryRun: request.dryRun,
    matched: selected.length,
    truncated: parked.truncated || deadLettered.truncated,
    messages: await replayEach(deps, selected, { dryRun: request.dryRun, force: false }),
  };
}

export async function discard(
  deps: RecoveryDeps,
  request: DiscardRequest,
  by: Actor,
): Promise<RecoveryReport> {
  const { held, truncated } = await listHeld(deps, request.source);
  const selected = held.filter((message) => matches(message, request.filter));
  const messages = await eachMessage(selected, async (message) => {
    if (request.dryRun) return described(message, 'would-discard');
    const keep = (): Promise<void> => deps.journal.archive(message, by, request.why, deps.now());
    const outcome =
      message.kind === 'parked'
        ? await deps.operations.discardParked(message, keep)
        : await deps.operations.discardDeadLettered(message, keep);
    return outcome.discarded
      ? described(message, 'discarded', 'archived, then removed')
      : described(
          message,
          'skipped',
          `${message.messageId} left ${heldIn(message)} meanwhile, or another action holds it; nothing was archived or removed`,
        );
  });
  return { dryRun: request.dryRun, matched: selected.length, truncated, messages };
}
