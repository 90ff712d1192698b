/** `npm start` flags (CONTRACTS 3), parsed and validated with messages that name the flag. */
import { parseFaults, type FaultSpec } from '../embedded/faults';

export interface CliOptions {
  input: string | undefined;
  report: string | undefined;
  seed: number;
  faults: FaultSpec;
  maxConcurrentSessions: number;
  catalog: string | undefined;
  creditLimit: number | undefined;
  quiet: boolean;
}

export class UsageError extends Error {}

export const USAGE = `usage: npm start -- [--input ledger.ndjson] [--report report.json] [--seed N] [--faults SPEC]
                  [--max-concurrent-sessions N] [--catalog catalog.json] [--credit-limit N] [--quiet]
  --faults   comma-separated name=probability: duplicate, crashAfterCommit, transient, reorder, activityTransient
  With no --input the built-in sample (samples/ledger.ndjson) runs.`;

/** A flag's value as an integer of at least `min`, or a usage error naming the flag. */
export function integerFlag(flag: string, raw: string, min: number): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min)
    throw new UsageError(`${flag} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  return value;
}

export function parseCliArgs(argv: readonly string[]): CliOptions {
  const options: CliOptions = {
    input: undefined,
    report: undefined,
    seed: 1,
    faults: {},
    maxConcurrentSessions: 8,
    catalog: undefined,
    creditLimit: undefined,
    quiet: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--quiet') {
      options.quiet = true;
      continue;
    }
    if (flag === '--help' || flag === '-h') throw new UsageError(USAGE);
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--'))
      throw new UsageError(`${flag} needs a value\n${USAGE}`);
    i += 1;
    switch (flag) {
      case '--input':
        options.input = value;
        break;
      case '--report':
        options.report = value;
        break;
      case '--seed':
        options.seed = integerFlag(flag, value, 0);
        break;
      case '--faults':
        try {
          options.faults = parseFaults(value);
        } catch (error) {
          throw new UsageError((error as Error).message);
        }
        break;
      case '--max-concurrent-sessions':
        options.maxConcurrentSessions = integerFlag(flag, value, 1);
        break;
      case '--catalog':
        options.catalog = value;
        break;
      case '--credit-limit':
        options.creditLimit = integerFlag(flag, value, 0);
        break;
      default:
        throw new UsageError(`unknown flag ${flag}\n${USAGE}`);
    }
  }
  return options;
}

export interface InputLine {
  messageId: string;
  sessionId: string;
  body: unknown;
}

/** One ledger message a line; a line that is not such an object stops the run, naming the line. */
export function parseInputFile(text: string, name: string): InputLine[] {
  const messages: InputLine[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    const where = `${name}:${index + 1}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      throw new UsageError(`${where}: not valid JSON (${(error as Error).message})`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new UsageError(`${where}: must be an object {"messageId", "sessionId", "body"}`);
    }
    const record = parsed as Record<string, unknown>;
    if (typeof record.messageId !== 'string' || record.messageId === '') {
      throw new UsageError(`${where}: messageId must be a non-empty string`);
    }
    if (record.sessionId !== undefined && (typeof record.sessionId !== 'string' || record.sessionId === '')) {
      throw new UsageError(`${where}: sessionId must be a non-empty string when present`);
    }
    if (!('body' in record)) throw new UsageError(`${where}: body is missing`);
    messages.push({
      messageId: record.messageId,
      sessionId: (record.sessionId as string | undefined) ?? 'main',
      body: record.body,
    });
  });
  return messages;
}
