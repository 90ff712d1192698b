/**
 * docs/cli.md ("How a run ends"): the same input, seed and faults give the same report:
 * two runs with one seed give one report, with every fault that draws from the seed on at once.
 */
import type { Entry } from '../../src/domain/entry';
import type { LedgerInput } from '../../local/app';
import type { FaultSpec } from '../../local/faults';
import { FAST, runToEnd } from '../support/e2e';
import { generateWorkload } from '../support/workload';

/** Every fault drawn per call from the seed (the outages are measured in seconds, docs/cli.md). */
const SEEDED_FAULTS: FaultSpec = {
  duplicate: 0.2,
  crashAfterCommit: 0.1,
  transient: 0.15,
  reorder: 0.2,
  activityTransient: 0.2,
  activityResultLost: 0.2,
};

/** Stock for every sku the input names, more than all its orders take: no order waits on another. */
function ampleCatalog(inputs: readonly LedgerInput[]): Record<string, number> {
  const catalog: Record<string, number> = {};
  for (const input of inputs) {
    const body = input.body as { entries?: unknown };
    if (!Array.isArray(body.entries)) continue;
    for (const entry of body.entries as Entry[]) {
      if (entry.type === 'TransactionAdded' && typeof entry.data.sku === 'string') {
        catalog[entry.data.sku] = 1_000;
      }
    }
  }
  return catalog;
}

/** The report, and the counts of every fault injected and of what the broker and the host did. */
async function seededRun(seed: number, inputs: readonly LedgerInput[]) {
  const { report, broker, host, retried } = await runToEnd(inputs, {
    ...FAST,
    lockDurationMs: 20,
    sessionIdleTimeoutMs: 0,
    seed,
    faults: SEEDED_FAULTS,
    catalog: ampleCatalog(inputs),
    clock: { mode: 'virtual', start: 0 },
  });
  // Not the sessions held at once: how many pumps overlapped is the event loop's business.
  const { invocations, succeeded, failed, crashesInjected } = host;
  return { report, counts: { broker, invocations, succeeded, failed, crashesInjected, retried } };
}

describe('one seed, one report', () => {
  it.each([11])(
    'seed %i: two runs with every seeded fault give deep-equal reports and counts',
    async (seed) => {
      const { inputs } = generateWorkload({ seed, orders: 40, entriesPerOrder: 7 });
      // One after the other, so each run has the event loop to itself, as `npm start` has.
      const first = await seededRun(seed, inputs);
      const second = await seededRun(seed, inputs);
      const report = first.report;

      // The run did what the comparison is about: faults struck, sagas ran, stock was not scarce.
      expect(report.stats.redeliveries).toBeGreaterThan(0);
      expect(report.stats.duplicates).toBeGreaterThan(0);
      const sagas = report.orders.filter((order) => order.saga !== null);
      expect(sagas.length).toBeGreaterThan(20);
      expect(sagas.filter((order) => order.saga?.status === 'completed').length).toBeGreaterThan(0);

      expect(first.counts.crashesInjected).toBeGreaterThan(0);
      expect(first.counts.retried).toBeGreaterThan(0);

      expect(second.report).toEqual(first.report);
      expect(second.counts).toEqual(first.counts);
    },
    60_000,
  );
});
