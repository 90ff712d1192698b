/**
 * How the embedded store holds one partition's documents: a Map of its records by id (a Map, so that
 * an id such as `__proto__` or `constructor` is data like any other), with a batch's changes staged
 * over them. What a record looks like is ./stored-records.ts's.
 */
import type { PartitionView, StoredRecord } from './stored-records';

/** A partition's documents by id. */
export type Partition = Map<string, StoredRecord>;

/**
 * A batch's changes, held over the partition and applied only when every operation succeeded, so a
 * failure leaves the partition untouched. Only the changes are held: copying the partition instead
 * would make each write cost as much as the partition holds (an order and all its transaction records).
 */
export function stagedOver(partition: Partition): PartitionView & { commit(): void } {
  const changes = new Map<string, StoredRecord | undefined>();
  return {
    get: (id) => (changes.has(id) ? changes.get(id) : partition.get(id)),
    set: (id, record) => {
      changes.set(id, record);
    },
    delete: (id) => {
      changes.set(id, undefined);
    },
    commit() {
      for (const [id, record] of changes) {
        if (record === undefined) partition.delete(id);
        else partition.set(id, record);
      }
    },
  };
}
