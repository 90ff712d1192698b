/**
 * What the console's overview reads of the orders container (src/services/operations/overview.ts):
 * the gap documents and the sagas needing attention by indexed queries, and only the orders that
 * wait, so that its cost on Azure follows what needs a person, not every order kept.
 */
import { createEmbeddedApp } from '../../local/app';
import { createEmbeddedOperations } from '../../local/store/message-operations';
import { overview } from '../../src/services/operations/overview';
import type { DocumentContainer, QuerySpec } from '../../src/services/ports';
import { added, created, FAST, ledger } from '../support/e2e';

describe('the overview', () => {
  it('finds the one waiting order among many by its gap document, and reads no other order', async () => {
    const app = createEmbeddedApp(FAST);
    try {
      const complete = Array.from({ length: 20 }, (_, i) => [
        created(`O-${i}`, `T-${i}-1`),
        added(`O-${i}`, `T-${i}-2`, 2),
      ]).flat();
      await app.sendLedger([ledger('B-1', [...complete, created('O-W', 'T-W-1'), added('O-W', 'T-W-3', 3)])]);
      await app.drain();

      const queries: QuerySpec[] = [];
      const reads: string[] = [];
      const counted: DocumentContainer = {
        ...app.orders,
        name: app.orders.name,
        partitionKeyPath: app.orders.partitionKeyPath,
        query: (spec) => {
          queries.push(spec);
          return app.orders.query(spec);
        },
        read: (partitionKey, id) => {
          reads.push(partitionKey);
          return app.orders.read(partitionKey, id);
        },
      };
      const seen = await overview({
        operations: createEmbeddedOperations(app.broker),
        orders: counted,
        now: Date.now,
      });
      expect(seen.gaps).toEqual([
        expect.objectContaining({ orderId: 'O-W', waitingFor: 2, bufferedSequences: [3] }),
      ]);
      expect(seen.sagasNeedingAttention).toEqual([]);
      // Across partitions, only the indexed queries; in a partition, only the waiting order's.
      expect(queries.filter((spec) => spec.partitionKey === undefined)).toEqual([
        { where: { kind: 'gap' } },
        { where: { kind: 'saga', status: 'needs-attention' } },
      ]);
      expect(new Set([...reads, ...queries.flatMap((spec) => spec.partitionKey ?? [])])).toEqual(
        new Set(['O-W']),
      );
    } finally {
      await app.stop();
    }
  });
});
