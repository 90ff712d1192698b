/**
 * A document container whose every call is checked before it reaches the container: the seeded
 * faults and the outages throw from `before` to make the call fail as the store would.
 */
import type { DocumentContainer } from '../services/ports';

export type ContainerOperation = Exclude<keyof DocumentContainer, 'name' | 'partitionKeyPath'>;

export function checkedContainer(
  container: DocumentContainer,
  before: (operation: ContainerOperation) => void,
): DocumentContainer {
  return {
    name: container.name,
    partitionKeyPath: container.partitionKeyPath,
    async create(document) {
      before('create');
      return container.create(document);
    },
    async read(partitionKey, id) {
      before('read');
      return container.read(partitionKey, id);
    },
    async replace(document, options) {
      before('replace');
      return container.replace(document, options);
    },
    async upsert(document, options) {
      before('upsert');
      return container.upsert(document, options);
    },
    async delete(partitionKey, id, options) {
      before('delete');
      return container.delete(partitionKey, id, options);
    },
    async batch(partitionKey, operations) {
      before('batch');
      return container.batch(partitionKey, operations);
    },
    async query(spec) {
      before('query');
      return container.query(spec);
    },
  };
}
