/**
 * Rules of docs/messages.md and docs/cli.md that the code had to guess before they were written
 * down, each end to end through the embedded app and named for the rule. The
 * other rules of that section have their tests where the rule lives; the report names them.
 */
import type { Document } from '../../src/services/ports';
import { added, created, deleted, FAST, ledger, runToEnd } from '../support/e2e';
import { createEmbeddedApp } from '../../local/app';
import { expectAccountAddsUp } from '../support/account';

describe('the contract rules, end to end', () => {
  it('`pending` is a report status: an order whose OrderCreated is not applied while other entries hold its slots', async () => {
    const { report } = await runToEnd(
      [
        // O-W: its sequence 2 waits behind the missing 1. O-R: an addition at 1, rejected, holds slot 1.
        ledger('B-1', [added('O-W', 'T-W2', 2), added('O-R', 'T-R1', 1)]),
      ],
      FAST,
    );
    const pending = { status: 'pending', customerId: null, currency: null, lines: [], total: 0, saga: null };
    expect(report.orders).toEqual([
      expect.objectContaining({ orderId: 'O-R', ...pending, appliedSequence: 1, waitingFor: null }),
      expect.objectContaining({ orderId: 'O-W', ...pending, appliedSequence: 0, waitingFor: 1 }),
    ]);
  });

  it('unknown fields are ignored: the same digest as without them (a duplicate), and nothing of them stored', async () => {
    const plain = added('O-U', 'T-U2', 2);
    const noisy = { ...plain, comment: 'from the old system', data: { ...plain.data, colour: 'crimson' } };
    const app = createEmbeddedApp(FAST);
    try {
      await app.sendLedger([ledger('B-1', [created('O-U', 'T-U1'), noisy]), ledger('B-2', [plain])]);
      await app.drain();
      const report = await app.report();
      expectAccountAddsUp(report);
      expect(report.stats.account).toMatchObject({ entries: 3, applied: 2, duplicate: 1, parked: 0 });
      expect(report.parked).toEqual([]);
      // Every document the order has: its header and its transaction records.
      const stored = JSON.stringify(
        (await app.orders.query<Document>({ where: { orderId: 'O-U' } })).map(({ document }) => document),
      );
      expect(stored).toContain('SKU-T-U2');
      expect(stored).not.toMatch(/comment|from the old system|colour|crimson/);
    } finally {
      await app.stop();
    }
  });

  it('the digest covers the canonical fields only: `final: false` is no `final`, an OrderDeleted without `data` is `data: {}`', async () => {
    const { report } = await runToEnd(
      [
        ledger('B-1', [created('O-F', 'T-F1'), { ...added('O-F', 'T-F2', 2), final: false }]),
        ledger('B-2', [added('O-F', 'T-F2', 2)]),
        ledger('B-3', [{ ...deleted('O-F', 'T-F3', 3), data: undefined }]),
        ledger('B-4', [{ ...deleted('O-F', 'T-F3', 3), data: {} }]),
      ],
      FAST,
    );
    // Not digest-mismatch: each re-send is the same entry, a duplicate.
    expect(report.parked).toEqual([]);
    expect(report.stats.account).toMatchObject({ entries: 5, applied: 3, duplicate: 2 });
    expect(report.orders).toEqual([expect.objectContaining({ orderId: 'O-F', status: 'deleted' })]);
  });

  it('the `ledger` queue detects duplicates: a repeat of a batch messageId within the window is dropped, even with other content', async () => {
    const { report, broker } = await runToEnd(
      [
        ledger('B-1', [created('O-D', 'T-D1')]),
        // The same messageId, changed content: the broker drops it; a changed batch needs a new id.
        { messageId: 'B-1', sessionId: 'main', body: { batchId: 'B-1', entries: [added('O-D', 'T-D2', 2)] } },
      ],
      FAST,
    );
    expect(broker.ledger).toMatchObject({ sent: 1, duplicatesDetected: 1 });
    expect(report.orders).toEqual([
      expect.objectContaining({ orderId: 'O-D', appliedSequence: 1, lines: [] }),
    ]);
    // Lost, not a duplicate: no entry of the input had its content (npm start refuses such input).
    expect(report.stats.account).toMatchObject({
      entries: 2,
      applied: 1,
      duplicate: 0,
      droppedByDuplicateDetection: 1,
    });
  });
});
