/**
 * Money stays exact (docs/messages.md, the order of checks, 6): an entry whose line amount
 * (`quantity * unitPrice`) or whose order's resulting total would pass 2^53 - 1 minor units is
 * rejected, naming the amount, so an order's total is always the exact sum of its lines and a charge
 * is never zero or negative for lines that sum to more than zero.
 */
import { added, amended, created, FAST, ledger, runToEnd } from '../support/e2e';

const MAX = Number.MAX_SAFE_INTEGER;

describe('money is exact', () => {
  it('rejects a line whose amount passes 2^53 - 1, so a later amendment cannot bring the total to zero', async () => {
    const { report, submitted } = await runToEnd(
      [
        ledger('B-1', [
          created('O-M', 'T-1'),
          added('O-M', 'big', 2, MAX, MAX),
          added('O-M', 'real', 3, 3, 25_000),
          amended('O-M', 'T-4', 4, 'big', { quantity: 1, unitPrice: 0 }),
          added('O-M', 'T-5', 5, 1, 100, true),
        ]),
      ],
      FAST,
    );
    const order = report.orders.find((o) => o.orderId === 'O-M');
    expect(order).toMatchObject({ status: 'submitted', total: 75_100 });
    expect(order?.lines.map((l) => l.transactionId)).toEqual(['real', 'T-5']);
    const rejected = new Map(
      report.parked.filter((p) => p.reason === 'rejected').map((p) => [p.transactionId, p.description]),
    );
    expect([...rejected.keys()].sort()).toEqual(['T-4', 'big']);
    expect(rejected.get('big')).toContain(`${BigInt(MAX) * BigInt(MAX)}`);
    // The saga starts with the header's total: what it charges.
    expect(submitted).toEqual(['O-M']);
  });

  it('rejects a line that would take the total past 2^53 - 1, and an amendment that would', async () => {
    const { report } = await runToEnd(
      [
        ledger('B-1', [
          created('O-T', 'T-1'),
          added('O-T', 'T-2', 2, 1, MAX - 10),
          added('O-T', 'T-3', 3, 1, 11),
          added('O-T', 'T-4', 4, 1, 10),
          created('O-A', 'A-1'),
          added('O-A', 'A-2', 2, 1, 2 ** 52),
          amended('O-A', 'A-3', 3, 'A-2', { quantity: 2 }),
          amended('O-A', 'A-4', 4, 'A-2', { unitPrice: 2 ** 52 - 1 }, true),
        ]),
      ],
      FAST,
    );
    expect(report.orders.find((o) => o.orderId === 'O-T')).toMatchObject({ total: MAX });
    expect(report.orders.find((o) => o.orderId === 'O-A')).toMatchObject({
      status: 'submitted',
      total: 2 ** 52 - 1,
    });
    const rejected = report.parked.filter((p) => p.reason === 'rejected');
    expect(rejected.map((p) => p.transactionId).sort()).toEqual(['A-3', 'T-3']);
    for (const park of rejected) expect(park.description).toMatch(/2\^53 - 1/);
  });
});
