/**
 * A document container whose every call is checked before it reaches the container: the seeded
 * faults and the outages throw from `before` to make the call fail as the store would.
 */
import type { BatchOperation, Document, DocumentContainer, QuerySpec } from '../src/services/ports';

export type ContainerOperation = Exclude<keyof DocumentContainer, 'name' | 'partitionKeyPath'>;

/** What a call names, as it was called: an id, a document, a batch's operations or a query. */
export type CallSubject = string | Document | readonly BatchOperation[] | QuerySpec;

/**
 * What one call is for, from its arguments alone: the partition it reaches (`undefined` for a
 * cross-partition query) and the documents it names (`targetOf`), so that a fault can be drawn for
 * the call itself rather than for its place among the calls of every partition.
 */
export interface ContainerCall {
  operation: ContainerOperation;
  partitionKey: string | undefined;
  subject: CallSubject;
}

/**
 * The documents a call names, as text: written only when a check asks (most runs inject no store
 * fault, and a batch's is a string of all its operations).
 */
export function targetOf(call: ContainerCall): string {
  const { operation, subject } = call;
  if (typeof subject === 'string') return subject;
  if (operation === 'batch') {
    return (subject as readonly BatchOperation[])
      .map((each) => `${each.op}:${'id' in each ? each.id : each.document.id}`)
      .join(',');
  }
  if (operation === 'query') return JSON.stringify((subject as QuerySpec).where ?? {});
  return (subject as Document).id;
}

export function checkedContainer(
  container: DocumentContainer,
  before: (operation: ContainerOperation, call: ContainerCall) => void,
): DocumentContainer {
  const field = container.partitionKeyPath.slice(1);
  const partitionOf = (document: Document): unknown =>
    Object.hasOwn(document, field) ? document[field] : undefined;
  /** Undefined when the call may go on; else the refusal, for the call to reject with. */
  const refusal = (operation: ContainerOperation, partitionKey: unknown, subject: CallSubject): unknown => {
    try {
      const key = partitionKey === undefined ? undefined : String(partitionKey);
      before(operation, { operation, partitionKey: key, subject });
      return undefined;
    } catch (error) {
      return error ?? new Error(`${operation} refused`);
    }
  };
  // Plain methods, not async ones, and no closure per call: each of the two layers round the
  // consumer's store would add a promise and three turns of the microtask queue to every call.
  // A refused call still rejects, and never throws at the call.
  return {
    name: container.name,
    partitionKeyPath: container.partitionKeyPath,
    create(document) {
      const refused = refusal('create', partitionOf(document), document);
      return refused === undefined ? container.create(document) : Promise.reject(refused as Error);
    },
    read(partitionKey, id) {
      const refused = refusal('read', partitionKey, id);
      return refused === undefined ? container.read(partitionKey, id) : Promise.reject(refused as Error);
    },
    replace(document, options) {
      const refused = refusal('replace', partitionOf(document), document);
      return refused === undefined ? container.replace(document, options) : Promise.reject(refused as Error);
    },
    upsert(document, options) {
      const refused = refusal('upsert', partitionOf(document), document);
      return refused === undefined ? container.upsert(document, options) : Promise.reject(refused as Error);
    },
    delete(partitionKey, id, options) {
      const refused = refusal('delete', partitionKey, id);
      return refused === undefined
        ? container.delete(partitionKey, id, options)
        : Promise.reject(refused as Error);
    },
    batch(partitionKey, operations) {
      const refused = refusal('batch', partitionKey, operations);
      return refused === undefined
        ? container.batch(partitionKey, operations)
        : Promise.reject(refused as Error);
    },
    query(spec) {
      const refused = refusal('query', spec.partitionKey, spec);
      return refused === undefined ? container.query(spec) : Promise.reject(refused as Error);
    },
  };
}
