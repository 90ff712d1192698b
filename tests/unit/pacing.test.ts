/** `npm start` feeds the ledger as the app takes it (local/cli/pacing.ts). */
import { backlogOf, hasRoom, waitForRoom, type Backlog } from '../../local/cli/pacing';
import { createEmbeddedApp } from '../../local/app';
import { added, created, FAST, ledger } from '../support/e2e';

describe('pacing the input', () => {
  it('counts what is in flight on the ledger and order-transactions queues, and the unpurged sagas', async () => {
    // The broker's duplicate fault completes copies the counters count as sent once: the active
    // message count, not sent less completed, says what is in flight.
    const app = createEmbeddedApp({
      ...FAST,
      clock: { mode: 'virtual' },
      catalog: { 'SKU-P-1-t2': 5 },
      faults: { duplicate: 1 },
    });
    try {
      expect(backlogOf(app)).toEqual({ ledgerMessages: 0, entries: 0, sagas: 0 });
      await app.sendLedger([
        ledger('B-P', [created('P-1', 'P-1-t1'), added('P-1', 'P-1-t2', 2, 1, 100, true)]),
      ]);
      expect(backlogOf(app).ledgerMessages).toBe(1);
      await app.drain();
      expect(backlogOf(app)).toEqual({ ledgerMessages: 0, entries: 0, sagas: 1 });
      app.purgeFinished();
    } finally {
      await app.stop();
    }
  });

  it('has room only with no ledger message waiting and entries and sagas under their limits', () => {
    const limits = { entries: 10, sagas: 3 };
    const at = (backlog: Backlog): boolean => hasRoom(backlog, limits);
    expect(at({ ledgerMessages: 0, entries: 9, sagas: 2 })).toBe(true);
    expect(at({ ledgerMessages: 1, entries: 0, sagas: 0 })).toBe(false);
    expect(at({ ledgerMessages: 0, entries: 10, sagas: 0 })).toBe(false);
    expect(at({ ledgerMessages: 0, entries: 0, sagas: 3 })).toBe(false);
  });

  it('waits until there is room, a few milliseconds at a time', async () => {
    const backlogs: Backlog[] = [
      { ledgerMessages: 1, entries: 0, sagas: 0 },
      { ledgerMessages: 0, entries: 50, sagas: 0 },
      { ledgerMessages: 0, entries: 5, sagas: 0 },
    ];
    const slept: number[] = [];
    let reads = 0;
    await waitForRoom(
      () => backlogs[Math.min(reads++, backlogs.length - 1)],
      { entries: 10, sagas: 3 },
      async (ms) => {
        slept.push(ms);
      },
    );
    expect(reads).toBe(3);
    expect(slept).toEqual([5, 5]);
  });
});
