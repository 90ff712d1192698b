/**
 * `npm start` as its own process, with its output redirected to a file (docs/cli.md): the process
 * never exits before the run is done. A retry backoff can be all a run waits for; if the durable
 * clock's timers did not hold the event loop, Node would exit 0 mid-run with nothing printed and
 * no report.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Report } from '../../local/report';
import { added, created, ledger } from '../support/e2e';

const ROOT = resolve(__dirname, '..', '..');

/** Runs a TypeScript entry point (a file, or `-e` code) in its own node process, output to `out.txt`. */
function runNode(
  dir: string,
  args: readonly string[],
  started: (child: ChildProcess) => void = () => undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number | null> {
  const out = openSync(join(dir, 'out.txt'), 'w');
  const child = spawn(process.execPath, ['-r', join(ROOT, 'tests', 'support', 'register-ts.js'), ...args], {
    cwd: dir,
    stdio: ['ignore', out, out],
    env,
  });
  started(child);
  return new Promise((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      closeSync(out);
      resolvePromise(code);
    });
  });
}

describe('npm start as a process, output redirected', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'start-process-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('with activity faults, waits out every retry backoff and exits 0 with its report and summary', async () => {
    const code = await runNode(dir, [
      join(ROOT, 'local', 'cli', 'start.ts'),
      '--faults',
      'activityTransient=0.5',
      '--report',
      'r.json',
    ]);

    const printed = readFileSync(join(dir, 'out.txt'), 'utf8');
    expect({ code, printed: printed.includes('r.json') }).toEqual({
      code: 0,
      printed: true,
    });
    expect(existsSync(join(dir, 'r.json'))).toBe(true);
    const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as Report;
    const submitted = report.orders.filter((order) => order.status === 'submitted');
    expect(submitted.length).toBeGreaterThan(0);
    for (const order of submitted) expect(order.saga?.status).not.toBe('running');
  });

  it('a command whose work can never finish exits 1 with a line saying so, not 0', async () => {
    const runMain = JSON.stringify(join(ROOT, 'tools', 'cli', 'run-main.ts'));
    const code = await runNode(dir, [
      '-e',
      `require(${runMain}).runMain(() => new Promise(() => {}), 'the run')`,
    ]);

    expect(code).toBe(1);
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe(
      'the run stopped before it finished: nothing was left to wake it\n',
    );
  });

  it('Ctrl-C mid-run exits 130 with a line saying so', async () => {
    const lines = Array.from({ length: 400 }, (_, batch) =>
      JSON.stringify(
        ledger(`B-${batch}`, [
          created(`O-${batch}`, `T-${batch}-1`, 1),
          added(`O-${batch}`, `T-${batch}-2`, 2),
          added(`O-${batch}`, `T-${batch}-3`, 3, 1, 100, true),
        ]),
      ),
    );
    writeFileSync(join(dir, 'ledger.ndjson'), `${lines.join('\n')}\n`);
    let interrupted = false;
    const code = await runNode(
      dir,
      [join(ROOT, 'local', 'cli', 'start.ts'), '--input', 'ledger.ndjson'],
      (child) => {
        // Interrupted once the run starts: right after its warning that no sku has stock.
        const poll = setInterval(() => {
          if (readFileSync(join(dir, 'out.txt'), 'utf8').includes('--input without --catalog')) {
            clearInterval(poll);
            interrupted = child.kill('SIGINT');
          }
        }, 20);
        child.on('exit', () => clearInterval(poll));
      },
    );

    expect({ interrupted, code }).toEqual({ interrupted: true, code: 130 });
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toContain('the run was interrupted (SIGINT)');
  });
});
