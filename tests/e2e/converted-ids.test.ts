/**
 * Ids the Node worker converts (ISSUE 14, section 2). On Azure `@azure/functions` runs every string of
 * the trigger metadata through `tryJsonParse` (azure-functions-nodejs-library
 * `src/converters/fromRpcTypedData.ts`): a sessionId "12345678901234567890" reaches the handler as
 * the number 12345678901234567000, "007" as 7, "true" as a boolean, "null" as null. The embedded host
 * now invokes through that very code, so these orders go through what Azure would do to them.
 */
import { created, added, FAST, ledger, runToEnd } from '../support/e2e';

const IDS = ['12345', '007', '1e3', '1.50', '12345678901234567890', 'true', 'null'];
const CATALOG = Object.fromEntries(IDS.map((id) => [`SKU-${id}-t2`, 10]));

describe('ids the worker converts', () => {
  it('end as ordinary ids do: every order applied and submitted, its saga completed, nothing parked', async () => {
    const entries = IDS.flatMap((id) => [created(id, `${id}`), added(id, `${id}-t2`, 2, 1, 100, true)]);
    const inputs = [ledger('null', entries)];
    const { report, submitted } = await runToEnd(inputs, {
      ...FAST,
      catalog: CATALOG,
      clock: { mode: 'virtual' },
    });

    expect(report.parked).toEqual([]);
    expect(report.deadLettered).toEqual([]);
    expect([...submitted].sort()).toEqual([...IDS].sort());
    const byId = new Map(report.orders.map((order) => [order.orderId, order]));
    for (const id of IDS) {
      expect(byId.get(id)).toMatchObject({ orderId: id, status: 'submitted', saga: { status: 'completed' } });
    }
  });

  it('keeps a ledger batch whose id the worker converts: a broken body is parked under its own id', async () => {
    const inputs = IDS.map((id) => ({ messageId: id, sessionId: 'main', body: { batchId: id } }));
    const { report } = await runToEnd(inputs, FAST);

    expect(report.parked.map((parked) => parked.messageId).sort()).toEqual([...IDS].sort());
  });
});
