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
  return {
    name: container.name,
    partitionKeyPath: container.partitionKeyPath,
    async create(document) {
      check('create', partitionOf(document), () => document.id);
      return container.create(document);
    },
    async read(partitionKey, id) {
      check('read', partitionKey, () => id);
      return container.read(partitionKey, id);
    },
    async replace(document, options) {
      check('replace', partitionOf(document), () => document.id);
      return container.replace(document, options);
    },
    async upsert(document, options) {
      check('upsert', partitionOf(document), () => document.id);
      return container.upsert(document, options);
    },
    async delete(partitionKey, id, options) {
      check('delete', partitionKey, () => id);
      return container.delete(partitionKey, id, options);
    },
    async batch(partitionKey, operations) {
      check('batch', partitionKey, () =>
        operations
          .map((operation) => `${operation.op}:${'id' in operation ? operation.id : operation.document.id}`)
          .join(','),
      );
      return container.batch(partitionKey, operations);
    },
    async query(spec) {
      check('query', spec.partitionKey, () => JSON.stringify(spec.where ?? {}));
      return container.query(spec);
    },
  };
}
