/**
 * Items grouped by a key, in a `Map` (a key is data: an orderId `constructor` is a group like any
 * other), each group in the items' order and the groups in the order their keys first came. An
 * item whose key is null belongs to no group.
 */
export function groupBy<T>(items: Iterable<T>, keyOf: (item: T) => string | null): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    if (key === null) continue;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [item]);
    else group.push(item);
  }
  return groups;
}
