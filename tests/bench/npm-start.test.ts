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

  it('passes at 1 KB per entry and 1.5x, fails above', () => {
    expect(npmStartTargets(row(200_000 * 1024, 15)).map((t) => t.pass)).toEqual([true, true]);
    expect(npmStartTargets(row(200_000 * 1025, 15.1)).map((t) => t.pass)).toEqual([false, false]);
    expect(npmStartTargets(null)).toEqual([]);
  });

  it('is chosen alone with --only npm-start and sized with --npm-start-orders', () => {
    expect(parseBenchArgs(['--only', 'npm-start', '--npm-start-orders', '0']).options).toEqual({
      only: 'npm-start',
      npmStartOrders: 0,
    });
  });
});
