/**
 * A document container whose every call is checked before it reaches the container: the seeded
 * faults and the outages throw from `before` to make the call fail as the store would.
 */
import type { Document, DocumentContainer } from '../services/ports';

export type ContainerOperation = Exclude<keyof DocumentContainer, 'name' | 'partitionKeyPath'>;

/**
 * What one call is for, from its arguments alone: the partition it reaches (`undefined` for a
 * cross-partition query) and the documents it names, so that a fault can be drawn for the call
 * itself rather than for its place among the calls of every partition.
 */
export interface ContainerCall {
  operation: ContainerOperation;
  partitionKey: string | undefined;
  target: string;
}

export function checkedContainer(
  container: DocumentContainer,
  before: (operation: ContainerOperation, call: ContainerCall) => void,
): DocumentContainer {
  const field = container.partitionKeyPath.slice(1);
  const partitionOf = (document: Document): unknown =>
    Object.hasOwn(document, field) ? document[field] : undefined;
  // The target is written only when a check reads it: most runs inject no store fault, and a
  // batch's target is a string of all its operations, made for every batch.
  const check = (operation: ContainerOperation, partitionKey: unknown, target: () => string): void => {
    const key = partitionKey === undefined ? undefined : String(partitionKey);
    before(operation, {
      operation,
      partitionKey: key,
      get target() {
        return target();
      },
    });
  };
  // Not async methods: each layer would add a promise and three turns of the microtask queue to
  // every call (two such layers wrap the consumer's container). A refused check still rejects.
  const guarded = <T>(refusal: () => void, call: () => Promise<T>): Promise<T> => {
    try {
      refusal();
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return call();
  };
  return {
    name: container.name,
    partitionKeyPath: container.partitionKeyPath,
    create: (document) =>
      guarded(
        () => check('create', partitionOf(document), () => document.id),
        () => container.create(document),
      ),
    read: (partitionKey, id) =>
      guarded(
        () => check('read', partitionKey, () => id),
        () => container.read(partitionKey, id),
      ),
    replace: (document, options) =>
      guarded(
        () => check('replace', partitionOf(document), () => document.id),
        () => container.replace(document, options),
      ),
    upsert: (document, options) =>
      guarded(
        () => check('upsert', partitionOf(document), () => document.id),
        () => container.upsert(document, options),
      ),
    delete: (partitionKey, id, options) =>
      guarded(
        () => check('delete', partitionKey, () => id),
        () => container.delete(partitionKey, id, options),
      ),
    batch: (partitionKey, operations) =>
      guarded(
        () =>
          check('batch', partitionKey, () =>
            operations
              .map(
                (operation) => `${operation.op}:${'id' in operation ? operation.id : operation.document.id}`,
              )
              .join(','),
          ),
        () => container.batch(partitionKey, operations),
      ),
    query: (spec) =>
      guarded(
        () => check('query', spec.partitionKey, () => JSON.stringify(spec.where ?? {})),
        () => container.query(spec),
      ),
  };
}
