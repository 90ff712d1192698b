/**
 * Readers outside the consumer see the order as it stands, not its header's last snapshot: most
 * entries write their transaction record alone (docs/documents.md, "The header and the records"),
 * so a reader that took the header as stored would show an open order behind its records.
 */
import { createEmbeddedApp } from '../../local/app';
import { getOrder } from '../../src/services/fulfillment/orders-api';
import { readOrderHeader } from '../../src/services/order-documents';
import { added, created, FAST, ledger } from '../support/e2e';
import { RecordingOrchestrations } from '../support/orchestrations';

describe('an open order whose last entries wrote their records alone', () => {
  it('is shown by GET /api/orders/{orderId} at its last slot, with its total', async () => {
    const app = createEmbeddedApp(FAST);
    try {
      await app.sendLedger([
        ledger('B-1', [created('O-1', 'T-1'), added('O-1', 'T-2', 2, 2, 100), added('O-1', 'T-3', 3, 1, 50)]),
      ]);
      await app.drain();
      // The header is the snapshot of the order's OrderCreated.
      expect((await readOrderHeader(app.orders, 'O-1'))?.document.appliedSequence).toBe(1);
      const outcome = await getOrder(
        {
          orders: app.orders,
          orchestrations: new RecordingOrchestrations(),
          cancellationFeePercent: 10,
          now: Date.now,
        },
        'O-1',
      );
      expect(outcome).toMatchObject({
        kind: 'order',
        order: { status: 'open', appliedSequence: 3, total: 250, waitingFor: null },
      });
    } finally {
      await app.stop();
    }
  });
});
