/** `npm start` flags (docs/cli.md): one table that parses them and writes `--help`. */
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DEFAULTS } from '../../src/adapters/settings';
import { DEFAULT_MAX_MESSAGE_BYTES, parseMaxMessageBytes } from '../../src/services/message-size';
import { EMBEDDED_DEFAULTS } from '../app';
import { FAULT_NAMES, OUTAGE_NAMES, parseFaults, type FaultSpec } from '../faults';
import {
  flagHelp,
  integerFlag,
  parseFlags,
  stringFlag,
  UsageError,
  type FlagSpec,
} from '../../tools/cli/flags';

/**
 * `npm start`'s sessionIdleTimeout: 0. Each session an order's entries drained would otherwise hold
 * its pump that long with nothing to do: 50,000 orders at 100 ms and 8 sessions spent 95 % of
 * their 679 s waiting; the bench's session table shows the hold is what caps a burst.
 */
export const START_SESSION_IDLE_MS = 0;

export { integerFlag, UsageError } from '../../tools/cli/flags';

export interface CliOptions {
  help: boolean;
  input: string | undefined;
  report: string | undefined;
  html: string | undefined;
  traces: string | undefined;
  seed: number;
  faults: FaultSpec;
  maxConcurrentSessions: number;
  sessionIdleMs: number;
  catalog: string | undefined;
  creditLimit: number | undefined;
  maxMessageBytes: number;
  quiet: boolean;
  /** Keep the app, its HTTP API and the console up on 127.0.0.1 after the run (local/serve.ts). */
  serve: boolean;
  /** The port to serve on; 0: a free one. */
  port: number;
}

export const START_FLAGS: readonly FlagSpec[] = [
  {
    name: 'input',
    value: 'FILE',
    meaning: 'ledger messages, one a line: {"messageId", "sessionId", "body"}',
    default: 'the built-in sample, samples/ledger.ndjson',
  },
  {
    name: 'report',
    value: 'FILE',
    meaning: 'write the JSON report (orders, parked, dead-lettered, stats)',
    default: 'none',
  },
  {
    name: 'html',
    value: 'FILE',
    meaning: 'write one self-contained page picturing the run (no network)',
    default: 'none',
  },
  {
    name: 'traces',
    value: 'FILE',
    meaning: "write every span of the run, one JSON object a line: each order's spans share one trace",
    default: 'none',
  },
  {
    name: 'seed',
    value: 'N',
    meaning: 'seeds every injected fault, so that a run repeats',
    default: String(EMBEDDED_DEFAULTS.seed),
  },
  {
    name: 'faults',
    value: 'SPEC',
    meaning: `comma-separated name=value of ${[...FAULT_NAMES, ...OUTAGE_NAMES].join(', ')}`,
    default: 'none',
  },
  {
    name: 'max-concurrent-sessions',
    value: 'N',
    meaning: 'sessions processed in parallel (host.json maxConcurrentSessions)',
    default: String(EMBEDDED_DEFAULTS.maxConcurrentSessions),
  },
  {
    name: 'session-idle-ms',
    value: 'N',
    meaning:
      'how long a pump keeps a drained session (host.json sessionIdleTimeout); 0 by default: a local run ' +
      'simulates no round trip, so any hold is pure waiting (Azure needs a positive value; see docs/performance.md); ' +
      'at most 60000: a run waits out every hold before it ends',
    default: String(START_SESSION_IDLE_MS),
  },
  {
    name: 'catalog',
    value: 'FILE',
    meaning: '{"SKU-1": 100, ...} stock per sku; a sku not listed has none',
    default: 'samples/catalog.json without --input, else no stock at all',
  },
  {
    name: 'credit-limit',
    value: 'N',
    meaning: 'the most one charge may be, in minor units',
    default: String(DEFAULTS.creditLimit),
  },
  {
    name: 'max-message-bytes',
    value: 'N',
    meaning:
      "the queues' message size limit, as SERVICE_BUS_MAX_MESSAGE_BYTES on Azure: 262144 on Standard, " +
      '1048576 by default on Premium',
    default: String(DEFAULT_MAX_MESSAGE_BYTES),
  },
  {
    name: 'quiet',
    meaning: 'print nothing but errors and warnings of input the broker would drop',
    default: 'off',
  },
  {
    name: 'serve',
    meaning:
      "after the run, keep the app, its HTTP API (/api/...) and the operators' console up on 127.0.0.1 " +
      "until interrupted (Ctrl-C); prints the console's URL. Keys are not checked, as func start does not",
    default: 'off',
  },
  {
    name: 'port',
    value: 'N',
    meaning: 'the port --serve listens on; 0 picks a free one',
    default: '0',
  },
  { name: 'help', short: 'h', meaning: 'print this help and exit' },
];

/** The longest hold a local run takes: each drained session is held that long before the run can end. */
export const MAX_SESSION_IDLE_MS = 60_000;

export const USAGE =
  'usage: npm start -- [--input FILE] [--report FILE] [--html FILE] [--serve [--port N]] [flags...]';

export const HELP = flagHelp(
  USAGE,
  START_FLAGS,
  [
    'faults: duplicate, crashAfterCommit, transient, reorder, activityTransient... take a probability',
    'between 0 and 1 (duplicate=0.1); the outages storeOutage, sendOutage, durableOutage take',
    'seconds (storeOutage=30: the dependency down that long), and authorizationDelay too (the',
    "app's roles not yet in effect that long from the start). crashAfterCommit@ORDER and",
    'recycleAfterCommit@ORDER aim the fault at one order, once. Exit codes: 0 the run completed',
    '(with --serve: and was then interrupted), 2 a flag, file or input line it cannot use (named',
    'in one line).',
  ].join('\n'),
);

/** An output file the run can write: its directory exists and it is not itself a directory. */
export function checkOutputPath(flag: string, path: string): void {
  const full = resolve(path);
  const directory = dirname(full);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(directory).isDirectory();
  } catch {
    throw new UsageError(`${flag} ${path}: directory ${directory} does not exist`);
  }
  if (!isDirectory) throw new UsageError(`${flag} ${path}: ${directory} is not a directory`);
  try {
    if (statSync(full).isDirectory())
      throw new UsageError(`${flag} ${path} is a directory; give a file name`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
  }
  try {
    accessSync(directory, constants.W_OK);
  } catch {
    throw new UsageError(`${flag} ${path}: directory ${directory} is not writable`);
  }
}

export function parseCliArgs(argv: readonly string[]): CliOptions {
  const parsed = parseFlags(START_FLAGS, argv, { command: 'npm start' });
  const integer = (name: string, min: number, max?: number): number | undefined => {
    const raw = stringFlag(parsed, name);
    return raw === undefined ? undefined : integerFlag(`--${name}`, raw, min, max);
  };
  let faults: FaultSpec = {};
  const faultSpec = stringFlag(parsed, 'faults');
  if (faultSpec !== undefined) {
    try {
      faults = parseFaults(faultSpec);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  let maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES;
  const maxMessageBytesRaw = stringFlag(parsed, 'max-message-bytes');
  if (maxMessageBytesRaw !== undefined) {
    const limit = parseMaxMessageBytes(maxMessageBytesRaw);
    if (!limit.ok) throw new UsageError(`--max-message-bytes ${limit.problem}`);
    maxMessageBytes = limit.value;
  }
  const options: CliOptions = {
    help: parsed.values.has('help'),
    input: stringFlag(parsed, 'input'),
    report: stringFlag(parsed, 'report'),
    html: stringFlag(parsed, 'html'),
    traces: stringFlag(parsed, 'traces'),
    seed: integer('seed', 0) ?? EMBEDDED_DEFAULTS.seed,
    faults,
    maxConcurrentSessions: integer('max-concurrent-sessions', 1) ?? EMBEDDED_DEFAULTS.maxConcurrentSessions,
    sessionIdleMs: integer('session-idle-ms', 0, MAX_SESSION_IDLE_MS) ?? START_SESSION_IDLE_MS,
    catalog: stringFlag(parsed, 'catalog'),
    creditLimit: integer('credit-limit', 0),
    maxMessageBytes,
    quiet: parsed.values.has('quiet'),
    serve: parsed.values.has('serve'),
    port: integer('port', 0, 65535) ?? 0,
  };
  if (options.help) return options;
  if (parsed.values.has('port') && !options.serve) throw new UsageError('--port is for --serve; give both');
  // The files the run writes: each one a file it can write, and no two the same.
  const outputs = (['report', 'html', 'traces'] as const).flatMap((name) => {
    const path = options[name];
    return path === undefined ? [] : [{ flag: `--${name}`, path }];
  });
  for (const { flag, path } of outputs) checkOutputPath(flag, path);
  for (const [index, { flag, path }] of outputs.entries()) {
    const same = outputs.slice(index + 1).find((later) => resolve(later.path) === resolve(path));
    if (same !== undefined)
      throw new UsageError(`${flag} and ${same.flag} both name ${same.path}; give two files`);
  }
  return options;
}
