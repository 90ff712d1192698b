/** The command line of `npm run bench`: the same `util.parseArgs` flag table as `npm start` and `npm run ops`. */
import {
  flagHelp,
  integerFlag,
  nonNegativeFlag,
  parseFlags,
  probabilityFlag,
  stringFlag,
  UsageError,
  type FlagSpec,
} from '../tools/cli/flags';
import { MAX_ENTRIES_PER_ORDER } from '../src/domain/entry';
import { BENCH_DEFAULTS, BENCH_PARTS, type BenchOptions } from './results';

export { UsageError as BenchUsageError } from '../tools/cli/flags';

const D = BENCH_DEFAULTS;

export const BENCH_FLAGS: readonly FlagSpec[] = [
  {
    name: 'latency-ms',
    value: 'N',
    meaning: 'simulated store round trip, ms (a decimal)',
    default: String(D.latencyMs),
  },
  { name: 'orders', value: 'N', meaning: 'orders in the generated workload', default: String(D.orders) },
  {
    name: 'entries',
    value: 'N',
    meaning: 'entries per order (at least 2)',
    default: String(D.entriesPerOrder),
  },
  { name: 'batch-size', value: 'N', meaning: 'entries per ledger message', default: String(D.batchSize) },
  {
    name: 'active-orders',
    value: 'N',
    meaning: 'orders open at once in the ledger',
    default: String(D.activeOrders),
  },
  {
    name: 'sessions',
    value: 'LIST',
    meaning: 'maxConcurrentSessions of each convoy run, comma-separated',
    default: D.sessions.join(','),
  },
  {
    name: 'calls',
    value: 'N',
    meaning: 'concurrent calls of the competing-consumers design',
    default: String(D.competingCalls),
  },
  {
    name: 'duplicate',
    value: 'P',
    meaning: "probability of the broker's duplicate fault, every design",
    default: String(D.duplicate),
  },
  { name: 'seed', value: 'N', meaning: 'seeds the workload and the faults', default: String(D.seed) },
  {
    name: 'zero-latency-sessions',
    value: 'N',
    meaning: 'sessions of the zero-latency convoy run; 0 skips it',
    default: String(D.zeroLatencySessions),
  },
  {
    name: 'session-idle-ms',
    value: 'N',
    meaning: 'host.json sessionIdleTimeout of every run',
    default: String(D.sessionIdleTimeoutMs),
  },
  {
    name: 'warmup-orders',
    value: 'N',
    meaning: 'orders of the unreported warm-up runs; 0 none',
    default: String(D.warmupOrders),
  },
  { name: 'no-naive', meaning: 'run the convoy only, not the naive designs', default: 'off' },
  {
    name: 'no-twin',
    meaning: 'skip the runtime-only twin beside each convoy row with latency',
    default: 'off',
  },
  {
    name: 'twin-rounds',
    value: 'N',
    meaning:
      'rounds of row and twin (the twin first in every second) for the rows a target judges (16 sessions, zero latency)',
    default: String(D.twinRounds),
  },
  {
    name: 'no-sessions-table',
    meaning: 'skip the session settings table (virtual time, a few seconds)',
    default: 'off',
  },
  {
    name: 'order-lengths',
    value: 'LIST',
    meaning: 'entries per order of each order-length row, comma-separated (2..1000); 0 skips the table',
    default: D.orderLengths.join(','),
  },
  {
    name: 'order-length-entries',
    value: 'N',
    meaning: 'about how many entries each order-length row runs',
    default: String(D.orderLengthEntries),
  },
  {
    name: 'npm-start-orders',
    value: 'N',
    meaning: 'orders (x 10 entries) of the npm start row; 0 skips it',
    default: String(D.npmStartOrders),
  },
  {
    name: 'no-model',
    meaning:
      "skip host.json and the deployment's ceilings at Azure's round trips (virtual time, plus one metered run)",
    default: 'off',
  },
  {
    name: 'cold-start-rounds',
    value: 'N',
    meaning: 'fresh processes per entry point of the cold-start row; 0 skips it',
    default: String(D.coldStartRounds),
  },
  {
    name: 'only',
    value: BENCH_PARTS.join('|'),
    meaning: "run only this part of the bench (model: host.json on Azure and the deployment's ceilings)",
    default: 'all',
  },
  { name: 'json', value: 'FILE', meaning: 'also write every number as JSON', default: 'none' },
  { name: 'help', short: 'h', meaning: 'print this help and exit' },
];

export const BENCH_USAGE = flagHelp('usage: npm run bench -- [flags...]', BENCH_FLAGS);

export function parseBenchArgs(argv: readonly string[]): {
  options: Partial<BenchOptions>;
  json?: string;
  help?: true;
} {
  const parsed = parseFlags(BENCH_FLAGS, argv, { command: 'npm run bench' });
  if (parsed.values.has('help')) return { options: {}, help: true };
  const options: Partial<BenchOptions> = {};
  const raw = (name: string): string | undefined => stringFlag(parsed, name);
  const integer = (name: string, min: number): number | undefined => {
    const value = raw(name);
    return value === undefined ? undefined : integerFlag(`--${name}`, value, min);
  };
  const set = <K extends keyof BenchOptions>(key: K, value: BenchOptions[K] | undefined): void => {
    if (value !== undefined) options[key] = value;
  };
  const oneOf = <T extends string>(name: string, choices: readonly T[]): T | undefined => {
    const value = raw(name);
    if (value !== undefined && !(choices as readonly string[]).includes(value)) {
      throw new UsageError(`--${name} must be ${choices.join(' or ')}, got ${JSON.stringify(value)}`);
    }
    return value as T | undefined;
  };
  const latency = raw('latency-ms');
  set('latencyMs', latency === undefined ? undefined : nonNegativeFlag('--latency-ms', latency));
  set('orders', integer('orders', 1));
  set('entriesPerOrder', integer('entries', 2));
  set('batchSize', integer('batch-size', 1));
  set('activeOrders', integer('active-orders', 1));
  const sessions = raw('sessions');
  set(
    'sessions',
    sessions?.split(',').map((part) => integerFlag('--sessions', part.trim(), 1)),
  );
  set('competingCalls', integer('calls', 1));
  const duplicate = raw('duplicate');
  set('duplicate', duplicate === undefined ? undefined : probabilityFlag('--duplicate', duplicate));
  set('seed', integer('seed', 0));
  set('zeroLatencySessions', integer('zero-latency-sessions', 0));
  set('sessionIdleTimeoutMs', integer('session-idle-ms', 0));
  set('warmupOrders', integer('warmup-orders', 0));
  const lengths = raw('order-lengths');
  if (lengths !== undefined) {
    options.orderLengths =
      lengths.trim() === '0'
        ? []
        : lengths.split(',').map((part) => {
            const length = integerFlag('--order-lengths', part.trim(), 2);
            if (length > MAX_ENTRIES_PER_ORDER) {
              throw new UsageError(
                `--order-lengths: ${length} is over ${MAX_ENTRIES_PER_ORDER}, the most entries an order can have`,
              );
            }
            return length;
          });
  }
  set('orderLengthEntries', integer('order-length-entries', 1));
  set('npmStartOrders', integer('npm-start-orders', 0));
  set('coldStartRounds', integer('cold-start-rounds', 0));
  set('twinRounds', integer('twin-rounds', 1));
  set('only', oneOf('only', BENCH_PARTS));
  if (parsed.values.has('no-naive')) options.naive = false;
  if (parsed.values.has('no-sessions-table')) options.sessionsTable = false;
  if (parsed.values.has('no-twin')) options.twin = false;
  if (parsed.values.has('no-model')) options.azureModel = false;
  const json = raw('json');
  return json === undefined ? { options } : { options, json };
}
