/**
 * What the Functions host passes with a Service Bus message, as the services' DeliveredMessage.
 *
 * The Node worker hands over the trigger metadata converted (azure-functions-nodejs-library
 * `src/converters/fromRpcTriggerMetadata.ts`): every value the host sent as a string goes through
 * `tryJsonParse` (`fromRpcTypedData.ts`), and object keys are camel-cased (`toCamelCase.ts`). So a
 * `messageId` or `sessionId` that is JSON text arrives as what it parses to: "12345" as 12345,
 * "1.50" as 1.5, "1e3" as 1000, "12345678901234567890" as 12345678901234567000, "true" as true,
 * "null" as null; "007" is not JSON and stays a string. Part of that cannot be undone from the
 * value alone, so an id is taken back from the message body where the body carries it (a ledger
 * batch's `batchId`, an entry's `orderId`): if that text, converted the same way, equals what
 * arrived, it is the id. Otherwise the value's JSON text stands for it (true → "true",
 * null → "null", 1.5 → "1.5"), which is exact unless the producer wrote a form JSON does not keep
 * ("1.50", "1e3", more than 17 significant digits). That remainder is documented in docs/messages.md.
 */
import type { InvocationContext } from '@azure/functions';
import { isDeepStrictEqual } from 'node:util';
import { PermanentError } from '../domain/errors';
import type { ApplicationProperties, DeliveredMessage } from '../services/ports';
import { ownValue, setOwn } from '../domain/own-properties';

/**
 * The first character of JSON text after its insignificant whitespace (RFC 8259, sections 2 and 3:
 * an object, an array, a string, a number, `true`, `false` or `null`). Text that starts with
 * anything else is not JSON, so `JSON.parse` would throw on it.
 */
const JSON_START = /^[ \t\n\r]*[{["\-0-9tfn]/;

/** What the worker makes of one trigger-metadata string: `tryJsonParse`, then `toCamelCaseValue`. */
export function asTheWorkerConverts(text: string): unknown {
  // Ids such as `O-17` cannot be JSON: the same result without a thrown SyntaxError, which costs
  // some microseconds (the stack is captured) on every message.
  if (!JSON_START.test(text)) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  return camelCased(value);
}

function camelCased(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(camelCased);
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    setOwn(result, key.charAt(0).toLowerCase() + key.slice(1), camelCased(item));
  }
  return result;
}

/**
 * The id the producer wrote, from what arrived and the body's own copy of it (when there is one):
 * the copy when it converts to what arrived, else the text of what arrived.
 */
export function recoveredId(arrived: unknown, ownCopy: unknown): string | undefined {
  if (arrived === undefined) return undefined;
  if (typeof ownCopy === 'string' && isDeepStrictEqual(asTheWorkerConverts(ownCopy), arrived)) return ownCopy;
  if (typeof arrived === 'string') return arrived;
  return JSON.stringify(arrived);
}

function properties(value: unknown): ApplicationProperties {
  if (typeof value !== 'object' || value === null) return {};
  const result: ApplicationProperties = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean')
      setOwn(result, key, item);
  }
  return result;
}

function field(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null && Object.hasOwn(body, name)
    ? ownValue(body as Record<string, unknown>, name)
    : undefined;
}

/** Which body fields hold the message's own ids, for taking them back (see above). */
export interface IdsInBody {
  messageId?: string;
  sessionId?: string;
}

export function deliveredMessage(
  body: unknown,
  context: InvocationContext,
  idsInBody: IdsInBody = {},
): DeliveredMessage {
  const metadata = context.triggerMetadata ?? {};
  const own = (key: string): unknown => ownValue(metadata, key);
  // Service Bus always sets a MessageId; without one this is not a Service Bus delivery. The
  // invocation id is no substitute: it changes on every delivery, and idempotency keys on this.
  const messageId = recoveredId(
    own('messageId'),
    idsInBody.messageId === undefined ? undefined : field(body, idsInBody.messageId),
  );
  if (messageId === undefined) {
    throw new PermanentError('no-message-id', `trigger metadata of ${context.functionName} has no messageId`);
  }
  const sequenceNumber = Number(own('sequenceNumber'));
  return {
    body,
    messageId,
    sessionId: recoveredId(
      // null is the string "null" converted; a message without a session has none at all.
      own('sessionId'),
      idsInBody.sessionId === undefined ? undefined : field(body, idsInBody.sessionId),
    ),
    deliveryCount: Number(own('deliveryCount') ?? 1),
    sequenceNumber: Number.isFinite(sequenceNumber) ? sequenceNumber : undefined,
    correlationId: recoveredId(own('correlationId'), undefined),
    // Extension v5 binds ApplicationProperties, and UserProperties for back-compat.
    applicationProperties: properties(own('applicationProperties') ?? own('userProperties')),
  };
}
