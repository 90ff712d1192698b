/**
 * What the console's overview reads of the orders container (src/services/operations/overview.ts):
 * the gap documents and the sagas needing attention by indexed queries, and only the orders that
 * wait, so that its cost on Azure follows what needs a person, not every order kept. And what its
 * order view reads (src/services/operations/order-view.ts): the order's partition, once.
 */
import { createEmbeddedApp } from '../../local/app';
import { createEmbeddedOperations } from '../../local/store/message-operations';
import { overview } from '../../src/services/operations/overview';
import { inspectOrder } from '../../src/services/operations/order-view';
import type { DocumentContainer, QuerySpec } from '../../src/services/ports';
import type { EmbeddedApp } from '../../local/app';
import { added, created, FAST, ledger } from '../support/e2e';

/** The app's orders container, with every query and point read it is asked for written down. */
function counted(app: EmbeddedApp): { orders: DocumentContainer; queries: QuerySpec[]; reads: string[] } {
  const queries: QuerySpec[] = [];
  const reads: string[] = [];
  const orders: DocumentContainer = {
    ...app.orders,
    name: app.orders.name,
    partitionKeyPath: app.orders.partitionKeyPath,
    query: (spec) => {
      queries.push(spec);
      return app.orders.query(spec);
    },
    read: (partitionKey, id) => {
      reads.push(`${partitionKey} ${id}`);
      return app.orders.read(partitionKey, id);
    },
  };
  return { orders, queries, reads };
}

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

      const { orders, queries, reads } = counted(app);
      const seen = await overview({
        operations: createEmbeddedOperations(app.broker),
        orders,
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
      expect(
        new Set([
          ...reads.map((read) => read.split(' ')[0]),
          ...queries.flatMap((spec) => spec.partitionKey ?? []),
        ]),
      ).toEqual(new Set(['O-W']));
    } finally {
      await app.stop();
    }
  });
});

describe('the order view', () => {
  it('reads its order with a point read of the header and of the saga record, and one query of its records', async () => {
    const app = createEmbeddedApp(FAST);
    try {
      // Past the header's snapshot: three records the header does not hold yet.
      await app.sendLedger([
        ledger('B-1', [
          created('O-1', 'T-1'),
          added('O-1', 'T-2', 2),
          added('O-1', 'T-3', 3),
          added('O-1', 'T-4', 4),
        ]),
      ]);
      await app.drain();

      const { orders, queries, reads } = counted(app);
      const seen = await inspectOrder(
        { operations: createEmbeddedOperations(app.broker), orders, traceIdOf: () => 'trace' },
        'O-1',
      );
      expect(seen).toMatchObject({
        kind: 'inspection',
        inspection: { order: { lineCount: 3 }, records: expect.any(Array) },
      });
      expect(seen.kind === 'inspection' && seen.inspection.records).toHaveLength(4);
      expect(reads.sort()).toEqual(['O-1 order', 'O-1 saga:O-1']);
      expect(queries).toEqual([{ partitionKey: 'O-1', where: { kind: 'transaction' } }]);
    } finally {
      await app.stop();
    }
  });
});
