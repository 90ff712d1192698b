/** `npm run bench` flags: the same util.parseArgs table as npm start and npm run ops. */
import { BENCH_USAGE, BenchUsageError, main, parseBenchArgs } from '../../bench/bench';

describe('npm run bench flags', () => {
  it.each([
    [['--bogus'], 'unknown flag --bogus'],
    [['extra'], 'unexpected argument "extra"'],
    [['--orders', '10', '--orders', '20'], '--orders is given twice'],
    [['--orders', '1e3'], '--orders must be a decimal integer'],
    [['--seed', '0x1'], '--seed must be a decimal integer'],
    [['--duplicate', '0x1'], '--duplicate must be a decimal probability'],
    [['--duplicate', '1e-1'], '--duplicate must be a decimal probability'],
    [['--latency-ms', '1e1'], '--latency-ms must be a decimal number'],
    [['--no-naive=yes'], '--no-naive takes no value'],
    [['--twin-rounds', '0'], '--twin-rounds'],
  ])('%j is refused: %s', (argv, message) => {
    expect(() => parseBenchArgs(argv)).toThrow(BenchUsageError);
    expect(() => parseBenchArgs(argv)).toThrow(message);
  });

  it('--twin-rounds sets the rounds of the judged rows, 5 unless given', () => {
    expect(parseBenchArgs(['--twin-rounds', '5']).options).toEqual({ twinRounds: 5 });
    expect(BENCH_USAGE).toMatch(/--twin-rounds N\s+.*\(default: 5\)/);
  });

  it('--input=FILE style values and plain decimals work', () => {
    expect(parseBenchArgs(['--orders=30', '--latency-ms', '0.5', '--duplicate', '.1']).options).toEqual({
      orders: 30,
      latencyMs: 0.5,
      duplicate: 0.1,
    });
  });

  it('--help lists every flag with its meaning and default, and exits 0 without running', async () => {
    for (const flag of [
      '--latency-ms N',
      '--orders N',
      '--sessions LIST',
      '--no-naive',
      '--json FILE',
      '--help',
    ]) {
      expect(BENCH_USAGE).toContain(flag);
    }
    expect(BENCH_USAGE).toMatch(/--orders N\s+.*\(default: 2000\)/);
    const written: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      expect(await main(['--help'])).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(written.join('')).toContain('usage: npm run bench');
  });
});
