/**
 * docs/cli.md, outages: with a dependency down for a minute and more (`storeOutage`, `sendOutage`,
 * `durableOutage`), alone or with every other fault, the run ends as the run without faults, and
 * nothing is dead-lettered. The convoy's clock runs 1000 times faster than real time, so the
 * 90-second outages and the handlers' backoff take milliseconds.
 */
import { readFileSync } from 'node:fs';
import { readInputFile } from '../../local/cli/input-file';
import type { FaultSpec } from '../../local/faults';
import { FAST, runToEnd, SAMPLE_PATH, type RunResult } from '../support/e2e';

const inputs = [...readInputFile(SAMPLE_PATH)];
const CATALOG = JSON.parse(
  readFileSync(SAMPLE_PATH.replace('ledger.ndjson', 'catalog.json'), 'utf8'),
) as Record<string, number>;
const FASTER = { ...FAST, catalog: CATALOG, timeScale: 1000 };
/** Longer than the 60 seconds the app must ride out, shorter than one delivery's backoff (180 s). */
const OUTAGE_SECONDS = 90;

function sagas(run: RunResult): Array<[string, unknown]> {
  return run.report.orders.map((order) => [order.orderId, order.saga]);
}

function expectFaultFree(clean: RunResult, faulty: RunResult): void {
  expect(faulty.report.deadLettered).toEqual([]);
  expect(faulty.report.orders).toEqual(clean.report.orders);
  expect(faulty.report.parked).toEqual(clean.report.parked);
  expect(sagas(faulty)).toEqual(sagas(clean));
}

describe.each([1, 7])('the sample, seed %i', (seed) => {
  let clean: RunResult;
  beforeAll(async () => {
    clean = await runToEnd(inputs, { ...FASTER, seed });
    expect(clean.report.deadLettered).toEqual([]);
    expect(clean.report.orders.some((order) => order.saga !== null)).toBe(true);
  });

  it.each(['storeOutage', 'sendOutage', 'durableOutage'] as const)(
    `%s=${OUTAGE_SECONDS}: ridden out within each delivery, nothing dead-lettered, the same run`,
    async (outage) => {
      const faulty = await runToEnd(inputs, { ...FASTER, seed, faults: { [outage]: OUTAGE_SECONDS } });
      expectFaultFree(clean, faulty);
      // The outage did hit: calls failed while it lasted...
      expect(faulty.outages[outage]).toBeGreaterThan(0);
      // ...and no delivery gave its message back: each waited inside the handler until it passed.
      expect(faulty.host.failed).toBe(0);
      expect(faulty.retried).toBeGreaterThan(0);
    },
  );

  it('every outage at once, with every other fault: the same run, nothing dead-lettered', async () => {
    const faults: FaultSpec = {
      storeOutage: OUTAGE_SECONDS,
      sendOutage: OUTAGE_SECONDS,
      durableOutage: OUTAGE_SECONDS,
      duplicate: 0.2,
      crashAfterCommit: 0.1,
      transient: 0.1,
    };
    const faulty = await runToEnd(inputs, { ...FASTER, seed, faults });
    expectFaultFree(clean, faulty);
    expect(
      faulty.outages.storeOutage + faulty.outages.sendOutage + faulty.outages.durableOutage,
    ).toBeGreaterThan(0);
  });
});

describe('the outage the app rides out', () => {
  it("25 minutes of store outage, past one delivery's 3 minutes of backoff: ridden out over redeliveries", async () => {
    const clean = await runToEnd(inputs, { ...FASTER, seed: 1 });
    const faulty = await runToEnd(inputs, { ...FASTER, seed: 1, faults: { storeOutage: 25 * 60 } });
    expectFaultFree(clean, faulty);
    // Deliveries did give their messages back (each after 3 minutes of waiting), and came back.
    expect(faulty.host.failed).toBeGreaterThan(0);
  });
});
