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
import { AppError, PermanentError } from '../../domain/errors';
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
  Telemetry,
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
import { checkQueriedFields } from '../indexing-policy';
import { CALL_BOUND_MS, COSMOS_REQUEST_TIMEOUT_MS, COSMOS_RETRY_OPTIONS } from '../handler-time';
import { withinCallBound } from './call-bound';
import { contributorRoleOn, statusOf, storeFailure, type CosmosRoleNeeded } from './cosmos-failures';

export interface CosmosClientSettings {
  /** `https://<account>.documents.azure.com:443/`, or the test server's address. */
  endpoint: string;
  /** Production: the app's credential, `appCredential` (docs/architecture.md decision 7). */
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
    // Each request and its throttling retries bounded, so that one call's worst case is known
    // (src/adapters/handler-time.ts).
    connectionPolicy: {
      requestTimeout: COSMOS_REQUEST_TIMEOUT_MS,
      retryOptions: { ...COSMOS_RETRY_OPTIONS },
    },
    ...(settings.credential !== undefined ? { aadCredentials: settings.credential } : { key: settings.key }),
    ...(settings.agent !== undefined ? { agent: settings.agent } : {}),
  });
}

/** A JSON copy: the caller's object is never handed to the SDK, which may add fields to it. */
/** The document as JSON, after the 2 MB item limit is checked on its text (document-rules). */
function toJson(document: Document): JSONObject {
  const text = JSON.stringify(document);
  checkDocumentBytes(String(document.id), text);
  return JSON.parse(text) as JSONObject;
}

function requestOptions(ifMatch: string | undefined, abortSignal: AbortSignal): RequestOptions {
  return ifMatch === undefined
    ? { abortSignal }
    : { accessCondition: { type: 'IfMatch', condition: ifMatch }, abortSignal };
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

/**
 * The metric of what the store charged, in request units, with the dimension `operation`
 * (`<container>.<action>`, e.g. `orders.batch`): docs/operations.md divides it by the entries handled.
 */
export const STORE_REQUEST_CHARGE = 'store.requestCharge';

/**
 * The request units a response, or a refusal (a 409, 412 or 429 is charged too), cost: the SDK's
 * `requestCharge`, else its `x-ms-request-charge` header. A batch's response carries the batch's.
 */
function requestChargeOf(outcome: unknown): number {
  if (typeof outcome !== 'object' || outcome === null) return 0;
  const { requestCharge, headers } = outcome as {
    requestCharge?: unknown;
    headers?: Record<string, unknown>;
  };
  const charge = Number(requestCharge ?? headers?.['x-ms-request-charge']);
  return Number.isFinite(charge) && charge > 0 ? charge : 0;
}

/**
 * How a container's calls fail: the role a refused identity lacks, and how long a call may take;
 * and what each call cost.
 */
interface CallPolicy {
  needs(): CosmosRoleNeeded;
  callBoundMs: number;
  charged(action: string, outcome: unknown): void;
}

/**
 * Runs one SDK call, held to the call bound (its AbortSignal fires there), for which every failure is
 * a failure. An AppError (the bound given up on) is the app's own already.
 */
async function request<R>(
  policy: CallPolicy,
  action: string,
  call: (abortSignal: AbortSignal) => Promise<R>,
): Promise<R> {
  try {
    const response = await withinCallBound(`Cosmos ${action}`, policy.callBoundMs, call);
    policy.charged(action, response);
    return response;
  } catch (error) {
    if (error instanceof AppError) throw error;
    policy.charged(action, error);
    throw storeFailure(error, action, policy.needs());
  }
}

/** The outcome of one SDK call: its response, or one of the statuses the port reports as a result. */
type Sent<R, S extends number> = { response: R; status?: undefined } | { status: S };

async function send<R, S extends number>(
  policy: CallPolicy,
  action: string,
  call: (abortSignal: AbortSignal) => Promise<R>,
  expected: readonly S[],
): Promise<Sent<R, S>> {
  try {
    const response = await withinCallBound(`Cosmos ${action}`, policy.callBoundMs, call);
    policy.charged(action, response);
    return { response };
  } catch (error) {
    if (error instanceof AppError) throw error;
    policy.charged(action, error);
    const status = statusOf(error);
    const known = expected.find((candidate) => candidate === status);
    if (known !== undefined) return { status: known };
    throw storeFailure(error, action, policy.needs());
  }
}

export interface CosmosContainerOptions {
  /**
   * The fields the container's indexing policy indexes besides the partition key
   * (src/adapters/indexing-policy.ts): a query filtering on another is refused before it is sent,
   * as the embedded store refuses it. Undefined: any field.
   */
  queriedFields?: readonly string[];
  /** The most one call may take; `CALL_BOUND_MS` unless a test shortens it. */
  callBoundMs?: number;
  /** Where each call's request charge goes (`STORE_REQUEST_CHARGE`); nowhere unless given. */
  telemetry?: Pick<Telemetry, 'metric'>;
  /** The data-plane role the identity holds here, named when a call is refused; the data contributor unless given. */
  role?: string;
}

/** The container's database, for naming where a missing role belongs. */
function databaseOf(container: Container): string {
  return (container.database as { id?: string } | undefined)?.id ?? 'the database';
}

export function createCosmosContainer(
  container: Container,
  partitionKeyPath: string,
  containerOptions: CosmosContainerOptions = {},
): DocumentContainer {
  const keyField = partitionKeyField(partitionKeyPath);
  const { telemetry } = containerOptions;
  const policy: CallPolicy = {
    needs: () => contributorRoleOn(databaseOf(container), container.id, containerOptions.role),
    callBoundMs: containerOptions.callBoundMs ?? CALL_BOUND_MS,
    charged(action, outcome) {
      const charge = requestChargeOf(outcome);
      if (telemetry !== undefined && charge > 0)
        telemetry.metric(STORE_REQUEST_CHARGE, charge, { operation: `${container.id}.${action}` });
    },
  };

  return {
    name: container.id,
    partitionKeyPath,

    async create(document: Document): Promise<CreateResult> {
      checkDocument(document, keyField);
      const json = toJson(document);
      const sent = await send(
        policy,
        'create',
        (abortSignal) => container.items.create(json, { abortSignal }),
        [409],
      );
      return sent.status === undefined
        ? { status: 201, etag: etagOf(sent.response) }
        : { status: sent.status };
    },

    async read<T extends Document>(partitionKey: string, id: string): Promise<Stored<T> | undefined> {
      checkPartitionKey(partitionKey);
      checkId(id);
      // SDK 4 reports a missing item as statusCode 404 without throwing; older ones threw.
      const sent = await send(
        policy,
        'read',
        (abortSignal) => container.item(id, partitionKey).read<ItemDefinition>({ abortSignal }),
        [404],
      );
      if (sent.status !== undefined || sent.response.statusCode === 404) return undefined;
      return storedOf<T>(sent.response.resource);
    },

    async replace(document: Document, options: WriteOptions = {}): Promise<ReplaceResult> {
      const partitionKey = checkDocument(document, keyField);
      const json = toJson(document);
      const sent = await send(
        policy,
        'replace',
        (abortSignal) =>
          container
            .item(document.id, partitionKey)
            .replace(json, requestOptions(options.ifMatch, abortSignal)),
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
        policy,
        'upsert',
        (abortSignal) => container.items.upsert(json, requestOptions(options.ifMatch, abortSignal)),
        [412],
      );
      if (sent.status !== undefined) return { status: sent.status };
      return { status: sent.response.statusCode === 201 ? 201 : 200, etag: etagOf(sent.response) };
    },

    async delete(partitionKey: string, id: string, options: WriteOptions = {}): Promise<DeleteResult> {
      checkPartitionKey(partitionKey);
      checkId(id);
      const sent = await send(
        policy,
        'delete',
        (abortSignal) =>
          container.item(id, partitionKey).delete(requestOptions(options.ifMatch, abortSignal)),
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
      const response = await request(policy, 'batch', (abortSignal) =>
        container.items.batch(inputs, partitionKey, { abortSignal }),
      );
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
      Object.entries(spec.above ?? {}).forEach(([field, value], index) => {
        conditions.push(`c.${checkFieldName(field)} > @a${index}`);
        parameters.push({ name: `@a${index}`, value });
      });
      const query = `SELECT * FROM c${conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''}`;
      const { resources } = await request(policy, 'query', (abortSignal) =>
        container.items
          .query<unknown>(
            { query, parameters },
            partitionKey === undefined ? { abortSignal } : { partitionKey, abortSignal },
          )
          .fetchAll(),
      );
      return sortStored(
        resources.map((resource) => storedOf<T>(resource)),
        keyField,
      );
    },
  };
}
