/**
 * `npm start -- --serve` and `npm run ops -- --local URL` as their own processes, as an operator runs
 * them (the sources through tests/support/register-ts.js, so no build is needed): the bare sample
 * served, a dry run of a bulk replay, a discard whose effect the next listing shows, and an argument
 * error as one line with exit 2.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { serveInChild } from '../support/serving';

const ROOT = resolve(__dirname, '..', '..');
const REGISTER = join(ROOT, 'tests', 'support', 'register-ts.js');

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

function ops(argv: string[]): Promise<Finished> {
  const child = spawn(process.execPath, ['-r', REGISTER, join(ROOT, 'tools', 'ops', 'ops.ts'), ...argv], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolveRun) => child.on('exit', (code) => resolveRun({ code, stdout, stderr })));
}

describe('npm run ops -- --local URL against npm start -- --serve', () => {
  let server: ChildProcess;
  let url = '';
  let exited: Promise<number | null>;

  beforeAll(async () => {
    const served = serveInChild(['--quiet', '--serve']);
    server = served.child;
    exited = served.exited;
    url = await served.waitFor(/HTTP API: (http:\/\/127\.0\.0\.1:\d+)\/api\//);
  }, 120_000);

  afterAll(async () => {
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('replay --parked --reason rejected --dry-run: a line a message with its action, then the summary; nothing moves', async () => {
    const dry = await ops(['--local', url, 'replay', '--parked', '--reason', 'rejected', '--dry-run']);
    expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = dry.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect(
      lines
        .slice(0, 4)
        .every((line) => /^(would-replay|skipped) T-\d+:\S+ order O-\d+ sequence \d /.test(line)),
    ).toBe(true);
    expect(lines[4]).toMatch(/^dry run: matched 4; /);
    const listed = await ops(['--local', url, 'parked', 'list', '--json']);
    expect((JSON.parse(listed.stdout) as { messages: unknown[] }).messages).toHaveLength(10);
  }, 60_000);

  it('discard --parked --order O-20 --why: both its parked entries archived and gone from the parked list', async () => {
    const discarded = await ops([
      '--local',
      url,
      'discard',
      '--parked',
      '--order',
      'O-20',
      '--why',
      'order deleted',
    ]);
    expect({ code: discarded.code, stderr: discarded.stderr }).toEqual({ code: 0, stderr: '' });
    expect(discarded.stdout).toMatch(/\nmatched 2; 2 discarded\n$/);
    const archived = await ops(['--local', url, 'archive', 'O-20']);
    expect(archived.stdout).toMatch(/\n2 archived\n$/);
    const listed = await ops(['--local', url, 'parked', 'list']);
    expect(listed.stdout).not.toMatch(/O-20/);
    expect(listed.stdout).toMatch(/\n8 parked\n$/);
  }, 60_000);

  it('an argument error: one line, exit 2, no stack trace', async () => {
    const refused = await ops(['--local', url, 'replay', '--parked']);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^replay needs --reason R, --from ISO --to ISO or --order ID[^\n]*\n$/);
  }, 60_000);
});
