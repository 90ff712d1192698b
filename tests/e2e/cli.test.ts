/** The `npm start` command (docs/cli.md), through `main` as the CLI entry point calls it. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { main } from '../../local/cli/start';
import { captureCli } from '../support/cli';
import { MAX_ENTRY_DEPTH } from '../../src/domain/entry';
import { STANDARD_TIER_MAX_BATCH_BYTES } from '../../local/broker/broker';
import { FAULT_NAMES } from '../../local/faults';
import type { Report } from '../../local/report';
import { SAMPLE_PATH } from '../support/e2e';
import { parkIdFor } from '../../src/services/convoy/parking';
import { expectAccountAddsUp } from '../support/account';

describe('npm start (main)', () => {
  const cli = captureCli('convoy-cli-');
  const file = cli.file;
  /** A report npm start wrote; each accounts for every entry of its input once. */
  const readReport = (path: string): Report => {
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    expectAccountAddsUp(report);
    return report;
  };

  it('a report path that fails only when written: one line naming it, exit 1, no stack trace', async () => {
    expect(await main(['--report', '/dev/full', '--quiet'])).toBe(1);
    const errors = cli.stderr.join('');
    expect(errors).toMatch(/^npm start: could not write --report \/dev\/full: .+\n$/);
    expect(errors).not.toMatch(/\n\s+at /);
  });

  it('an HTML path that fails when written keeps the JSON report, written first', async () => {
    const reportPath = join(cli.dir, 'kept.json');
    expect(await main(['--report', reportPath, '--html', '/dev/full', '--quiet'])).toBe(1);
    expect(readReport(reportPath).orders.length).toBeGreaterThan(0);
    expect(cli.stderr.join('')).toMatch(/^npm start: could not write --html \/dev\/full: .+\n$/);
  });

  it('--input and --report: writes the report with orders, parked, deadLettered and stats', async () => {
    const reportPath = join(cli.dir, 'report.json');

    const catalog = join(dirname(SAMPLE_PATH), 'catalog.json');
    expect(await main(['--input', SAMPLE_PATH, '--catalog', catalog, '--report', reportPath])).toBe(0);

    const report = readReport(reportPath);
    expect(Object.keys(report)).toEqual(
      expect.arrayContaining(['orders', 'parked', 'deadLettered', 'stats']),
    );
    expect(Object.keys(report.stats).sort()).toEqual(
      [
        'account',
        'applied',
        'buffered',
        'deadLettered',
        'deadLetteredAfterOutcome',
        'duplicates',
        'ledgerMessages',
        'ledgerMessagesParkedWhole',
        'messages',
        'parked',
        'recordConflicts',
        'redeliveries',
        'telemetry',
      ].sort(),
    );
    // What the app would send Application Insights (local/telemetry-bytes.ts): the sample's alert
    // events are exported whatever the sampling, so it is never empty.
    expect(report.stats.telemetry?.bytesPerEntry).toBeGreaterThan(0);
    // The worked example of docs/messages.md (the ledger message) is O-17 of the sample.
    expect(report.orders.find((order) => order.orderId === 'O-17')).toMatchObject({
      status: 'submitted',
      customerId: 'C-9',
      currency: 'EUR',
      lines: [
        { transactionId: 'T-2', sku: 'SKU-1', quantity: 3, unitPrice: 1250 },
        { transactionId: 'T-4', sku: 'SKU-2', quantity: 1, unitPrice: 999 },
      ],
      total: 4749,
      appliedSequence: 4,
      waitingFor: null,
    });
    expect(report.parked.length).toBeGreaterThan(0);
    expect(report.deadLettered).toEqual([]);
    expect(cli.stderr.join('')).toBe('');
    expect(cli.stdout.join('')).toContain(`full report: ${reportPath}`);
  });

  it('done when: --seed 7 with duplicate, crashAfterCommit and transient faults reports as the run without', async () => {
    const clean = join(cli.dir, 'clean.json');
    const faulty = join(cli.dir, 'faulty.json');
    const faults = 'duplicate=0.2,crashAfterCommit=0.1,transient=0.1';

    const codes = await Promise.all([
      main(['--input', SAMPLE_PATH, '--seed', '7', '--report', clean, '--quiet']),
      main(['--input', SAMPLE_PATH, '--seed', '7', '--faults', faults, '--report', faulty, '--quiet']),
    ]);

    expect(codes).toEqual([0, 0]);
    const [without, withFaults] = [readReport(clean), readReport(faulty)];
    expect(withFaults.orders).toEqual(without.orders);
    expect(withFaults.parked).toEqual(without.parked);
    expect(withFaults.deadLettered).toEqual([]);
    expect(without.orders.length).toBeGreaterThan(0);
  });

  it('--max-message-bytes 1048576 (Premium): a 300 KB input line Standard refuses is taken, its invalid entry parked', async () => {
    const big = { transactionId: 'T-1', orderId: 'O-1', sequence: 1, type: 'OrderCreated' };
    const input = file(
      'big.ndjson',
      JSON.stringify({
        messageId: 'B-2',
        sessionId: 'main',
        body: {
          batchId: 'B-2',
          entries: [{ ...big, data: { customerId: 'x'.repeat(300_000), currency: 'EUR' } }],
        },
      }),
    );
    const reportPath = join(cli.dir, 'report.json');
    expect(
      await main(['--input', input, '--report', reportPath, '--quiet', '--max-message-bytes', '1048576']),
    ).toBe(0);
    expect(readReport(reportPath).parked).toEqual([
      expect.objectContaining({ queue: 'ledger', reason: 'invalid', transactionId: 'T-1' }),
    ]);
  });

  describe('exit code 2 with a message naming the problem', () => {
    async function refused(argv: string[]): Promise<string> {
      expect(await main(argv)).toBe(2);
      return cli.stderr.join('');
    }

    it('an unreadable input file', async () => {
      const missing = join(cli.dir, 'missing.ndjson');
      const message = await refused(['--input', missing]);
      expect(message).toContain('--input');
      expect(message).toContain(missing);
      expect(message).toContain('ENOENT');
    });

    it('a bad flag', async () => {
      expect(await refused(['--input', SAMPLE_PATH, '--bogus', '1'])).toContain('unknown flag --bogus');
    });

    it('a flag without its value', async () => {
      expect(await refused(['--input'])).toContain('--input needs a value');
    });

    it('a bad seed', async () => {
      expect(await refused(['--input', SAMPLE_PATH, '--seed', 'seven'])).toMatch(
        /--seed must be a decimal integer.*"seven"/,
      );
    });

    it('an unknown fault', async () => {
      const message = await refused(['--input', SAMPLE_PATH, '--faults', 'duplicate=0.1,meteor=0.5']);
      expect(message).toContain('--faults');
      expect(message).toContain('meteor');
    });

    it('a fault probability out of range', async () => {
      const message = await refused(['--input', SAMPLE_PATH, '--faults', 'duplicate=1.5']);
      expect(message).toContain('--faults');
      expect(message).toContain('duplicate');
      expect(message).toContain('between 0 and 1');
    });

    it('a malformed input line, named by file and line number', async () => {
      const input = file(
        'broken.ndjson',
        [
          JSON.stringify({ messageId: 'B-1', sessionId: 'main', body: { batchId: 'B-1', entries: [] } }),
          '{"messageId": "B-2", "body": ',
        ].join('\n'),
      );
      const message = await refused(['--input', input]);
      expect(message).toContain(`${input}:2`);
      expect(message).toContain('not valid JSON');
    });

    it('an input line without a messageId', async () => {
      const input = file('nomessageid.ndjson', `${JSON.stringify({ sessionId: 'main', body: {} })}\n`);
      const message = await refused(['--input', input]);
      expect(message).toContain(`${input}:1`);
      expect(message).toContain('messageId');
    });

    it('an unknown flag without a value', async () => {
      expect(await refused(['--input', SAMPLE_PATH, '--bogus'])).toContain('unknown flag --bogus');
    });

    it('a stray word', async () => {
      const message = await refused(['--input', SAMPLE_PATH, 'extra']);
      expect(message).toContain('unexpected argument "extra"');
      expect(message).not.toContain('needs a value');
    });

    it('a flag given twice', async () => {
      expect(await refused(['--seed', '1', '--seed', '2'])).toContain('--seed is given twice');
    });

    it.each([
      ['--max-concurrent-sessions', '1e3'],
      ['--seed', '1e2'],
      ['--seed', '0x1'],
      ['--session-idle-ms', '1.5'],
    ])('%s %s: integers are written in decimal digits', async (flag, value) => {
      expect(await refused(['--input', SAMPLE_PATH, flag, value])).toContain(
        `${flag} must be a decimal integer`,
      );
    });

    it('a negative number: refused, and the way to write a value starting with "-" is said', async () => {
      expect(await refused(['--credit-limit', '-5'])).toContain('--credit-limit=VALUE');
      cli.stderr.length = 0;
      expect(await refused(['--credit-limit=-5'])).toContain('--credit-limit must be a decimal integer >= 0');
    });

    it.each(['duplicate=0x1', 'duplicate=1e-1', 'transient= ', 'reorder=-0'])(
      '--faults %s: a probability is a decimal between 0 and 1',
      async (spec) => {
        const message = await refused(['--input', SAMPLE_PATH, '--faults', spec]);
        expect(message).toContain('--faults');
        expect(message).toContain('between 0 and 1');
      },
    );

    it('--faults naming one fault twice', async () => {
      const message = await refused(['--faults', 'duplicate=0.1,duplicate=0.2']);
      expect(message).toContain('--faults: duplicate is given twice; give each fault once');
    });

    it('--session-idle-ms past a minute: a run waits out every hold, so it would not end', async () => {
      const message = await refused(['--session-idle-ms', '999999999999']);
      expect(message).toContain('--session-idle-ms must be a decimal integer from 0 to 60000');
    });

    it('--report into a directory that does not exist, before the run', async () => {
      const path = join(cli.dir, 'nonexistent', 'r.json');
      const message = await refused(['--input', SAMPLE_PATH, '--report', path]);
      expect(message).toContain('--report');
      expect(message).toContain(join(cli.dir, 'nonexistent'));
      expect(message).toContain('does not exist');
    });

    it('--report that is a directory, before the run', async () => {
      const message = await refused(['--input', SAMPLE_PATH, '--report', cli.dir]);
      expect(message).toContain(`--report ${cli.dir} is a directory`);
    });

    const batch = (messageId: string, entries: unknown[]): string =>
      JSON.stringify({ messageId, sessionId: 'main', body: { batchId: messageId, entries } });

    it('an input line over the broker size limit: the line, its size and the limit', async () => {
      const big = { transactionId: 'T-1', orderId: 'O-1', sequence: 1, type: 'OrderCreated' };
      const input = file(
        'big.ndjson',
        [
          batch('B-1', [big]),
          batch('B-2', [{ ...big, data: { customerId: 'x'.repeat(300_000), currency: 'EUR' } }]),
        ].join('\n'),
      );
      const message = await refused(['--input', input]);
      expect(message).toContain(`${input}:2`);
      expect(message).toContain(`${STANDARD_TIER_MAX_BATCH_BYTES}-byte`);
      expect(message.trimEnd().split('\n')).toHaveLength(1);
    });

    it.each(['262143', '1MB', '104857601'])(
      '--max-message-bytes %s, naming the flag and the range',
      async (value) => {
        const message = await refused(['--input', SAMPLE_PATH, '--max-message-bytes', value]);
        expect(message).toContain('--max-message-bytes must be a whole number of bytes from 262144');
        expect(message.trimEnd().split('\n')).toHaveLength(1);
      },
    );

    it.each(['messageId', 'sessionId'])('an input line whose %s is over 128 characters', async (field) => {
      const line = { messageId: 'B-1', sessionId: 'main', body: { batchId: 'B-1', entries: [] } };
      const input = file('long-id.ndjson', JSON.stringify({ ...line, [field]: 'L'.repeat(129) }));
      const message = await refused(['--input', input]);
      expect(message).toContain(`${input}:1`);
      expect(message).toContain(field);
      expect(message).toContain('128');
    });

    it('--html into a directory that does not exist, before the run', async () => {
      const message = await refused(['--input', SAMPLE_PATH, '--html', join(cli.dir, 'no', 'r.html')]);
      expect(message).toContain('--html');
      expect(message).toContain('does not exist');
    });

    it('every refusal is one line, never a stack', async () => {
      const message = await refused(['--input', SAMPLE_PATH, '--seed']);
      expect(message.trimEnd().split('\n')).toHaveLength(1);
    });

    afterEach(() => {
      expect(cli.stdout.join('')).toBe('');
    });
  });

  describe('flags as people expect them', () => {
    it('--input=FILE is understood', async () => {
      const reportPath = join(cli.dir, 'eq.json');
      expect(await main([`--input=${SAMPLE_PATH}`, `--report=${reportPath}`, '--quiet'])).toBe(0);
      expect(readReport(reportPath).orders.length).toBeGreaterThan(0);
    });

    it('--help lists every flag with its meaning and default, and exits 0', async () => {
      expect(await main(['--help'])).toBe(0);
      const help = cli.stdout.join('');
      for (const flag of [
        '--input FILE',
        '--report FILE',
        '--html FILE',
        '--seed N',
        '--faults SPEC',
        '--max-concurrent-sessions N',
        '--session-idle-ms N',
        '--catalog FILE',
        '--credit-limit N',
        '--quiet',
        '--help',
      ]) {
        expect(help).toContain(flag);
      }
      expect(help).toMatch(/--seed N\s+.*\(default: 1\)/);
      expect(help).toMatch(/--max-concurrent-sessions N\s+.*\(default: 8\)/);
      for (const fault of FAULT_NAMES) expect(help).toContain(fault);
      expect(cli.stderr.join('')).toBe('');
    });
  });

  it.each([2_000, 4_000])(
    'data nested %d deep: parked invalid, naming the field, no overflow',
    async (depth) => {
      const data: Record<string, unknown> = { customerId: 'C-1', currency: 'EUR' };
      let inner = data;
      for (let level = 0; level < depth; level++) {
        const next: Record<string, unknown> = {};
        inner.nested = next;
        inner = next;
      }
      const entry = { transactionId: 'T-1', orderId: 'O-1', sequence: 1, type: 'OrderCreated', data };
      const input = file(
        'deep.ndjson',
        JSON.stringify({ messageId: 'D-1', sessionId: 'main', body: { batchId: 'D-1', entries: [entry] } }),
      );
      const reportPath = join(cli.dir, 'deep.json');

      expect(await main(['--input', input, '--report', reportPath, '--quiet'])).toBe(0);

      const report = readReport(reportPath);
      expect(report.orders).toEqual([]);
      expect(report.parked).toHaveLength(1);
      expect(report.parked[0]).toMatchObject({ reason: 'invalid', transactionId: 'T-1' });
      expect(report.parked[0].description).toContain('entries[0].data');
      expect(report.parked[0].description).toContain(`nested more than ${MAX_ENTRY_DEPTH} levels`);
      expect(cli.stderr.join('')).toBe('');
    },
  );

  it('a byte-order mark at the start of the input file is read past', async () => {
    const input = file('bom.ndjson', `\ufeff${readFileSync(SAMPLE_PATH, 'utf8')}`);
    expect(await main(['--input', input, '--report', join(cli.dir, 'bom.json'), '--quiet'])).toBe(0);
    expect(readReport(join(cli.dir, 'bom.json')).orders.length).toBeGreaterThan(0);
  });

  it('a ledger messageId reused with another body: refused before the run, naming both lines', async () => {
    const line = (batchId: string, transactionId: string): string =>
      JSON.stringify({
        messageId: 'B-1',
        sessionId: 'main',
        body: {
          batchId,
          entries: [
            {
              transactionId,
              orderId: 'O-1',
              sequence: 1,
              type: 'OrderCreated',
              data: { customerId: 'C', currency: 'EUR' },
            },
          ],
        },
      });
    const input = file(
      'reused.ndjson',
      [line('B-1', 'T-1'), line('B-1', 'T-1'), line('B-1', 'T-9')].join('\n'),
    );
    const reportPath = join(cli.dir, 'reused.json');
    expect(await main(['--input', input, '--report', reportPath, '--quiet'])).toBe(2);
    expect(cli.stderr.join('')).toBe(
      `${input}:3: messageId B-1 was already used at ${input}:1 with another body; the ledger queue's ` +
        'duplicate detection would drop this message and its entries without a word: give a changed ' +
        'batch a new messageId\n',
    );
    expect(existsSync(reportPath)).toBe(false);

    // An exact repeat (line 2) loses nothing: it runs, said even under --quiet, and its entry is a duplicate.
    cli.stderr.length = 0;
    const repeated = file('repeated.ndjson', [line('B-1', 'T-1'), line('B-1', 'T-1')].join('\n'));
    expect(await main(['--input', repeated, '--report', reportPath, '--quiet'])).toBe(0);
    expect(cli.stderr.join('')).toBe(
      `warning: ${repeated}:2 repeats ${repeated}:1 exactly (messageId B-1): the ledger queue's ` +
        'duplicate detection drops it, and its entries count as duplicates\n',
    );
    expect(readReport(reportPath).stats.account).toMatchObject({ entries: 2, applied: 1, duplicate: 1 });
  });

  it('exit 0 on an input full of bad bodies: each parked, whole or entry by entry', async () => {
    const lines = [
      { messageId: 'X-1', sessionId: 'main', body: 'not JSON at all {' },
      { messageId: 'X-2', sessionId: 'main', body: 42 },
      { messageId: 'X-3', sessionId: 'main', body: null },
      { messageId: 'X-4', body: { batchId: 'X-4', entries: 'nope' } },
      {
        messageId: 'X-5',
        sessionId: 'main',
        body: { batchId: 'X-5', entries: [{ transactionId: 'T-1' }, 7] },
      },
      { messageId: 'X-6', sessionId: 'main', body: [] },
    ];
    const input = file('bad-bodies.ndjson', lines.map((line) => JSON.stringify(line)).join('\n'));
    const reportPath = join(cli.dir, 'bad.json');

    expect(await main(['--input', input, '--report', reportPath, '--quiet'])).toBe(0);

    const report = readReport(reportPath);
    expect(report.orders).toEqual([]);
    expect(report.deadLettered).toEqual([]);
    expect(report.parked.map((parked) => [parked.messageId, parked.reason])).toEqual([
      ['X-1', 'invalid'],
      ['X-2', 'invalid'],
      ['X-3', 'invalid'],
      ['X-4', 'invalid'],
      ['X-6', 'invalid'],
      // Entry parks are named by their content (docs/messages.md (the order of checks)), and sort after the batch ids.
      ...[
        [parkIdFor('invalid', { transactionId: 'T-1' }), 'invalid'],
        [parkIdFor('invalid', 7), 'invalid'],
      ].sort(([a], [b]) => (a < b ? -1 : 1)),
    ]);
    expect(
      report.parked.find((parked) => parked.messageId === parkIdFor('invalid', { transactionId: 'T-1' }))
        ?.transactionId,
    ).toBe('T-1');
    expect(cli.stderr.join('')).toBe('');
  });
});
