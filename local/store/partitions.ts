/**
 * How the embedded store holds one partition's documents: its records by id (a Map, so that an id
 * such as `__proto__` or `constructor` is data like any other), with an index of who holds each
 * unique key value, and a batch's changes staged over them. What a record looks like is
 * ./stored-records.ts's.
 */
import type { PartitionView, StoredRecord } from './stored-records';

/** A partition's documents by id, and the holder of each of their unique key values. */
export class Partition implements PartitionView {
  private readonly records = new Map<string, StoredRecord>();
  /** `<key index>:<value JSON>` → the id of the document holding it. */
  private readonly holders = new Map<string, string>();

  keys(): IterableIterator<string> {
    return this.records.keys();
  }

  get(id: string): StoredRecord | undefined {
    return this.records.get(id);
  }

  set(id: string, record: StoredRecord): void {
    this.unindex(id);
    this.records.set(id, record);
    record.unique.forEach((value, index) => this.holders.set(`${index}:${value}`, id));
  }

  delete(id: string): void {
    this.unindex(id);
    this.records.delete(id);
  }

  holderOf(index: number, value: string): string | undefined {
    return this.holders.get(`${index}:${value}`);
  }

  private unindex(id: string): void {
    this.records.get(id)?.unique.forEach((value, index) => {
      if (this.holders.get(`${index}:${value}`) === id) this.holders.delete(`${index}:${value}`);
    });
  }
}

/**
 * A batch's changes, held over the partition and applied only when every operation succeeded, so a
 * failure leaves the partition untouched. Only the changes are held: copying the partition instead
 * would make each write cost as much as the partition holds (an order and all its transaction records).
 */
export function stagedOver(partition: Partition): PartitionView & { commit(): void } {
  const changes = new Map<string, StoredRecord | undefined>();
  return {
    keys: () => new Set([...partition.keys(), ...changes.keys()]).values(),
    get: (id) => (changes.has(id) ? changes.get(id) : partition.get(id)),
    set: (id, record) => {
      changes.set(id, record);
    },
    delete: (id) => {
      changes.set(id, undefined);
    },
    // A value taken in this batch, else the partition's holder unless this batch changed it.
    holderOf(index, value) {
      for (const [id, record] of changes) if (record?.unique[index] === value) return id;
      const holder = partition.holderOf(index, value);
      return holder !== undefined && !changes.has(holder) ? holder : undefined;
    },
    commit() {
      for (const [id, record] of changes) {
        if (record === undefined) partition.delete(id);
        else partition.set(id, record);
      }
    },
  };
}
