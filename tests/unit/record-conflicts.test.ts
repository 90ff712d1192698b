/**
 * local/record-conflicts.ts: the report's `recordConflicts` counts the store's refusals of a
 * transaction record that exists, by the stored digest, and nothing else the store refuses.
 */
import { createEmbeddedStore } from '../../local/store/document-store';
import { withRecordConflicts } from '../../local/record-conflicts';

function setUp() {
  const container = createEmbeddedStore().container('orders', '/orderId');
  return { container, counted: withRecordConflicts(container) };
}

const record = (transactionId: string, digest: string) => ({
  id: `txn:${transactionId}`,
  kind: 'transaction',
  orderId: 'O-1',
  transactionId,
  digest,
});
const header = { id: 'order', kind: 'order', orderId: 'O-1' };

describe('withRecordConflicts', () => {
  it('counts a batch refused on a record that exists, by whether the stored digest is the same', async () => {
    const { container, counted } = setUp();
    await container.create(record('T-1', 'd1'));
    await container.create(record('T-2', 'd2'));
    await counted.batch('O-1', [
      { op: 'create', document: record('T-1', 'd1') },
      { op: 'create', document: header },
    ]);
    await counted.batch('O-1', [{ op: 'create', document: record('T-2', 'other') }]);
    expect(counted.conflicts()).toEqual({ duplicate: 1, digestMismatch: 1 });
  });

  it('counts a single create refused the same way', async () => {
    const { container, counted } = setUp();
    await container.create(record('T-1', 'd1'));
    expect(await counted.create(record('T-1', 'd1'))).toEqual({ status: 409 });
    expect(counted.conflicts()).toEqual({ duplicate: 1, digestMismatch: 0 });
  });

  it('leaves out a header that exists and a batch that succeeds', async () => {
    const { container, counted } = setUp();
    await container.create(header);
    await counted.batch('O-1', [
      { op: 'create', document: record('T-3', 'd3') },
      { op: 'create', document: header },
    ]);
    await counted.batch('O-1', [{ op: 'create', document: record('T-4', 'd4') }]);
    expect(counted.conflicts()).toEqual({ duplicate: 0, digestMismatch: 0 });
  });
});
