/**
 * What `npm start`'s app keeps while it runs: the metric totals and a bounded
 * tail of telemetry rather than every record, and no finished orchestration past the next purge;
 * the report is the same as an app that keeps everything.
 */
import { createEmbeddedApp, type EmbeddedApp } from '../../local/app';
import { START_RETENTION } from '../../local/cli/start';
import { createRecordingTelemetry } from '../../local/recording-telemetry';
import { added, created, FAST, ledger } from '../support/e2e';

const ORDERS = ['R-1', 'R-2', 'R-3', 'R-4'];
const CATALOG = Object.fromEntries(ORDERS.map((id) => [`SKU-${id}-t2`, 5]));

async function run(app: EmbeddedApp): Promise<Awaited<ReturnType<EmbeddedApp['report']>>> {
  await app.sendLedger([
    ledger(
      'B-R',
      ORDERS.flatMap((id) => [created(id, `${id}-t1`), added(id, `${id}-t2`, 2, 1, 100, true)]),
    ),
  ]);
  await app.drain();
  return app.report();
}

describe("npm start's retention", () => {
  it('purges every finished orchestration at the next purge and reports the same run', async () => {
    const kept = createEmbeddedApp({ ...FAST, catalog: CATALOG, clock: { mode: 'virtual' } });
    const lean = createEmbeddedApp({
      ...FAST,
      ...START_RETENTION,
      catalog: CATALOG,
      clock: { mode: 'virtual' },
    });
    try {
      const expected = await run(kept);
      const report = await run(lean);
      // The app's own purge timer runs every second of real time too: on a slow machine it may
      // have purged some already, so the count is the driver's, whoever purged them.
      lean.purgeFinished();
      expect(lean.durable.stats().instancesPurged).toBe(ORDERS.length);
      expect(lean.durable.instances()).toEqual([]);
      expect(await lean.report()).toEqual(expected);
      expect(report).toEqual(expected);
      expect(lean.telemetry.total('entries.applied')).toBe(kept.telemetry.total('entries.applied'));
    } finally {
      await kept.stop();
      await lean.stop();
    }
  });
});

describe('recording telemetry without every record', () => {
  it('keeps exact totals and at most twice its tail of the latest traces and events', () => {
    const telemetry = createRecordingTelemetry({ keepRecords: false, tail: 10 });
    for (let i = 0; i < 1000; i++) {
      telemetry.trace('information', `trace ${i}`);
      telemetry.event('E', { i });
      telemetry.metric('entries.applied', 2);
      expect(telemetry.traces.length).toBeLessThanOrEqual(20);
      expect(telemetry.events.length).toBeLessThanOrEqual(20);
    }
    expect(telemetry.traces.length).toBeGreaterThanOrEqual(10);
    expect(telemetry.traces.at(-1)?.message).toBe('trace 999');
    expect(telemetry.events.at(-1)?.properties).toEqual({ i: 999 });
    expect(telemetry.total('entries.applied')).toBe(2000);
    expect(() => telemetry.total('entries.applied', () => true)).toThrow(/totals only/);
  });

  it('keeps every record by default', () => {
    const telemetry = createRecordingTelemetry();
    for (let i = 0; i < 5000; i++) telemetry.trace('information', `trace ${i}`);
    expect(telemetry.traces).toHaveLength(5000);
  });
});
