/**
 * docs/cli.md: with any of the faults the orders and the parked list equal those of the run without
 * them (for `reorder`, on input where no two entries compete for one slot or transactionId).
 */
import { readInputFile } from '../../local/cli/input-file';
import type { FaultSpec } from '../../local/faults';
import type { Report } from '../../local/report';
import { added, created, FAST, ledger, runToEnd, SAMPLE_PATH, type RunResult } from '../support/e2e';
import { generateWorkload } from '../support/workload';

const EVERY_FAULT: FaultSpec = { duplicate: 0.2, crashAfterCommit: 0.1, transient: 0.1, reorder: 0.3 };
const ORDER_KEEPING_FAULTS: FaultSpec = { duplicate: 0.2, crashAfterCommit: 0.1, transient: 0.1 };
const SEEDS = [3, 17, 2024];

const reasons = (report: Report): Set<string> => new Set(report.parked.map((parked) => parked.reason));

/** Both runs of one input at once: separate apps, so they share nothing but the event loop. */
async function withAndWithout(
  inputs: Parameters<typeof runToEnd>[0],
  seed: number,
  faults: FaultSpec,
): Promise<{ clean: RunResult; faulty: RunResult }> {
  const [clean, faulty] = await Promise.all([
    runToEnd(inputs, { ...FAST, seed }),
    runToEnd(inputs, { ...FAST, seed, faults }),
  ]);
  return { clean, faulty };
}

function expectSameOutcome(clean: RunResult, faulty: RunResult): void {
  expect(faulty.report.orders).toEqual(clean.report.orders);
  expect(faulty.report.parked).toEqual(clean.report.parked);
  expect(clean.report.deadLettered).toEqual([]);
  expect(faulty.report.deadLettered).toEqual([]);
  expect(new Set(faulty.submitted)).toEqual(new Set(clean.submitted));
}

function expectFaultsInjected(faulty: RunResult): void {
  expect(faulty.host.crashesInjected).toBeGreaterThan(0);
  expect(
    Object.values(faulty.broker).reduce((sum, queue) => sum + queue.redeliveredByFault, 0),
  ).toBeGreaterThan(0);
  // Injected transient store failures are tried again inside the delivery (src/services/backoff.ts).
  expect(faulty.retried).toBeGreaterThan(0);
}

describe.each(SEEDS)('generated workload, seed %i', (seed) => {
  it('every fault on, reorder included: same orders and parked list as without faults', async () => {
    const workload = generateWorkload({ seed });
    const { clean, faulty } = await withAndWithout(workload.inputs, seed, EVERY_FAULT);

    // The workload does what it says, so the comparison covers every outcome.
    const gap = clean.report.orders.find((order) => order.orderId === workload.gapOrder);
    expect(gap).toMatchObject({ waitingFor: 3, appliedSequence: 2 });
    expect(reasons(clean.report)).toEqual(new Set(['invalid', 'rejected']));
    const parkedIds = clean.report.parked.map((parked) => parked.messageId);
    expect(parkedIds).toEqual(expect.arrayContaining([...workload.rejected, 'WB-BROKEN']));
    expect(clean.report.parked.filter((parked) => parked.reason === 'rejected')).toHaveLength(
      workload.rejected.length,
    );
    expect(clean.report.parked.filter((parked) => parked.transactionId?.endsWith('-BAD'))).toHaveLength(
      workload.invalid.length,
    );
    expect(clean.report.orders.map((order) => order.status)).toEqual(
      expect.arrayContaining(['submitted', 'open', 'deleted']),
    );
    expect(clean.report.stats.duplicates).toBeGreaterThanOrEqual(4);

    expectSameOutcome(clean, faulty);
    expectFaultsInjected(faulty);
    // Held-back sends overtaken by later entries of their order: the buffer put them back in order.
    expect(faulty.buffered).toBeGreaterThan(clean.buffered);
  });

  it('with competing entries, every order-keeping fault on: same orders and parked list', async () => {
    const workload = generateWorkload({ seed, competing: true });
    const { clean, faulty } = await withAndWithout(workload.inputs, seed, ORDER_KEEPING_FAULTS);

    const parked = new Map(clean.report.parked.map((p) => [p.messageId, p.reason]));
    expect(parked.get(workload.digestMismatch ?? '')).toBe('digest-mismatch');
    expect(parked.get(workload.sequenceConflict ?? '')).toBe('sequence-conflict');

    expectSameOutcome(clean, faulty);
    expectFaultsInjected(faulty);
  });
});

describe('the sample file', () => {
  const inputs = [...readInputFile(SAMPLE_PATH)];

  it.each(SEEDS)(
    'seed %i, duplicate, crashAfterCommit and transient on: same orders and parked list',
    async (seed) => {
      const { clean, faulty } = await withAndWithout(inputs, seed, ORDER_KEEPING_FAULTS);
      expect(reasons(clean.report)).toEqual(
        new Set(['invalid', 'rejected', 'digest-mismatch', 'sequence-conflict']),
      );
      expectSameOutcome(clean, faulty);
      expect(faulty.host.crashesInjected + faulty.retried).toBeGreaterThan(0);
    },
  );
});

describe('reorder with several ledger streams forwarding at once', () => {
  it('loses no order: 12 whole-order batches over main, east and west, reorder=0.9 seed 1', async () => {
    const inputs = ['main', 'east', 'west'].flatMap((stream) =>
      [0, 1, 2, 3].map((n) => {
        const orderId = `O-${stream}-${n}`;
        const entries = [
          created(orderId, `${orderId}-t1`, 1),
          added(orderId, `${orderId}-t2`, 2),
          added(orderId, `${orderId}-t3`, 3),
          added(orderId, `${orderId}-t4`, 4, 1, 100, true),
        ];
        return { ...ledger(`B-${orderId}`, entries), sessionId: stream };
      }),
    );
    const { clean, faulty } = await withAndWithout(inputs, 1, { reorder: 0.9 });
    expect(clean.report.orders.map((order) => order.orderId)).toHaveLength(12);
    expectSameOutcome(clean, faulty);
  });
});
