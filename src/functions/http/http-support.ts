/**
 * What every HTTP function here does alike: JSON in, and the one mapping from a use case's outcome
 * to a status code and body. Codes follow what the caller may do next: 404 no such order or message,
 * 400 a malformed request (it names the field), 409 not allowed in this state or a replay refused
 * (the reason says what to fix), 503 a failure that may clear, 500 one that will not.
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { AppError } from '../../domain/errors';
import type { CancelOutcome, GetOrderOutcome, ReviewOutcome } from '../../services/fulfillment/orders-api';
import type { OperationsOutcome } from '../../services/operations/operations-api';
import type { AuditEntry, OperationsJournal } from '../../services/operations/operations-journal';
import type { Caller } from './actor';

export type Outcome = GetOrderOutcome | CancelOutcome | ReviewOutcome | OperationsOutcome;

export function responseOf(outcome: Outcome): HttpResponseInit {
  switch (outcome.kind) {
    case 'order':
      return { status: 200, jsonBody: { ...outcome.order } };
    case 'unknown-order':
      return { status: 404, jsonBody: { error: `order ${outcome.orderId} not found` } };
    case 'not-now':
      return { status: 409, jsonBody: { error: outcome.reason } };
    case 'already-requested':
      return {
        status: 200,
        jsonBody: { orderId: outcome.orderId, message: 'cancellation already requested', saga: outcome.saga },
      };
    case 'accepted':
      return {
        status: 202,
        jsonBody: {
          orderId: outcome.orderId,
          message: outcome.afterPointOfNoReturn
            ? `cancellation accepted after confirmation: a fee of ${outcome.fee} is kept`
            : 'cancellation accepted: the fulfillment is being undone',
        },
      };
    case 'passed':
      return {
        status: 202,
        jsonBody: {
          orderId: outcome.orderId,
          message: `review "${outcome.action}" passed to ${outcome.instanceId}`,
        },
      };
    case 'malformed':
      return { status: 400, jsonBody: { error: outcome.error } };
    case 'no-such-message':
      return { status: 404, jsonBody: { error: outcome.error } };
    case 'failed':
      return {
        status: outcome.transient ? 503 : 500,
        jsonBody: { error: outcome.error, code: outcome.code },
      };
    case 'listed':
      return { status: 200, jsonBody: { messages: outcome.messages, truncated: outcome.truncated } };
    case 'message':
      return { status: 200, jsonBody: { ...outcome.message } };
    case 'backlog':
      return { status: 200, jsonBody: { ...outcome.backlog } };
    case 'replay': {
      const { result } = outcome;
      if (result.replayed) return { status: 200, jsonBody: { ...result } };
      return {
        status: result.refusal === 'not-found' ? 404 : 409,
        jsonBody: { error: result.reason, refusal: result.refusal, prediction: result.prediction },
      };
    }
  }
}

/**
 * Runs `respond`; a failure the app classifies (an AppError) becomes its answer, a 503 (may clear)
 * or 500 naming it; anything else stays the host's 500.
 */
export async function answered(respond: () => Promise<HttpResponseInit>): Promise<HttpResponseInit> {
  try {
    return await respond();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return responseOf({
      kind: 'failed',
      transient: error.kind === 'transient',
      error: error.message,
      code: error.code,
    });
  }
}

/**
 * Writes an operator action's audit record and answers `response`; when the record cannot be
 * written the caller is told (500) with what the action did, since it already did it.
 */
export async function audited(
  journal: OperationsJournal,
  now: () => number,
  caller: Caller,
  entry: AuditEntry,
  response: HttpResponseInit,
  context: InvocationContext,
): Promise<HttpResponseInit> {
  context.log(`${entry.action} requested`, {
    by: caller.actor,
    status: entry.status,
    outcome: entry.outcome,
    ...(typeof entry.request.orderId === 'string' ? { orderId: entry.request.orderId } : {}),
  });
  try {
    await journal.audit(caller, entry, now());
    return response;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return {
      status: 500,
      jsonBody: {
        error: `the ${entry.action} ran, but its audit record could not be written (${error.code}): ${error.message}`,
        result: response.jsonBody,
      },
    };
  }
}

/**
 * The most a request body may hold. The use cases here take a few short fields; a bound keeps any
 * request from making a record larger than its store takes (Cosmos: 2 MB per item).
 */
export const MAX_REQUEST_BODY_BYTES = 16_384;

/** A body that is not JSON at all, before any use case sees it. */
export const NOT_JSON: HttpResponseInit = { status: 400, jsonBody: { error: 'body is not valid JSON' } };

const TOO_LARGE: HttpResponseInit = {
  status: 400,
  jsonBody: { error: `body is over the limit of ${MAX_REQUEST_BODY_BYTES} bytes` },
};

/**
 * The request's JSON body: undefined when empty; the answer to give instead when it is over the
 * limit (told by its content-length before it is read, or by what was read) or is not JSON.
 */
export async function jsonBody(
  request: HttpRequest,
): Promise<{ ok: true; value: unknown } | { ok: false; response: HttpResponseInit }> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > MAX_REQUEST_BODY_BYTES) return { ok: false, response: TOO_LARGE };
  const text = await request.text();
  if (Buffer.byteLength(text, 'utf8') > MAX_REQUEST_BODY_BYTES) return { ok: false, response: TOO_LARGE };
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, response: NOT_JSON };
  }
}
