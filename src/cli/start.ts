/**
 * `npm start`: runs the whole pipeline on the embedded runtime (CONTRACTS 3). Exit code 0 when the
 * run completed, whatever the input held; 2 with a message when it could not run.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseCatalog } from '../adapters/settings';
import { ConfigurationError, PermanentError } from '../domain/errors';
import { HELP, parseCliArgs, UsageError, type CliOptions } from './start-args';
import { parseInputFile, type InputLine } from './input-file';
import { createEmbeddedApp, type EmbeddedApp } from '../embedded/app';
import type { Report } from '../embedded/report';
import { textTable } from './text-table';
import { runMain } from './run-main';

/** The package root, found from here whether this runs compiled (dist/src/cli) or from source. */
function packageRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

const SAMPLES = join(packageRoot(), 'samples');

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
}

function loadInput(options: CliOptions): {
  name: string;
  messages: InputLine[];
  catalog: Record<string, number>;
} {
  const inputPath = options.input ?? resolve(SAMPLES, 'ledger.ndjson');
  const catalogPath =
    options.catalog ?? (options.input === undefined ? resolve(SAMPLES, 'catalog.json') : undefined);
  let catalog: Record<string, number> = {};
  if (catalogPath !== undefined) {
    try {
      catalog = parseCatalog(readText(catalogPath, '--catalog'), '--catalog');
    } catch (error) {
      if (error instanceof ConfigurationError) throw new UsageError(`${catalogPath}: ${error.message}`);
      throw error;
    }
  }
  return { name: inputPath, messages: parseInputFile(readText(inputPath, '--input'), inputPath), catalog };
}

function progressLine(app: EmbeddedApp): string {
  const host = app.host.stats();
  const broker = app.broker.stats();
  const parked = broker['parked']?.sent ?? 0;
  return (
    `messages done ${host.succeeded}  active sessions ${host.activeSessions}  ` +
    `parked ${parked}  duplicates ${app.telemetry.total('entries.duplicate')}  ` +
    `buffered ${app.telemetry.total('entries.buffered')}`
  );
}

export function summary(report: Report, seconds: number): string {
  const orders = textTable([
    ['order', 'status', 'total', 'applied', 'waiting for', 'saga', 'reason'],
    ...report.orders.map((order) => [
      order.orderId,
      order.status,
      String(order.total),
      String(order.appliedSequence),
      order.waitingFor === null ? '-' : String(order.waitingFor),
      order.saga?.status ?? '-',
      order.saga?.reason ?? '',
    ]),
  ]);
  const byReason = new Map<string, number>();
  for (const parked of report.parked) byReason.set(parked.reason, (byReason.get(parked.reason) ?? 0) + 1);
  const parked = textTable([
    ['parked reason', 'count'],
    ...[...byReason].map(([reason, count]) => [reason, String(count)]),
  ]);
  const s = report.stats;
  return [
    orders,
    '',
    parked,
    '',
    `messages ${s.messages}  applied ${s.applied}  duplicates ${s.duplicates}  parked ${s.parked}  ` +
      `dead-lettered ${s.deadLettered}  buffered ${s.buffered}  (${seconds.toFixed(2)} s)`,
  ].join('\n');
}

export async function main(argv: readonly string[]): Promise<number> {
  let options: CliOptions;
  let input: ReturnType<typeof loadInput>;
  try {
    options = parseCliArgs(argv);
    if (options.help) {
      process.stdout.write(`${HELP}\n`);
      return 0;
    }
    input = loadInput(options);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }

  const started = Date.now();
  const app = createEmbeddedApp({
    seed: options.seed,
    faults: options.faults,
    maxConcurrentSessions: options.maxConcurrentSessions,
    catalog: input.catalog,
    creditLimit: options.creditLimit,
    sessionIdleTimeoutMs: options.sessionIdleMs,
    log: () => undefined,
  });
  const live = process.stdout.isTTY === true && !options.quiet;
  const ticker = live
    ? setInterval(() => process.stdout.write(`\r${progressLine(app)}\x1b[K`), 100)
    : undefined;
  try {
    for (const message of input.messages) {
      try {
        await app.sendLedger([message]);
      } catch (error) {
        // Checked before the run with the broker's own measures; should a refusal still come, it names the line.
        if (!(error instanceof PermanentError)) throw error;
        process.stderr.write(`${message.where}: the broker refused it: ${error.message}\n`);
        await app.stop();
        return 2;
      }
    }
    await app.drain();
  } finally {
    if (ticker !== undefined) clearInterval(ticker);
    if (live) process.stdout.write(`\r${progressLine(app)}\x1b[K\n`);
  }
  const report = await app.report();
  await app.stop();

  if (options.report !== undefined) writeFileSync(options.report, `${JSON.stringify(report, null, 2)}\n`);
  if (!options.quiet) {
    process.stdout.write(`ran ${input.messages.length} ledger messages from ${input.name}\n\n`);
    process.stdout.write(`${summary(report, (Date.now() - started) / 1000)}\n`);
    if (options.report !== undefined) process.stdout.write(`\nreport written to ${options.report}\n`);
  }
  return 0;
}

if (require.main === module) runMain(() => main(process.argv.slice(2)), 'the run');
