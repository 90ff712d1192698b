/**
 * Stats.account says what became of each entry of the input, once, and adds
 * up; broker redeliveries and ledger messages are counted apart and do not move it.
 */
import { added, created, FAST, ledger, runToEnd } from '../support/e2e';

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
