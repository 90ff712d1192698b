/** The built-in downstream services (src/adapters/downstream.ts) against the rules of docs/saga.md. */
import { PermanentError } from '../../src/domain/errors';
import { StepFailedError, type StepFailureCode } from '../../src/domain/saga';
import { CATALOG, CREDIT_LIMIT, line, recordsOfKind, stockOf, world, type World } from '../support/saga';

async function refusal(promise: Promise<unknown>): Promise<StepFailedError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof StepFailedError) return error;
    throw error;
  }
  throw new Error('expected a StepFailedError, but the call succeeded');
}

async function expectRefused(promise: Promise<unknown>, code: StepFailureCode): Promise<StepFailedError> {
  const error = await refusal(promise);
  expect(error.code).toBe(code);
  expect(error).toBeInstanceOf(PermanentError);
  expect(error.kind).toBe('permanent');
  return error;
}

/** What each order holds of each sku, and what is left, for the skus given. */
async function stockSummary(
  w: World,
  skus: string[],
): Promise<Record<string, { available: number; holds: Record<string, number> } | undefined>> {
  const summary: Record<string, { available: number; holds: Record<string, number> } | undefined> = {};
  for (const sku of skus) {
    const stock = await stockOf(w, sku);
    summary[sku] = stock === undefined ? undefined : { available: stock.available, holds: stock.holds };
  }
  return summary;
}

describe('inventory', () => {
  it('holds each line quantity, aggregated per sku, seeding stock from the catalog on first use', async () => {
    const w = world();
    expect(await w.inventory.query({})).toEqual([]);

    const result = await w.downstream.inventory.reserve('O-1', [
      line('SKU-A', 2),
      line('SKU-B', 1),
      line('SKU-A', 3),
    ]);

    expect(result).toEqual({ reserved: { 'SKU-A': 5, 'SKU-B': 1 } });
    expect(await stockSummary(w, ['SKU-A', 'SKU-B', 'SKU-C'])).toEqual({
      'SKU-A': { available: CATALOG['SKU-A'] - 5, holds: { 'O-1': 5 } },
      'SKU-B': { available: CATALOG['SKU-B'] - 1, holds: { 'O-1': 1 } },
      // Never used: not seeded.
      'SKU-C': undefined,
    });
  });

  it('holds once when the same order reserves twice', async () => {
    const w = world();
    const lines = [line('SKU-A', 4), line('SKU-B', 2)];
    const first = await w.downstream.inventory.reserve('O-1', lines);
    const second = await w.downstream.inventory.reserve('O-1', lines);

    expect(second).toEqual(first);
    expect(await stockSummary(w, ['SKU-A', 'SKU-B'])).toEqual({
      'SKU-A': { available: 6, holds: { 'O-1': 4 } },
      'SKU-B': { available: 3, holds: { 'O-1': 2 } },
    });
  });

  it('keeps orders apart: each order holds its own quantity of a shared sku', async () => {
    const w = world();
    await w.downstream.inventory.reserve('O-1', [line('SKU-A', 4)]);
    await w.downstream.inventory.reserve('O-2', [line('SKU-A', 6)]);

    expect(await stockSummary(w, ['SKU-A'])).toEqual({
      'SKU-A': { available: 0, holds: { 'O-1': 4, 'O-2': 6 } },
    });
  });

  it('refuses an unknown sku with unknown-sku and holds nothing, even skus it reserved earlier in the call', async () => {
    const w = world();
    // SKU-A and SKU-B sort before ZZZ-UNKNOWN: they are reserved first, then must be given back.
    const error = await expectRefused(
      w.downstream.inventory.reserve('O-1', [line('SKU-A', 3), line('ZZZ-UNKNOWN', 1), line('SKU-B', 2)]),
      'unknown-sku',
    );
    expect(error.step).toBe('reserveInventory');
    expect(error.message).toContain('ZZZ-UNKNOWN');

    const summary = await stockSummary(w, ['SKU-A', 'SKU-B', 'ZZZ-UNKNOWN']);
    expect(summary['SKU-A']?.available ?? CATALOG['SKU-A']).toBe(CATALOG['SKU-A']);
    expect(summary['SKU-A']?.holds ?? {}).toEqual({});
    expect(summary['SKU-B']?.available ?? CATALOG['SKU-B']).toBe(CATALOG['SKU-B']);
    expect(summary['SKU-B']?.holds ?? {}).toEqual({});
    expect(summary['ZZZ-UNKNOWN']).toBeUndefined();

    // All of it is still there for another order.
    await expect(
      w.downstream.inventory.reserve('O-2', [
        line('SKU-A', CATALOG['SKU-A']),
        line('SKU-B', CATALOG['SKU-B']),
      ]),
    ).resolves.toEqual({ reserved: { 'SKU-A': CATALOG['SKU-A'], 'SKU-B': CATALOG['SKU-B'] } });
  });

  it('refuses a sku short of stock with out-of-stock and holds nothing', async () => {
    const w = world();
    // The aggregate (2 + 2 = 4) is over SKU-C's 3, though each line alone is not.
    const error = await expectRefused(
      w.downstream.inventory.reserve('O-1', [line('SKU-A', 3), line('SKU-C', 2), line('SKU-C', 2)]),
      'out-of-stock',
    );
    expect(error.step).toBe('reserveInventory');
    expect(error.message).toContain('SKU-C');

    const summary = await stockSummary(w, ['SKU-A', 'SKU-C']);
    expect(summary['SKU-A']).toEqual({ available: CATALOG['SKU-A'], holds: {} });
    expect(summary['SKU-C']?.available ?? CATALOG['SKU-C']).toBe(CATALOG['SKU-C']);
    expect(summary['SKU-C']?.holds ?? {}).toEqual({});
  });

  it('counts what other orders hold: out-of-stock when the rest is held elsewhere', async () => {
    const w = world();
    await w.downstream.inventory.reserve('O-1', [line('SKU-B', 4)]);
    await expectRefused(w.downstream.inventory.reserve('O-2', [line('SKU-B', 2)]), 'out-of-stock');
    expect(await stockSummary(w, ['SKU-B'])).toEqual({ 'SKU-B': { available: 1, holds: { 'O-1': 4 } } });
  });

  it('releases exactly what the order holds, and releasing twice is harmless', async () => {
    const w = world();
    await w.downstream.inventory.reserve('O-1', [line('SKU-A', 3), line('SKU-B', 2)]);
    await w.downstream.inventory.reserve('O-2', [line('SKU-A', 2)]);

    // Lines with other quantities: what is given back is what the order holds, not what the lines say.
    const released = await w.downstream.inventory.release('O-1', [line('SKU-A', 7), line('SKU-B', 1)]);
    expect(released).toEqual({ released: { 'SKU-A': 3, 'SKU-B': 2 } });
    const afterFirst = await stockSummary(w, ['SKU-A', 'SKU-B']);
    expect(afterFirst).toEqual({
      'SKU-A': { available: 8, holds: { 'O-2': 2 } },
      'SKU-B': { available: 5, holds: {} },
    });

    const again = await w.downstream.inventory.release('O-1', [line('SKU-A', 3), line('SKU-B', 2)]);
    expect(again).toEqual({ released: {} });
    expect(await stockSummary(w, ['SKU-A', 'SKU-B'])).toEqual(afterFirst);
  });

  it('releases nothing for an order that holds nothing', async () => {
    const w = world();
    await expect(w.downstream.inventory.release('O-9', [line('SKU-A', 1)])).resolves.toEqual({
      released: {},
    });
    expect((await stockOf(w, 'SKU-A'))?.available ?? CATALOG['SKU-A']).toBe(CATALOG['SKU-A']);
  });

  it('gives the last units to exactly one of two orders racing for them', async () => {
    for (let round = 0; round < 5; round++) {
      const w = world({ latencyMs: 1 });
      const outcomes = await Promise.allSettled([
        w.downstream.inventory.reserve('O-1', [line('SKU-B', 3), line('SKU-B', 2)]),
        w.downstream.inventory.reserve('O-2', [line('SKU-B', 5)]),
      ]);

      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      const lost = outcomes.filter((outcome) => outcome.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      const reason: unknown = lost[0].status === 'rejected' ? lost[0].reason : undefined;
      expect(reason).toBeInstanceOf(StepFailedError);
      expect((reason as StepFailedError).code).toBe('out-of-stock');

      const winner = outcomes[0].status === 'fulfilled' ? 'O-1' : 'O-2';
      expect(await stockSummary(w, ['SKU-B'])).toEqual({ 'SKU-B': { available: 0, holds: { [winner]: 5 } } });
    }
  });

  it('keeps all or nothing under a race across skus: the loser holds nothing of any sku', async () => {
    for (let round = 0; round < 5; round++) {
      const w = world({ latencyMs: 1 });
      const outcomes = await Promise.allSettled([
        w.downstream.inventory.reserve('O-1', [line('SKU-A', 4), line('SKU-C', 3)]),
        w.downstream.inventory.reserve('O-2', [line('SKU-C', 3)]),
      ]);
      const fulfilled = outcomes.map((outcome) => outcome.status === 'fulfilled');
      expect(fulfilled.filter(Boolean)).toHaveLength(1);

      const summary = await stockSummary(w, ['SKU-A', 'SKU-C']);
      if (fulfilled[0]) {
        expect(summary).toEqual({
          'SKU-A': { available: 6, holds: { 'O-1': 4 } },
          'SKU-C': { available: 0, holds: { 'O-1': 3 } },
        });
      } else {
        expect(summary['SKU-A']?.available ?? 10).toBe(10);
        expect(summary['SKU-A']?.holds ?? {}).toEqual({});
        expect(summary['SKU-C']).toEqual({ available: 0, holds: { 'O-2': 3 } });
      }
    }
  });

  it('does not hold twice when the same order reserves twice at the same time', async () => {
    const w = world({ latencyMs: 1 });
    const lines = [line('SKU-A', 4)];
    const results = await Promise.all([
      w.downstream.inventory.reserve('O-1', lines),
      w.downstream.inventory.reserve('O-1', lines),
    ]);
    expect(results).toEqual([{ reserved: { 'SKU-A': 4 } }, { reserved: { 'SKU-A': 4 } }]);
    expect(await stockSummary(w, ['SKU-A'])).toEqual({ 'SKU-A': { available: 6, holds: { 'O-1': 4 } } });
  });
});

describe('inventory: holds leave the stock once the order is fulfilled', () => {
  it('commit moves what the order holds out of the stock document; the stock stays taken', async () => {
    const w = world();
    await w.downstream.inventory.reserve('O-1', [line('SKU-A', 3), line('SKU-B', 2)]);
    await w.downstream.inventory.reserve('O-2', [line('SKU-A', 2)]);

    expect(await w.downstream.inventory.commit('O-1', [line('SKU-A', 3), line('SKU-B', 2)])).toEqual({
      committed: { 'SKU-A': 3, 'SKU-B': 2 },
    });
    expect(await stockSummary(w, ['SKU-A', 'SKU-B'])).toEqual({
      'SKU-A': { available: 5, holds: { 'O-2': 2 } },
      'SKU-B': { available: 3, holds: {} },
    });
    // Repeated, and a reservation repeated after it: nothing more is taken.
    expect(await w.downstream.inventory.commit('O-1', [line('SKU-A', 3)])).toEqual({ committed: {} });
    await w.downstream.inventory.reserve('O-1', [line('SKU-A', 3), line('SKU-B', 2)]);
    expect((await stockSummary(w, ['SKU-A']))['SKU-A']).toEqual({ available: 5, holds: { 'O-2': 2 } });
  });

  it('a release after commit gives the stock back once, however often it is asked', async () => {
    const w = world();
    await w.downstream.inventory.reserve('O-1', [line('SKU-A', 3), line('SKU-B', 2)]);
    await w.downstream.inventory.commit('O-1', [line('SKU-A', 3), line('SKU-B', 2)]);

    expect(await w.downstream.inventory.release('O-1', [line('SKU-A', 3), line('SKU-B', 2)])).toEqual({
      released: { 'SKU-A': 3, 'SKU-B': 2 },
    });
    expect(await w.downstream.inventory.release('O-1', [line('SKU-A', 3), line('SKU-B', 2)])).toEqual({
      released: {},
    });
    const stock = await stockOf(w, 'SKU-A');
    expect(stock).toMatchObject({ available: 10, holds: {} });
    expect(stock?.returned ?? {}).toEqual({});
  });

  it('a release cut short after giving stock back does not give it back again when retried', async () => {
    const w = world();
    await w.downstream.inventory.reserve('O-1', [line('SKU-A', 3)]);
    await w.downstream.inventory.commit('O-1', [line('SKU-A', 3)]);
    // The first write of a release landed (stock given back, marked), then the call died.
    const stored = await w.inventory.read<Record<string, unknown> & { id: string }>('SKU-A', 'SKU-A');
    if (stored === undefined) throw new Error('no stock');
    await w.inventory.replace(
      { ...stored.document, available: 10, returned: { 'O-1': 3 } },
      { ifMatch: stored.etag },
    );

    expect(await w.downstream.inventory.release('O-1', [line('SKU-A', 3)])).toEqual({
      released: { 'SKU-A': 3 },
    });
    await w.downstream.inventory.release('O-1', [line('SKU-A', 3)]);
    expect(await stockOf(w, 'SKU-A')).toMatchObject({ available: 10, holds: {}, returned: {} });
  });
});

describe('payments', () => {
  it('refuses a charge over the credit limit with over-credit-limit and records no charge', async () => {
    const w = world();
    const error = await expectRefused(
      w.downstream.payments.charge('O-1', 'C-1', CREDIT_LIMIT + 1, 'EUR'),
      'over-credit-limit',
    );
    expect(error.step).toBe('chargePayment');
    expect(await recordsOfKind(w, 'charge')).toEqual([]);
  });

  it('accepts a charge of exactly the limit, and the limit is per charge, not a running balance', async () => {
    const w = world();
    await expect(w.downstream.payments.charge('O-1', 'C-1', CREDIT_LIMIT, 'EUR')).resolves.toEqual({
      chargeId: 'charge:O-1',
      amount: CREDIT_LIMIT,
    });
    await expect(w.downstream.payments.charge('O-2', 'C-1', CREDIT_LIMIT, 'EUR')).resolves.toMatchObject({
      amount: CREDIT_LIMIT,
    });
    expect(await recordsOfKind(w, 'charge')).toHaveLength(2);
  });

  it('charges once when asked twice, returning the first charge', async () => {
    const w = world();
    const first = await w.downstream.payments.charge('O-1', 'C-1', 250, 'EUR');
    const second = await w.downstream.payments.charge('O-1', 'C-1', 250, 'EUR');

    expect(second).toEqual(first);
    // A repeat answers with the charge made, whatever it is asked.
    await expect(w.downstream.payments.charge('O-1', 'C-1', 300, 'EUR')).resolves.toEqual(first);
    const charges = await recordsOfKind(w, 'charge');
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatchObject({ orderId: 'O-1', customerId: 'C-1', amount: 250, currency: 'EUR' });
  });

  it('sets the refund rather than adding to it, capped by the charge', async () => {
    const w = world();
    await w.downstream.payments.charge('O-1', 'C-1', 500, 'EUR');

    await expect(w.downstream.payments.refund('O-1', 200)).resolves.toEqual({ refunded: 200 });
    await expect(w.downstream.payments.refund('O-1', 200)).resolves.toEqual({ refunded: 200 });
    expect((await recordsOfKind(w, 'charge'))[0]).toMatchObject({ amount: 500, refunded: 200 });

    await expect(w.downstream.payments.refund('O-1', 450)).resolves.toEqual({ refunded: 450 });
    expect((await recordsOfKind(w, 'charge'))[0]).toMatchObject({ refunded: 450 });

    await expect(w.downstream.payments.refund('O-1', 9999)).resolves.toEqual({ refunded: 500 });
    expect((await recordsOfKind(w, 'charge'))[0]).toMatchObject({ amount: 500, refunded: 500 });
  });

  it('refunds nothing when there was no charge', async () => {
    const w = world();
    await expect(w.downstream.payments.refund('O-1', 100)).resolves.toEqual({ refunded: 0 });
    expect(await recordsOfKind(w, 'charge')).toEqual([]);
  });
});

describe('shipping', () => {
  const capacity = { primary: 5, alternate: 10 };

  it('the primary carrier refuses over its capacity, and the alternate books', async () => {
    const w = world({ carrierCapacity: capacity });
    const lines = [line('SKU-A', 4), line('SKU-B', 3)];

    const error = await expectRefused(
      w.downstream.shipping.book('O-1', 'primary', lines),
      'carriers-refused',
    );
    expect(error.step).toBe('createShipment');
    expect(await recordsOfKind(w, 'shipment')).toEqual([]);

    await expect(w.downstream.shipping.book('O-1', 'alternate', lines)).resolves.toEqual({
      shipmentId: 'shipment:O-1',
      carrier: 'alternate',
    });
    const shipments = await recordsOfKind(w, 'shipment');
    expect(shipments).toHaveLength(1);
    expect(shipments[0]).toMatchObject({ orderId: 'O-1', carrier: 'alternate', status: 'booked' });
  });

  it('books with the primary carrier within its capacity', async () => {
    const w = world({ carrierCapacity: capacity });
    await expect(w.downstream.shipping.book('O-1', 'primary', [line('SKU-A', 5)])).resolves.toEqual({
      shipmentId: 'shipment:O-1',
      carrier: 'primary',
    });
  });

  it('uses the default capacities (primary 20, alternate 60) when none are given', async () => {
    const w = world();
    await expect(w.downstream.shipping.book('O-1', 'primary', [line('SKU-A', 20)])).resolves.toMatchObject({
      carrier: 'primary',
    });
    await expectRefused(
      w.downstream.shipping.book('O-2', 'primary', [line('SKU-A', 21)]),
      'carriers-refused',
    );
    await expectRefused(
      w.downstream.shipping.book('O-2', 'alternate', [line('SKU-A', 61)]),
      'carriers-refused',
    );
  });

  it('both carriers refuse an order over both capacities with carriers-refused', async () => {
    const w = world({ carrierCapacity: capacity });
    const lines = [line('SKU-A', 11)];
    await expectRefused(w.downstream.shipping.book('O-1', 'primary', lines), 'carriers-refused');
    await expectRefused(w.downstream.shipping.book('O-1', 'alternate', lines), 'carriers-refused');
    expect(await recordsOfKind(w, 'shipment')).toEqual([]);
  });

  it('books once when asked twice', async () => {
    const w = world({ carrierCapacity: capacity });
    const lines = [line('SKU-A', 2)];
    const first = await w.downstream.shipping.book('O-1', 'primary', lines);
    const second = await w.downstream.shipping.book('O-1', 'primary', lines);
    expect(second).toEqual(first);
    // Asked again with the other carrier, the first booking stands.
    await expect(w.downstream.shipping.book('O-1', 'alternate', lines)).resolves.toEqual(first);
    const shipments = await recordsOfKind(w, 'shipment');
    expect(shipments).toHaveLength(1);
    expect(shipments[0]).toMatchObject({ carrier: 'primary', status: 'booked' });
  });

  it('cancels a shipment, and cancelling again is harmless', async () => {
    const w = world({ carrierCapacity: capacity });
    await w.downstream.shipping.book('O-1', 'primary', [line('SKU-A', 2)]);

    await expect(w.downstream.shipping.cancel('O-1')).resolves.toEqual({ cancelled: true });
    await expect(w.downstream.shipping.cancel('O-1')).resolves.toEqual({ cancelled: true });
    const shipments = await recordsOfKind(w, 'shipment');
    expect(shipments).toHaveLength(1);
    expect(shipments[0]).toMatchObject({ orderId: 'O-1', status: 'cancelled' });
  });

  it('cancelling a shipment that was never booked reports nothing cancelled', async () => {
    const w = world();
    await expect(w.downstream.shipping.cancel('O-1')).resolves.toEqual({ cancelled: false });
    expect(await recordsOfKind(w, 'shipment')).toEqual([]);
  });
});

describe('confirmations', () => {
  it('sends one confirmation per order however often asked', async () => {
    const w = world();
    const first = await w.downstream.confirmations.send('O-1', 'C-1', 250, 'EUR');
    const second = await w.downstream.confirmations.send('O-1', 'C-1', 250, 'EUR');

    expect(first).toEqual({ confirmationId: 'confirmation:O-1' });
    expect(second).toEqual(first);
    const confirmations = await recordsOfKind(w, 'confirmation');
    expect(confirmations).toHaveLength(1);
    expect(confirmations[0]).toMatchObject({
      orderId: 'O-1',
      customerId: 'C-1',
      total: 250,
      currency: 'EUR',
    });
  });
});
