/**
 * Plain records keyed by input (transactionIds, orderIds, skus) that never reach Object.prototype:
 * `record[key]` finds an inherited member for `constructor` or `toString`, and assigning to
 * `record['__proto__']` replaces the prototype instead of adding an entry. Records that travel as
 * JSON (documents, activity results) stay plain objects; every lookup and write goes through here.
 * Anything that lives only in memory uses a `Map`.
 */

export type OwnRecord<T> = Record<string, T>;

/** The record's own value under `key`, never an inherited one. */
export function ownValue<T>(record: Readonly<OwnRecord<T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

export function hasOwnKey(record: Readonly<OwnRecord<unknown>>, key: string): boolean {
  return Object.hasOwn(record, key);
}

/**
 * Sets an own property, `__proto__` included, as JSON.parse would have. Only `__proto__` needs
 * defining: on a plain record every other key's assignment makes the same own data property, at a
 * tenth of defineProperty's cost (it is on the path of every message's application properties).
 */
export function setOwn<T>(record: OwnRecord<T>, key: string, value: NoInfer<T>): void {
  if (key === '__proto__')
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}

/** A copy of the record with `key` set (own properties only, `__proto__` kept as data). */
export function withOwn<T>(record: Readonly<OwnRecord<T>>, key: string, value: T): OwnRecord<T> {
  const copy: OwnRecord<T> = { ...record };
  setOwn(copy, key, value);
  return copy;
}

/** A copy of the record without `key`. */
export function withoutOwn<T>(record: Readonly<OwnRecord<T>>, key: string): OwnRecord<T> {
  const copy: OwnRecord<T> = { ...record };
  delete copy[key];
  return copy;
}
