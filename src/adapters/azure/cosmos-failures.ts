/**
 * What a Cosmos DB failure means to the app: transient, permanent, or a role not in effect yet
 * (AuthorizationPendingError). No `@azure/cosmos` import: the embedded runtime's
 * `authorizationDelay` fault (local/outages.ts) raises the SDK's error shape and classifies it here,
 * through the very function the container adapter uses, without loading the SDK.
 */
import { AuthorizationPendingError, PermanentError, TransientError, errorMessage } from '../../domain/errors';
import type { AppError } from '../../domain/errors';
import { ownValue } from '../../domain/own-properties';

/**
 * The role the app's identity needs on each container it writes (bicep/modules/roles.bicep; role
 * definition 00000000-0000-0000-0000-000000000002).
 */
export const COSMOS_DATA_CONTRIBUTOR_ROLE = 'Cosmos DB Built-in Data Contributor';

/**
 * The role the app's identity holds on the operators' journal instead: create, read and query only
 * (`journalAppenderRole` in bicep/modules/cosmos.bicep).
 */
export const COSMOS_JOURNAL_APPENDER_ROLE = 'Operations journal appender';

/** The role a call needs and where, so that a refusal can name them. */
export interface CosmosRoleNeeded {
  role: string;
  resource: string;
}

/** What a container's calls need: its data-plane role (the data contributor unless told) on it. */
export function contributorRoleOn(
  database: string,
  container: string,
  role: string = COSMOS_DATA_CONTRIBUTOR_ROLE,
): CosmosRoleNeeded {
  return { role, resource: `container ${container} of database ${database}` };
}

// Statuses Cosmos documents as "retry later". The SDK has already retried 429, 449 and some 503s by
// the time they reach us; a later delivery may still succeed, so they stay transient. 500 counts as
// transient too: retrying an unknown service fault costs a delivery, parking the message costs an order.
const THROTTLED_STATUSES: ReadonlySet<number> = new Set([429]);
const UNAVAILABLE_STATUSES: ReadonlySet<number> = new Set([408, 449, 500, 503]);
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'TimeoutError',
]);
// 401 and 403 are the identity refused: with Entra authentication a role assignment not in effect
// (yet), e.g. 403 substatus 5301 "Request blocked by Auth <account> : Request is blocked because
// principal [...] does not have required RBAC permissions to perform action [...]".
const AUTHORIZATION_STATUSES: ReadonlySet<number> = new Set([401, 403]);
// `items.batch` rethrows every failure as a plain Error carrying only the message, so the status and
// the network code are lost; these messages are all that is left to tell the transient ones apart.
const AUTHORIZATION_BATCH_MESSAGE = /Request blocked by Auth|required RBAC permissions|\bUnauthorized\b/i;
const TRANSIENT_BATCH_MESSAGE =
  /ECONNRESET|ECONNREFUSED|ECONNABORTED|ETIMEDOUT|EAI_AGAIN|EPIPE|timeout|unavailable/i;
const THROTTLED_BATCH_MESSAGE = /request rate is large|too many requests/i;

function fieldOf(value: unknown, field: string): unknown {
  return typeof value === 'object' && value !== null
    ? ownValue(value as Record<string, unknown>, field)
    : undefined;
}

/** The HTTP status of an `ErrorResponse` (its `code`), or undefined for anything else. */
export function statusOf(error: unknown): number | undefined {
  const code = fieldOf(error, 'code');
  if (typeof code === 'number') return code;
  const statusCode = fieldOf(error, 'statusCode');
  return typeof statusCode === 'number' ? statusCode : undefined;
}

/** Network errors arrive as a RestError or nested as a `cause`; look a few levels down. */
function networkCodeOf(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth += 1) {
    const code = fieldOf(current, 'code');
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
    if (fieldOf(current, 'name') === 'AbortError') return 'AbortError';
    current = fieldOf(current, 'cause');
  }
  return undefined;
}

function failureCode(error: unknown, message: string, action: string): string | undefined {
  const status = statusOf(error);
  if (status !== undefined) {
    if (THROTTLED_STATUSES.has(status)) return 'store-throttled';
    return UNAVAILABLE_STATUSES.has(status) ? 'store-unavailable' : undefined;
  }
  if (networkCodeOf(error) !== undefined) return 'store-unavailable';
  if (action !== 'batch') return undefined;
  if (THROTTLED_BATCH_MESSAGE.test(message)) return 'store-throttled';
  return TRANSIENT_BATCH_MESSAGE.test(message) ? 'store-unavailable' : undefined;
}

function refusedIdentity(error: unknown, message: string, action: string): boolean {
  const status = statusOf(error);
  if (status !== undefined) return AUTHORIZATION_STATUSES.has(status);
  return action === 'batch' && AUTHORIZATION_BATCH_MESSAGE.test(message);
}

/**
 * The app's error for a failed SDK call. `action` names the call (`create`, `batch`...); with
 * `needs`, a 401 or 403 is a role not in effect yet (waited out, naming the role and the resource);
 * without it, permanent.
 */
export function storeFailure(error: unknown, action: string, needs?: CosmosRoleNeeded): AppError {
  const message = errorMessage(error);
  const reason = statusOf(error) ?? networkCodeOf(error);
  const description = `Cosmos ${action} failed${reason === undefined ? '' : ` (${reason})`}: ${message}`;
  if (needs !== undefined && refusedIdentity(error, message, action)) {
    return new AuthorizationPendingError(needs.role, needs.resource, description, { cause: error });
  }
  const transientCode = failureCode(error, message, action);
  return transientCode === undefined
    ? new PermanentError('store-error', description, { cause: error })
    : new TransientError(transientCode, description, { cause: error });
}
