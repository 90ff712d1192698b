/**
 * Counts the store's refusals of a transaction record that exists (409 on its create): the path of
 * the Idempotent Consumer that no cache answers (src/services/idempotent-consumer.ts, `applyEntry`).
 * Each refusal is told by the stored record's digest, as the consumer tells it: the same entry
 * delivered again (`duplicate`) or its transactionId reused with other content (`digestMismatch`).
 */
import type { BatchOperation, BatchResult, Document, DocumentContainer } from '../src/services/ports';
import { TRANSACTION_KIND } from '../src/services/order-documents';

export interface RecordConflicts {
  duplicate: number;
  digestMismatch: number;
}

function digestOf(document: Document | undefined): unknown {
  return document !== undefined && Object.hasOwn(document, 'digest') ? document.digest : undefined;
}

/** The create of a transaction record that the batch's 409 refused, if that is why it failed. */
function refusedRecord(operations: readonly BatchOperation[], result: BatchResult): Document | undefined {
  if (result.ok) return undefined;
  const failed = result.results.findIndex((each) => each.status !== 424);
  const operation = operations[failed];
  if (result.results[failed]?.status !== 409 || operation?.op !== 'create') return undefined;
  return operation.document.kind === TRANSACTION_KIND ? operation.document : undefined;
}

export function withRecordConflicts(
  container: DocumentContainer,
): DocumentContainer & { conflicts: () => RecordConflicts } {
  const counts: RecordConflicts = { duplicate: 0, digestMismatch: 0 };
  const partitionField = container.partitionKeyPath.slice(1);
  const count = async (partitionKey: string, refused: Document): Promise<void> => {
    const stored = await container.read(partitionKey, refused.id);
    if (stored === undefined) return;
    if (digestOf(stored.document) === digestOf(refused)) counts.duplicate += 1;
    else counts.digestMismatch += 1;
  };
  return {
    name: container.name,
    partitionKeyPath: container.partitionKeyPath,
    async create(document) {
      const result = await container.create(document);
      if (result.status === 409 && document.kind === TRANSACTION_KIND) {
        await count(String(document[partitionField]), document);
      }
      return result;
    },
    read: (partitionKey, id) => container.read(partitionKey, id),
    replace: (document, options) => container.replace(document, options),
    upsert: (document, options) => container.upsert(document, options),
    delete: (partitionKey, id, options) => container.delete(partitionKey, id, options),
    query: (spec) => container.query(spec),
    async batch(partitionKey, operations) {
      const result = await container.batch(partitionKey, operations);
      const refused = refusedRecord(operations, result);
      if (refused !== undefined) await count(partitionKey, refused);
      return result;
    },
    conflicts: () => ({ ...counts }),
  };
}
