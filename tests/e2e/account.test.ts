/**
 * Stats.account says what became of each entry of the input, once, and adds
 * up; broker redeliveries and ledger messages are counted apart and do not move it.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createEmbeddedApp, type LedgerInput } from '../../local/app';
import type { Report } from '../../local/report';
import { readInputFile } from '../../local/cli/input-file';
import { expectAccountAddsUp } from '../support/account';
import { added, created, FAST, ledger, runToEnd, SAMPLE_PATH } from '../support/e2e';
import { generateWorkload } from '../support/workload';

const catalogPath = join(dirname(SAMPLE_PATH), 'catalog.json');
const SAMPLE_CATALOG = JSON.parse(readFileSync(catalogPath, 'utf8')) as Record<string, number>;

/** Runs the inputs to the end and gives the report, unchecked: the caller checks the account. */
async function reportOf(
  inputs: readonly LedgerInput[],
  options: Parameters<typeof createEmbeddedApp>[0],
): Promise<Report> {
  const app = createEmbeddedApp({ ...FAST, ...options });
  try {
    await app.sendLedger(inputs);
    await app.drain();
    return await app.report();
  } finally {
    await app.stop();
  }
}

/** The dead letters of order-transactions: each an entry's message. */
const entryDeadLetters = (report: Report): number =>
  report.deadLettered.filter((message) => message.queue === 'order-transactions').length;

describe('stats.account', () => {
  const inputs = [
    ledger('B-1', [created('O-1', 'T-1', 1), added('O-1', 'T-2', 2), { broken: true }]),
    // T-2 again, exactly: a duplicate; T-4 waits behind the missing 3; T-9 is rejected (no order to add to).
    ledger('B-2', [added('O-1', 'T-2', 2), added('O-1', 'T-4', 4), added('O-X', 'T-9', 1)]),
    // Parked whole: no batchId. Its one entry is accounted as parked.
    { messageId: 'B-3', sessionId: 'main', body: { entries: [created('O-3', 'T-31', 1)] } },
  ];

  it('accounts for every entry once, the same with faults that redeliver', async () => {
    const clean = await runToEnd(inputs, FAST);
    expect(clean.report.stats.account).toEqual({
      entries: 7,
      applied: 2,
      duplicate: 1,
      parked: 3,
      buffered: 1,
      deadLettered: 0,
      droppedByDuplicateDetection: 0,
    });
    expect(clean.report.stats).toMatchObject({
      ledgerMessages: 3,
      ledgerMessagesParkedWhole: 1,
      buffered: 1,
    });

    const faulty = await runToEnd(inputs, {
      ...FAST,
      seed: 5,
      faults: { duplicate: 0.5, crashAfterCommit: 0.3 },
    });
    expect(faulty.report.stats.account).toEqual(clean.report.stats.account);
    expect(faulty.report.stats.redeliveries).toBeGreaterThan(0);
  });

  it('reads the input from accountInputs when given (npm start rereads its file), each report once', async () => {
    const kept = await runToEnd(inputs, FAST);
    let readings = 0;
    const reread = await runToEnd(inputs, {
      ...FAST,
      accountInputs: function* () {
        readings += 1;
        yield* inputs;
      },
    });
    expect(readings).toBe(1);
    expect(reread.report).toEqual(kept.report);

    // The account is of the input given, not of what was sent: here it is given two of the three.
    const partial = await runToEnd(inputs, { ...FAST, accountInputs: () => inputs.slice(0, 2) });
    expect(partial.report.stats.account).toEqual({ ...kept.report.stats.account, entries: 6, parked: 2 });
    expect(partial.report.stats).toMatchObject({ ledgerMessages: 2, ledgerMessagesParkedWhole: 0 });
  });
});

describe('stats.account under heavy crash-after-commit', () => {
  // Crashes after every commit, 8 times in 10: some messages use up their deliveries after their
  // write committed, and the dead-letter queue holds them although their effect is there.
  const heavy = { seed: 1, faults: { crashAfterCommit: 0.8 } };

  it('the sample: an entry whose effect committed is counted once, by that outcome, and its dead letter noted', async () => {
    const inputs = [...readInputFile(SAMPLE_PATH)];
    const clean = await reportOf(inputs, { catalog: SAMPLE_CATALOG });
    const faulty = await reportOf(inputs, { ...heavy, catalog: SAMPLE_CATALOG });
    // The run holds dead letters of entries whose write committed (its orders equal the clean run's).
    expect(entryDeadLetters(faulty)).toBeGreaterThan(0);
    expect(faulty.orders).toEqual(clean.orders);
    expect(faulty.stats.account).toEqual(clean.stats.account);
    expect(faulty.stats.account).toEqual({
      entries: 33,
      applied: 22,
      duplicate: 2,
      parked: 8,
      buffered: 1,
      deadLettered: 0,
      droppedByDuplicateDetection: 0,
    });
    // Every dead letter of an entry is of one whose outcome had committed: each noted, none counted twice.
    expectAccountAddsUp(faulty, { deadLetteredAfterOutcome: entryDeadLetters(faulty) });
  });

  it('a workload of about a hundred entries: the account of the run without faults, every dead letter noted once', async () => {
    const { inputs } = generateWorkload({ seed: 3, orders: 14, entriesPerOrder: 6 });
    const clean = await reportOf(inputs, {});
    const faulty = await reportOf(inputs, heavy);
    expect(entryDeadLetters(faulty)).toBeGreaterThan(0);
    expect(faulty.orders).toEqual(clean.orders);
    expect(faulty.stats.account).toEqual(clean.stats.account);
    expectAccountAddsUp(faulty, { deadLetteredAfterOutcome: entryDeadLetters(faulty) });
  });
});

describe('stats.account and duplicate detection on ledger', () => {
  const batch = (orderId: string): LedgerInput =>
    ledger('B1', [created(orderId, `T-${orderId}-1`), added(orderId, `T-${orderId}-2`, 2)]);

  it('a batch dropped under a reused messageId with other content is counted as dropped, not as duplicates', async () => {
    const { report } = await runToEnd([batch('O-1'), batch('O-2')], FAST);
    expect(report.orders.map((order) => order.orderId)).toEqual(['O-1']);
    expect(report.stats.account).toEqual({
      entries: 4,
      applied: 2,
      duplicate: 0,
      parked: 0,
      buffered: 0,
      deadLettered: 0,
      droppedByDuplicateDetection: 2,
    });
  });

  it('an exact repeat under the same messageId stays duplicate; an entry it shares with the first, too', async () => {
    const shared = created('O-1', 'T-O-1-1');
    const { report } = await runToEnd(
      [batch('O-1'), batch('O-1'), ledger('B1', [shared, added('O-3', 'T-O-3-1', 1)])],
      FAST,
    );
    expect(report.stats.account).toEqual({
      entries: 6,
      applied: 2,
      duplicate: 3,
      parked: 0,
      buffered: 0,
      deadLettered: 0,
      droppedByDuplicateDetection: 1,
    });
  });
});
