/**
 * The document store port on `@azure/cosmos` 4.9 (docs/architecture.md decision 4). Expected outcomes (404, 409, 412)
 * become result shapes; failures become TransientError or PermanentError so the caller knows whether
 * trying again can help. Documents come back with `_etag` and `_ts` only, like the embedded store's.
 */
import { CosmosClient } from '@azure/cosmos';
import type {
  Container,
  DeleteOperationInput,
  ItemDefinition,
  ItemResponse,
  JSONObject,
  OperationInput,
  OperationResponse,
  RequestOptions,
  SqlParameter,
} from '@azure/cosmos';
import type { TokenCredential } from '@azure/identity';
import type { Agent } from 'node:https';
import { PermanentError, TransientError, errorMessage } from '../../domain/errors';
import type { AppError } from '../../domain/errors';
import type {
  BatchOperation,
  BatchOperationResult,
  BatchResult,
  CreateResult,
  DeleteResult,
  Document,
  DocumentContainer,
  QuerySpec,
  ReplaceResult,
  Stored,
  UpsertResult,
  WriteOptions,
} from '../../services/ports';
import {
  checkBatch,
  checkBatchBytes,
  checkDocumentBytes,
  checkDocument,
  checkFieldName,
  checkId,
  checkPartitionKey,
  partitionKeyField,
  sortStored,
  withoutServiceFields,
} from '../document-rules';
import { ownValue } from '../../domain/own-properties';
import { checkQueriedFields } from '../indexing-policy';

export interface CosmosClientSettings {
  /** `https://<account>.documents.azure.com:443/`, or the test server's address. */
  endpoint: string;
  /** Production: `DefaultAzureCredential` (docs/architecture.md decision 7). */
  credential?: TokenCredential;
  /** Tests only: the emulator's well-known key. */
  key?: string;
  /** Tests only: an agent that accepts the test server's self-signed certificate. */
  agent?: Agent;
}

export function createCosmosClient(settings: CosmosClientSettings): CosmosClient {
  if ((settings.credential === undefined) === (settings.key === undefined)) {
    throw new PermanentError('store-config', 'a Cosmos client needs exactly one of credential or key');
  }
  return new CosmosClient({
    endpoint: settings.endpoint,
    ...(settings.credential !== undefined ? { aadCredentials: settings.credential } : { key: settings.key }),
    ...(settings.agent !== undefined ? { agent: settings.agent } : {}),
  });
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
// `items.batch` rethrows every failure as a plain Error carrying only the message, so the status and
// the network code are lost; these messages are all that is left to tell the transient ones apart.
const TRANSIENT_BATCH_MESSAGE =
  /ECONNRESET|ECONNREFUSED|ECONNABORTED|ETIMEDOUT|EAI_AGAIN|EPIPE|timeout|unavailable/i;
const THROTTLED_BATCH_MESSAGE = /request rate is large|too many requests/i;

function fieldOf(value: unknown, field: string): unknown {
  return typeof value === 'object' && value !== null
    ? ownValue(value as Record<string, unknown>, field)
    : undefined;
}

/** The HTTP status of an `ErrorResponse` (its `code`), or undefined for anything else. */
function statusOf(error: unknown): number | undefined {
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

function storeFailure(error: unknown, action: string): AppError {
  const message = errorMessage(error);
  const reason = statusOf(error) ?? networkCodeOf(error);
  const description = `Cosmos ${action} failed${reason === undefined ? '' : ` (${reason})`}: ${message}`;
  const transientCode = failureCode(error, message, action);
  return transientCode === undefined
    ? new PermanentError('store-error', description, { cause: error })
    : new TransientError(transientCode, description, { cause: error });
}

/** A JSON copy: the caller's object is never handed to the SDK, which may add fields to it. */
/** The document as JSON, after the 2 MB item limit is checked on its text (document-rules). */
function toJson(document: Document): JSONObject {
  const text = JSON.stringify(document);
  checkDocumentBytes(String(document.id), text);
  return JSON.parse(text) as JSONObject;
}

function ifMatchOptions(ifMatch: string | undefined): RequestOptions {
  return ifMatch === undefined ? {} : { accessCondition: { type: 'IfMatch', condition: ifMatch } };
}

function storedOf<T extends Document>(resource: unknown): Stored<T> {
  if (typeof resource !== 'object' || resource === null) {
    throw new PermanentError('store-error', 'Cosmos returned no document');
  }
  const document = withoutServiceFields(resource as Record<string, unknown>);
  if (typeof document._etag !== 'string') {
    throw new PermanentError(
      'store-error',
      `Cosmos returned document ${String(document.id)} without an _etag`,
    );
  }
  return { document: document as T, etag: document._etag };
}

/** The etag of a written document: its `_etag`, which is what a later read returns as `etag`. */
function etagOf(response: Pick<ItemResponse<ItemDefinition>, 'resource' | 'etag'>): string {
  const etag = response.resource?._etag ?? response.etag;
  if (typeof etag !== 'string')
    throw new PermanentError('store-error', 'Cosmos returned a write without an etag');
  return etag;
}

function operationInput(operation: BatchOperation, partitionKey: string): OperationInput {
  // Each operation carries the partition key: the SDK accepts it, and the test server needs it.
  switch (operation.op) {
    case 'create':
      return { operationType: 'Create', partitionKey, resourceBody: toJson(operation.document) };
    case 'replace':
      return {
        operationType: 'Replace',
        partitionKey,
        id: operation.document.id,
        resourceBody: toJson(operation.document),
        ...(operation.ifMatch !== undefined ? { ifMatch: operation.ifMatch } : {}),
      };
    case 'upsert':
      return {
        operationType: 'Upsert',
        partitionKey,
        resourceBody: toJson(operation.document),
        ...(operation.ifMatch !== undefined ? { ifMatch: operation.ifMatch } : {}),
      };
    case 'delete': {
      // The service honours ifMatch on a batch delete; the SDK's type for it just omits the field.
      const input: DeleteOperationInput & { ifMatch?: string } = {
        operationType: 'Delete',
        partitionKey,
        id: operation.id,
        ...(operation.ifMatch !== undefined ? { ifMatch: operation.ifMatch } : {}),
      };
      return input;
    }
    case 'read':
      return { operationType: 'Read', partitionKey, id: operation.id };
  }
}

function batchResultOf(response: OperationResponse): BatchOperationResult {
  if (response.statusCode >= 400 || response.resourceBody === undefined)
    return { status: response.statusCode };
  const { document, etag } = storedOf(response.resourceBody);
  return { status: response.statusCode, etag, document };
}

/** Runs one SDK call for which every failure is a failure (no status is an expected result). */
async function request<R>(action: string, call: () => Promise<R>): Promise<R> {
  try {
    return await call();
  } catch (error) {
    throw storeFailure(error, action);
  }
}

/** The outcome of one SDK call: its response, or one of the statuses the port reports as a result. */
type Sent<R, S extends number> = { response: R; status?: undefined } | { status: S };

async function send<R, S extends number>(
  action: string,
  call: () => Promise<R>,
  expected: readonly S[],
): Promise<Sent<R, S>> {
  try {
    return { response: await call() };
  } catch (error) {
    const status = statusOf(error);
    const known = expected.find((candidate) => candidate === status);
    if (known !== undefined) return { status: known };
    throw storeFailure(error, action);
  }
}

export interface CosmosContainerOptions {
  /**
   * The fields the container's indexing policy indexes besides the partition key
   * (src/adapters/indexing-policy.ts): a query filtering on another is refused before it is sent,
   * as the embedded store refuses it. Undefined: any field.
   */
  queriedFields?: readonly string[];
}

export function createCosmosContainer(
  container: Container,
  partitionKeyPath: string,
  containerOptions: CosmosContainerOptions = {},
): DocumentContainer {
  const keyField = partitionKeyField(partitionKeyPath);

  return {
    name: container.id,
    partitionKeyPath,

    async create(document: Document): Promise<CreateResult> {
      checkDocument(document, keyField);
      const json = toJson(document);
      const sent = await send('create', () => container.items.create(json), [409]);
      return sent.status === undefined
        ? { status: 201, etag: etagOf(sent.response) }
        : { status: sent.status };
    },

    async read<T extends Document>(partitionKey: string, id: string): Promise<Stored<T> | undefined> {
      checkPartitionKey(partitionKey);
      checkId(id);
      // SDK 4 reports a missing item as statusCode 404 without throwing; older ones threw.
      const sent = await send('read', () => container.item(id, partitionKey).read<ItemDefinition>(), [404]);
      if (sent.status !== undefined || sent.response.statusCode === 404) return undefined;
      return storedOf<T>(sent.response.resource);
    },

    async replace(document: Document, options: WriteOptions = {}): Promise<ReplaceResult> {
      const partitionKey = checkDocument(document, keyField);
      const json = toJson(document);
      const sent = await send(
        'replace',
        () => container.item(document.id, partitionKey).replace(json, ifMatchOptions(options.ifMatch)),
        [404, 412],
      );
      return sent.status === undefined
        ? { status: 200, etag: etagOf(sent.response) }
        : { status: sent.status };
    },

    async upsert(document: Document, options: WriteOptions = {}): Promise<UpsertResult> {
      checkDocument(document, keyField);
      const json = toJson(document);
      const sent = await send(
        'upsert',
        () => container.items.upsert(json, ifMatchOptions(options.ifMatch)),
        [412],
      );
      if (sent.status !== undefined) return { status: sent.status };
      return { status: sent.response.statusCode === 201 ? 201 : 200, etag: etagOf(sent.response) };
    },

    async delete(partitionKey: string, id: string, options: WriteOptions = {}): Promise<DeleteResult> {
      checkPartitionKey(partitionKey);
      checkId(id);
      const sent = await send(
        'delete',
        () => container.item(id, partitionKey).delete(ifMatchOptions(options.ifMatch)),
        [404, 412],
      );
      return sent.status === undefined ? { status: 204 } : { status: sent.status };
    },

    async batch(partitionKey: string, operations: readonly BatchOperation[]): Promise<BatchResult> {
      checkBatch(partitionKey, operations, keyField);
      checkBatchBytes(
        operations.flatMap((operation) =>
          'document' in operation ? [JSON.stringify(operation.document)] : [],
        ),
      );
      const inputs = operations.map((operation) => operationInput(operation, partitionKey));
      // The SDK does not throw when an operation fails: each result carries its own status.
      const response = await request('batch', () => container.items.batch(inputs, partitionKey));
      const responses: OperationResponse[] | undefined = response.result;
      if (!Array.isArray(responses) || responses.length !== operations.length) {
        throw new PermanentError(
          'store-error',
          `Cosmos answered a batch of ${operations.length} operations with ${responses?.length ?? 'no'} results`,
        );
      }
      const results = responses.map(batchResultOf);
      return { ok: results.every((result) => result.status < 400), results };
    },

    async query<T extends Document>(spec: QuerySpec): Promise<Array<Stored<T>>> {
      checkQueriedFields(container.id, keyField, containerOptions.queriedFields, spec);
      const conditions: string[] = [];
      const parameters: SqlParameter[] = [];
      const partitionKey = spec.partitionKey === undefined ? undefined : checkPartitionKey(spec.partitionKey);
      // The partition is also a condition, not only a request option, so the answer does not depend
      // on the server scoping queries by the option.
      if (partitionKey !== undefined) {
        conditions.push(`c.${keyField} = @pk`);
        parameters.push({ name: '@pk', value: partitionKey });
      }
      Object.entries(spec.where ?? {}).forEach(([field, value], index) => {
        conditions.push(`c.${checkFieldName(field)} = @p${index}`);
        parameters.push({ name: `@p${index}`, value });
      });
      const query = `SELECT * FROM c${conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''}`;
      const options = partitionKey === undefined ? {} : { partitionKey };
      const { resources } = await request('query', () =>
        container.items.query<unknown>({ query, parameters }, options).fetchAll(),
      );
      return sortStored(
        resources.map((resource) => storedOf<T>(resource)),
        keyField,
      );
    },
  };
}
