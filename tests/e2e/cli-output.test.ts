/** What `npm start` prints: a summary a person can read, whatever the ids and however large the run. */
import { join } from 'node:path';
import { main } from '../../local/cli/start';
import { captureCli } from '../support/cli';
import { displayWidth } from '../../tools/cli/text-table';
import { summary } from '../../local/cli/summary';
import { LIVE_INTERVAL_MS, PIPED_INTERVAL_MS, progressLine, startProgress } from '../../local/cli/progress';
import { added, created, ledger } from '../support/e2e';

describe('npm start: the summary it prints', () => {
  const cli = captureCli('convoy-out-');
  const write = cli.file;
  const catalog = (): string => write('catalog.json', JSON.stringify({ 'SKU-T-2': 1000 }));
  /** One ledger message per order: created, then one line flagged final. */
  const orders = (ids: readonly string[]): string =>
    write(
      'orders.ndjson',
      ids
        .map((id, index) =>
          JSON.stringify(ledger(`B-${index}`, [created(id, 'T-1'), { ...added(id, 'T-2', 2), final: true }])),
        )
        .join('\n'),
    );
  const printed = (): string => cli.stdout.join('');
  const orderTable = (): string[] => {
    const lines = printed().split('\n');
    const start = lines.findIndex((line) => line.startsWith('order '));
    const end = lines.indexOf('', start);
    return lines.slice(start, end);
  };

  it('orders sorted as a person reads ids: O-2, O-10, O-99, O-100', async () => {
    expect(await main(['--input', orders(['O-100', 'O-99', 'O-10', 'O-2']), '--catalog', catalog()])).toBe(0);
    const ids = orderTable()
      .slice(1)
      .map((line) => line.split(' ')[0]);
    expect(ids).toEqual(['O-2', 'O-10', 'O-99', 'O-100']);
  });

  it('says minor units, and the last sequence slot is not called "applied"', async () => {
    expect(await main(['--input', orders(['O-1']), '--catalog', catalog()])).toBe(0);
    const [header, row] = orderTable();
    expect(header).toContain('total (minor units)');
    expect(header).toContain('last seq');
    expect(header).not.toMatch(/\bapplied\b/);
    expect(row).toContain('100 EUR');
  });

  it('the first line and the stats line count the same things, each by its name', async () => {
    expect(await main(['--input', orders(['O-1', 'O-2']), '--catalog', catalog()])).toBe(0);
    expect(printed()).toMatch(/^ran 2 ledger messages holding 4 entries from /);
    expect(printed()).toMatch(/broker messages 6 \(ledger and forwarded entries\)/);
  });

  it('long and right-to-left ids do not break the columns', async () => {
    // 24 four-byte emoji: 98 bytes, under the 100-byte id bound, yet 48 columns wide.
    const ids = ['O-1', `O-${'x'.repeat(90)}`, 'O-שלום-עולם', 'O-مرحبا', `O-${'🙂'.repeat(24)}`];
    expect(await main(['--input', orders(ids), '--catalog', catalog()])).toBe(0);
    const table = orderTable();
    expect(table).toHaveLength(ids.length + 1);
    // Every row's status cell starts at the same terminal column as the header's.
    const column = (line: string, word: string): number => displayWidth(line.slice(0, line.indexOf(word)));
    const statusColumn = column(table[0], 'status');
    for (const row of table.slice(1)) expect(column(row, 'submitted')).toBe(statusColumn);
    expect(table.some((row) => row.includes('…'))).toBe(true);
    expect(table.find((row) => row.includes('שלום'))).toContain('\u2068');
  });

  it('a large run: counts by status and the first orders needing attention, not a row per order', async () => {
    const ids = Array.from({ length: 30 }, (_, index) => `O-${index + 1}`);
    const reportPath = join(cli.dir, 'report.json');
    // No --catalog: no stock at all, so every saga compensates and every order needs a look.
    expect(await main(['--input', orders(ids), '--report', reportPath])).toBe(0);
    const text = printed();
    expect(text).toMatch(/orders by status\s+count\n\s*submitted\s+30/);
    expect(text).toMatch(/sagas by status\s+count\n\s*compensated\s+30/);
    expect(text).toContain('30 of 30 orders need attention; the first 10:');
    expect(text).toContain('O-10 ');
    expect(text).not.toContain('O-11 ');
    expect(text).toContain(`full report: ${reportPath}`);
  });

  it('--input without --catalog says at the start that no sku has stock', async () => {
    expect(await main(['--input', orders(['O-1'])])).toBe(0);
    expect(cli.stderr.join('')).toMatch(/^warning: --input without --catalog: no sku has stock/);
    expect(printed()).toContain('unknown sku');
    cli.stderr.length = 0;
    expect(await main(['--input', orders(['O-1']), '--catalog', catalog()])).toBe(0);
    expect(cli.stderr.join('')).toBe('');
  });
});

describe('npm start: progress against the input entry count', () => {
  it('total, percent and ETA; sessions never shown above their maximum', () => {
    const line = progressLine({ done: 1250, orderSessions: 65, parked: 3 }, 5000, 64, 10_000);
    expect(line).toContain('entries 1250/5000 (25.0%)');
    expect(line).toContain('ETA 30 s');
    expect(line).toContain('order sessions 64/64');
    expect(progressLine({ done: 6000, orderSessions: 0, parked: 0 }, 5000, 8, 1000)).toContain(
      'entries 5000/5000 (100.0%)  entries done, finishing sagas',
    );
  });

  it('piped: a plain line every few seconds; on a terminal: one line rewritten in place', () => {
    jest.useFakeTimers();
    try {
      const written: string[] = [];
      const snapshot = { done: 10, orderSessions: 2, parked: 0 };
      const piped = startProgress(() => snapshot, {
        totalEntries: 100,
        maxSessions: 8,
        mode: 'lines',
        write: (text) => written.push(text),
      });
      jest.advanceTimersByTime(PIPED_INTERVAL_MS * 2);
      piped.stop();
      expect(written).toHaveLength(2);
      expect(written[0]).toMatch(/^progress: entries 10\/100 \(10\.0%\).*\n$/);

      written.length = 0;
      const live = startProgress(() => snapshot, {
        totalEntries: 100,
        maxSessions: 8,
        mode: 'live',
        write: (text) => written.push(text),
      });
      jest.advanceTimersByTime(LIVE_INTERVAL_MS * 3);
      live.stop();
      expect(written).toHaveLength(4);
      expect(written.every((text) => text.startsWith('\r'))).toBe(true);
      expect(written[3].endsWith('\n')).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('npm start: the summary prints the per-entry account when the report has one', () => {
  it('entries and each outcome, beside the broker counts', () => {
    const stats = {
      messages: 6,
      applied: 3,
      duplicates: 1,
      parked: 1,
      deadLettered: 0,
      buffered: 0,
      ledgerMessages: 2,
      ledgerMessagesParkedWhole: 0,
      redeliveries: 0,
      deadLetteredAfterOutcome: 0,
      recordConflicts: { duplicate: 0, digestMismatch: 0 },
    };
    const account = {
      entries: 5,
      applied: 3,
      duplicate: 1,
      parked: 1,
      buffered: 0,
      deadLettered: 0,
      droppedByDuplicateDetection: 0,
    };
    const text = summary(
      { orders: [], parked: [], deadLettered: [], stats: { ...stats, account } },
      { input: 'in.ndjson', ledgerMessages: 2, entries: 5, seconds: 1 },
    );
    expect(text).toContain('entries 5: applied 3, duplicate 1, parked 1, buffered 0, dead-lettered 0\n');
    expect(text).toContain('broker messages 6');
    expect(text).not.toContain('dead-lettered after their outcome');
    expect(text).not.toContain('(409)');

    // Dead letters of entries that had their outcome, and a batch lost to duplicate detection, when there are any.
    const noted = summary(
      {
        orders: [],
        parked: [],
        deadLettered: [],
        stats: {
          ...stats,
          deadLetteredAfterOutcome: 2,
          recordConflicts: { duplicate: 1, digestMismatch: 2 },
          account: { ...account, entries: 6, droppedByDuplicateDetection: 1 },
        },
      },
      { input: 'in.ndjson', ledgerMessages: 2, entries: 6, seconds: 1 },
    );
    expect(noted).toContain(
      'entries 6: applied 3, duplicate 1, parked 1, buffered 0, dead-lettered 0, dropped by duplicate detection 1\n' +
        'dead-lettered after their outcome: 2 entries, counted once by that outcome (their dead letters are redundant)',
    );
    expect(noted).toContain(
      'records the store already held (409): 1 delivered again (duplicate), 2 transactionId reused (digest-mismatch)',
    );
  });
});
