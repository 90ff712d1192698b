/** `npm run bench` flags. */
import { integerFlag, UsageError } from '../cli/start-args';
import type { BenchOptions } from './results';

export const BENCH_USAGE = `usage: npm run bench -- [--latency-ms N] [--orders N] [--entries N] [--batch-size N] [--json FILE]
       [--sessions 1,4,16,64] [--calls N] [--duplicate P] [--seed N] [--active-orders N]
       [--zero-latency-sessions N] [--session-idle-ms N] [--warmup-orders N] [--no-naive]
       [--latency-clock network|timer]`;

export { UsageError as BenchUsageError } from '../cli/start-args';

export function parseBenchArgs(argv: readonly string[]): { options: Partial<BenchOptions>; json?: string } {
  const options: Partial<BenchOptions> = {};
  let json: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--help' || flag === '-h') throw new UsageError(BENCH_USAGE);
    if (flag === '--no-naive') {
      options.naive = false;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--'))
      throw new UsageError(`${flag} needs a value\n${BENCH_USAGE}`);
    i += 1;
    switch (flag) {
      case '--latency-ms': {
        const latency = Number(value);
        if (!(latency >= 0 && Number.isFinite(latency))) {
          throw new UsageError(`--latency-ms must be a number >= 0, got ${JSON.stringify(value)}`);
        }
        options.latencyMs = latency;
        break;
      }
      case '--orders':
        options.orders = integerFlag(flag, value, 1);
        break;
      case '--entries':
        options.entriesPerOrder = integerFlag(flag, value, 2);
        break;
      case '--batch-size':
        options.batchSize = integerFlag(flag, value, 1);
        break;
      case '--active-orders':
        options.activeOrders = integerFlag(flag, value, 1);
        break;
      case '--sessions':
        options.sessions = value.split(',').map((part) => integerFlag(flag, part.trim(), 1));
        break;
      case '--calls':
        options.competingCalls = integerFlag(flag, value, 1);
        break;
      case '--zero-latency-sessions':
        options.zeroLatencySessions = integerFlag(flag, value, 0);
        break;
      case '--session-idle-ms':
        options.sessionIdleTimeoutMs = integerFlag(flag, value, 0);
        break;
      case '--warmup-orders':
        options.warmupOrders = integerFlag(flag, value, 0);
        break;
      case '--seed':
        options.seed = integerFlag(flag, value, 0);
        break;
      case '--duplicate': {
        const probability = Number(value);
        if (!(probability >= 0 && probability <= 1)) {
          throw new UsageError(
            `--duplicate must be a probability between 0 and 1, got ${JSON.stringify(value)}`,
          );
        }
        options.duplicate = probability;
        break;
      }
      case '--latency-clock':
        if (value !== 'network' && value !== 'timer') {
          throw new UsageError(`--latency-clock must be network or timer, got ${JSON.stringify(value)}`);
        }
        options.latencyClock = value;
        break;
      case '--json':
        json = value;
        break;
      default:
        throw new UsageError(`unknown flag ${flag}\n${BENCH_USAGE}`);
    }
  }
  return { options, json };
}
