/**
 * The embedded driver does not keep every instance and its history for ever: the
 * app purges finished orchestrations past a retention, by the Durable extension's purge with filters
 * (HttpApiHandler.cs `HandleDeleteHistoryWithFiltersRequestAsync`: created before a time, in the
 * given statuses). Before this, a run of N orders kept N instances with all their history.
 */
import { createEmbeddedApp } from '../../local/app';
import { added, created, FAST, ledger } from '../support/e2e';
import { expectAccountAddsUp } from '../support/account';

const ORDERS = ['P-1', 'P-2', 'P-3'];

function batch(): ReturnType<typeof ledger> {
  return ledger(
    'B-P',
    ORDERS.flatMap((id) => [created(id, `${id}-t1`), added(id, `${id}-t2`, 2, 1, 100, true)]),
  );
}

describe('purging finished orchestrations', () => {
  it('drops finished instances and their history past the retention; the report still has every saga', async () => {
    const app = createEmbeddedApp({
      ...FAST,
      catalog: Object.fromEntries(ORDERS.map((id) => [`SKU-${id}-t2`, 5])),
      clock: { mode: 'virtual' },
      purgeFinishedAfterMs: 0,
    });
    try {
      await app.sendLedger([batch()]);
      await app.drain();
      expect(app.durable.instances().map((instance) => instance.runtimeStatus)).toEqual([
        'Completed',
        'Completed',
        'Completed',
      ]);
      expect(app.purgeFinished()).toBe(3);
      expect(app.durable.instances()).toEqual([]);
      expect(app.durable.stats().instancesPurged).toBe(3);
      const report = await app.report();
      expectAccountAddsUp(report);
      expect(report.orders.map((order) => order.saga?.status)).toEqual([
        'completed',
        'completed',
        'completed',
      ]);
    } finally {
      await app.stop();
    }
  });

  it('keeps everything when no retention is set', async () => {
    const app = createEmbeddedApp({ ...FAST, catalog: { 'SKU-P-1-t2': 5 }, clock: { mode: 'virtual' } });
    try {
      await app.sendLedger([
        ledger('B-1', [created('P-1', 'P-1-t1'), added('P-1', 'P-1-t2', 2, 1, 100, true)]),
      ]);
      await app.drain();
      expect(app.purgeFinished()).toBe(0);
      expect(app.durable.instances()).toHaveLength(1);
    } finally {
      await app.stop();
    }
  });
});
