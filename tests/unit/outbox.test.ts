/** The order's outbox (src/services/order-documents.ts): an effect stays until it is done. */
import { outboxAfter, outboxWithout, type Outbox } from '../../src/services/order-documents';
import type { ParkRequest } from '../../src/services/convoy/parking';

const park = (transactionId: string): ParkRequest => ({
  fromQueue: 'order-transactions',
  messageId: `${transactionId}:00`,
  sessionId: 'O-1',
  body: {},
  transactionId,
  reason: 'rejected',
  description: 'test',
});
const start = { orderId: 'O-1', customerId: 'C', currency: 'EUR', total: 1, lines: [], correlationId: null };

describe('the outbox', () => {
  it('a later write adds its effects to those pending, drops none, repeats none', () => {
    const first: Outbox = { parks: [park('T-2')], startFulfillment: start };
    const later = outboxAfter(first, { parks: [park('T-5'), park('T-2')], startFulfillment: null });
    expect(later).toEqual({ parks: [park('T-2'), park('T-5')], startFulfillment: start });
    expect(outboxAfter(null, { parks: [], startFulfillment: null })).toBeNull();
  });

  it('only what was done leaves it', () => {
    const pending: Outbox = { parks: [park('T-2'), park('T-5')], startFulfillment: start };
    expect(outboxWithout(pending, { parks: [park('T-2')], startFulfillment: null })).toEqual({
      parks: [park('T-5')],
      startFulfillment: start,
    });
    expect(outboxWithout(pending, pending)).toBeNull();
  });
});
