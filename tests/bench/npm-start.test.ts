/** The bench's npm start row: its command is package.json's start script, and its targets judge. */
import { resolve } from 'node:path';
import { npmStartTargets, startCommand, type NpmStartRow } from '../../bench/npm-start';
import { parseBenchArgs } from '../../bench/args';

const row = (peakRssBytes: number, wallSeconds: number): NpmStartRow => ({
  orders: 20_000,
  entries: 200_000,
  nodeFlags: [],
  exitCode: 0,
  wallSeconds,
  cpuSeconds: 10,
  peakRssBytes,
  eventLoopIdle: 0,
});

describe('the npm start row', () => {
  it("runs the start script's script with its node flags", () => {
    const { flags, script } = startCommand(resolve(__dirname, '..', '..'));
    expect(script).toBe('dist/local/cli/start.js');
    expect(flags.every((flag) => flag.startsWith('--'))).toBe(true);
  });

  it('passes under 1 GiB and at 1.5x, fails at 1 GiB and above 1.5x', () => {
    expect(npmStartTargets(row(1024 ** 3 - 1, 15)).map((t) => t.pass)).toEqual([true, true]);
    expect(npmStartTargets(row(1024 ** 3, 15.1)).map((t) => t.pass)).toEqual([false, false]);
    expect(npmStartTargets(null)).toEqual([]);
  });

  it('is chosen alone with --only npm-start and sized with --npm-start-orders', () => {
    expect(parseBenchArgs(['--only', 'npm-start', '--npm-start-orders', '0']).options).toEqual({
      only: 'npm-start',
      npmStartOrders: 0,
    });
  });
});
