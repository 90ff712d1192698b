/**
 * The fields the app's queries filter on, per container: the one list the Bicep's indexing policies
 * (bicep/modules/cosmos.bicep), the document stores' query checks and the bench's RU estimate are
 * held to. A query on a field not listed here is refused by both stores ('unindexed-query'), so a
 * new query fails its tests until the field is added here, and then the Bicep check
 * (tests/contract/bicep-consistency.test.ts) fails until the Bicep indexes it.
 *
 * Microsoft Learn, "Indexing policies in Azure Cosmos DB"
 * (https://learn.microsoft.com/azure/cosmos-db/index-policy): "By optimizing the number of paths
 * that are indexed, you can substantially reduce the latency and RU charge of write operations";
 * "Exclude the root path to selectively include paths that need to be indexed. The partition key
 * property path isn't indexed by default with the exclude strategy and should be explicitly
 * included if needed"; "If the indexing mode is set to consistent, the system properties id and _ts
 * are automatically indexed." So every container excludes `/*` and includes its partition key (a
 * partition-scoped query is also a filter on it, see cosmos-store.ts) and the fields below.
 */
import { PermanentError } from '../domain/errors';
import { ORDERS_CONTAINER } from '../services/order-documents';
import type { QuerySpec } from '../services/ports';
import { DOWNSTREAM_CONTAINER, INVENTORY_CONTAINER } from './downstream';
import { OPERATIONS_CONTAINER } from '../services/operations/operations-journal';

/**
 * Queried fields besides the partition key:
 * - orders: `kind`, the report's and the bench's `where: { kind: 'order' }` (local/app.ts,
 *   local/cli/run-picture.ts, bench/runs.ts), and `where: { kind: 'transaction' }`: an order's
 *   transaction records, in its partition, for its lines (the orders API, the saga's inventory and
 *   shipping steps: src/services/order-documents.ts), and across partitions for the report
 *   (local/order-records.ts); `slot`, the records past the header's snapshot, `above: { slot }`, in
 *   the order's partition (src/services/order-documents.ts, readOrderState); `status`, the sagas
 *   needing attention, across partitions (src/services/operations/overview.ts), which indexes a
 *   term of the headers and saga records only: no transaction record has a status.
 * - downstream: `kind`, the records of one kind (charges, shipments, ...) the saga tests read.
 * - inventory: none; stock is read by sku, a point read.
 * - operations: `kind`, the archive of one order and the audit of one day, each in its partition
 *   (src/services/operations/operations-journal.ts).
 */
export const QUERIED_FIELDS: ReadonlyMap<string, readonly string[]> = new Map([
  [ORDERS_CONTAINER, ['kind', 'slot', 'status']],
  [INVENTORY_CONTAINER, []],
  [DOWNSTREAM_CONTAINER, ['kind']],
  [OPERATIONS_CONTAINER, ['kind']],
]);

/**
 * Unique keys, per container: no two documents of one logical partition may hold the same value
 * there, and a write that would is refused with 409 as a duplicate id is. In `orders`, `slot` is the
 * sequence slot a transaction record holds (docs/documents.md): two writers of one slot of one order
 * cannot both commit, with or without the header. Microsoft Learn, "Unique key constraints in Azure
 * Cosmos DB" (https://learn.microsoft.com/azure/cosmos-db/unique-keys): "unique keys are scoped to a
 * logical partition"; "you can define unique keys only when you create a container"; "if some unique
 * path values are missing, they're treated as null values, which take part in the uniqueness
 * constraint", so every document of the partition names its slot.
 */
export const UNIQUE_KEYS: ReadonlyMap<string, readonly string[]> = new Map([[ORDERS_CONTAINER, ['slot']]]);

/** The unique key fields of a container of the app: none but where UNIQUE_KEYS says. */
export function uniqueKeysOf(container: string): readonly string[] {
  queriedFieldsOf(container);
  return UNIQUE_KEYS.get(container) ?? [];
}

/** The queried fields of a container of the app; throws for a container the app does not have. */
export function queriedFieldsOf(container: string): readonly string[] {
  const fields = QUERIED_FIELDS.get(container);
  if (fields === undefined) {
    throw new PermanentError('unknown-container', `the app has no container ${JSON.stringify(container)}`);
  }
  return fields;
}

/** The included paths of a container's indexing policy: its partition key and its queried fields. */
export function includedPaths(partitionKeyField: string, queried: readonly string[]): string[] {
  return [partitionKeyField, ...queried.filter((field) => field !== partitionKeyField)].map(
    (field) => `/${field}/?`,
  );
}

/**
 * Refuses a query that filters on a field the container's policy does not index (`queried`
 * undefined: the container has no policy to keep to, as in the stores' own contract tests).
 */
export function checkQueriedFields(
  container: string,
  partitionKeyField: string,
  queried: readonly string[] | undefined,
  spec: QuerySpec,
): void {
  if (queried === undefined) return;
  for (const field of [...Object.keys(spec.where ?? {}), ...Object.keys(spec.above ?? {})]) {
    if (field !== partitionKeyField && !queried.includes(field)) {
      throw new PermanentError(
        'unindexed-query',
        `container ${container} is not indexed on ${JSON.stringify(field)}: add it to QUERIED_FIELDS ` +
          '(src/adapters/indexing-policy.ts) and to the indexing policy in bicep/modules/cosmos.bicep',
      );
    }
  }
}
