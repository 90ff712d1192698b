/**
 * `npm start`: runs the whole pipeline on the embedded runtime (docs/cli.md). Exit code 0 when the
 * run completed, whatever the input held; 2 with a message when it could not run.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseCatalog } from '../../src/adapters/settings';
import { ConfigurationError, errorMessage, PermanentError } from '../../src/domain/errors';
import { HELP, parseCliArgs, UsageError, type CliOptions } from './start-args';
import { readInputFile, surveyInputFile, type InputSurvey } from './input-file';
import { createEmbeddedApp, type EmbeddedApp, type EmbeddedAppOptions } from '../app';
import { snapshotOf, startProgress } from './progress';
import { summary } from './summary';
import { createTimelineRecorder, type TimelineRecorder } from '../timeline';
import { buildRunPicture, loadOf } from './run-picture';
import { renderHtml } from './html-report';
import { runMain } from '../../tools/cli/run-main';
import { writeJsonFile } from '../../tools/cli/json-file';
import { backlogOf, waitForRoom } from './pacing';
import { traceFileProcessor } from '../trace-file';
import { startMeasuredTelemetry, type MeasuredTelemetry } from '../telemetry-bytes';
import { parseFaults, type FaultSpec } from '../faults';
import { CONSOLE_PATH, serveApp, type Served } from '../serve';

/** The package root, found from here whether this runs compiled (dist/local/cli) or from source. */
function packageRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

const SAMPLES = join(packageRoot(), 'samples');

/**
 * The faults the built-in sample declares, through `--faults` as any run would (local/faults.ts):
 * the first delivery on O-26's session commits, then its instance is recycled before the completion,
 * so the redelivery meets a consumer whose cache never held the order and the store's 409 answers
 * it (README.md, "What the sample shows"). A `--faults` of the caller's replaces them.
 */
export const SAMPLE_FAULTS = 'recycleAfterCommit@O-26';

/** What `npm start`'s app keeps while it runs: enough for the report and the progress line. */
export const START_RETENTION = {
  // The report reads every saga's outcome from its record in the store, never from the driver's
  // history, and a submission redelivered after a purge finds that record ended and stops
  // (saga-activities `begin`): a finished instance can go at the next purge.
  purgeFinishedAfterMs: 0,
  // Only the metric totals feed the report and the progress line.
  keepTelemetryRecords: false,
  // A cached order is a whole parsed document; a miss costs one read. A thousand covers the orders
  // whose entries are in flight in a burst of 8 sessions many times over.
  orderCacheCapacity: 1000,
} as const satisfies EmbeddedAppOptions;

function readText(path: string, what: string): string {
  try {
    const text = readFileSync(path, 'utf8');
    return text.startsWith('\ufeff') ? text.slice(1) : text;
  } catch (error) {
    throw new UsageError(
      `cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
}

interface Input {
  path: string;
  catalog: Record<string, number>;
  faults: FaultSpec;
  survey: InputSurvey;
}

/**
 * The input checked whole before the run, and kept by none of it: the run reads the file again as
 * it sends, and the report's account once more, so a large input never sits in memory.
 */
function loadInput(options: CliOptions): Input {
  const path = options.input ?? resolve(SAMPLES, 'ledger.ndjson');
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
  const sampleRun = options.input === undefined && Object.keys(options.faults).length === 0;
  return {
    path,
    catalog,
    faults: sampleRun ? parseFaults(SAMPLE_FAULTS) : options.faults,
    survey: surveyInputFile(path, path, options.maxMessageBytes),
  };
}

export async function main(argv: readonly string[]): Promise<number> {
  let options: CliOptions;
  let input: Input;
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

  for (const warning of input.survey.warnings) process.stderr.write(`warning: ${warning}\n`);
  if (options.input !== undefined && options.catalog === undefined && !options.quiet) {
    process.stderr.write(
      'warning: --input without --catalog: no sku has stock, so every saga will compensate ' +
        'with "unknown sku"; give --catalog FILE ({"SKU-1": 100, ...}), e.g. samples/catalog.json\n',
    );
  }

  // The app's tracer provider, sampler and exporters' sizes (the report's `stats.telemetry`), and
  // with --traces every span written to the file.
  let measured: MeasuredTelemetry;
  try {
    const spanProcessors = options.traces === undefined ? [] : [traceFileProcessor(options.traces)];
    measured = startMeasuredTelemetry({ spanProcessors });
  } catch (error) {
    process.stderr.write(`npm start: could not write --traces ${options.traces}: ${errorMessage(error)}\n`);
    return 2;
  }
  try {
    return await run(options, input, measured);
  } finally {
    // Every span is on disk once it ended; this closes the file.
    await measured.shutdown();
  }
}

async function run(options: CliOptions, input: Input, measured: MeasuredTelemetry): Promise<number> {
  const started = Date.now();
  // Only a run asked for its picture records when each entry met its outcome.
  const timeline = options.html === undefined ? undefined : createTimelineRecorder();
  const app = createEmbeddedApp({
    seed: options.seed,
    faults: input.faults,
    maxConcurrentSessions: options.maxConcurrentSessions,
    catalog: input.catalog,
    creditLimit: options.creditLimit,
    maxMessageBytes: options.maxMessageBytes,
    sessionIdleTimeoutMs: options.sessionIdleMs,
    ...START_RETENTION,
    measureTelemetry: measured,
    accountInputs: () => readInputFile(input.path, input.path, options.maxMessageBytes),
    ...(timeline === undefined ? {} : { instrument: { telemetry: timeline.wrap } }),
    log: () => undefined,
  });
  // --serve listens before the run: a port it cannot have is one line and exit 2 before anything is
  // sent. It answers during the run too; its URL is printed once the run is over.
  let served: Served | undefined;
  if (options.serve) {
    try {
      served = await serveApp(app, { port: options.port });
    } catch (error) {
      process.stderr.write(
        `npm start: --serve cannot listen on 127.0.0.1:${options.port}: ${errorMessage(error)}\n`,
      );
      await app.stop();
      return 2;
    }
  }
  try {
    return await runOn(app, served, options, input, timeline, started);
  } finally {
    await served?.close();
  }
}

async function runOn(
  app: EmbeddedApp,
  served: Served | undefined,
  options: CliOptions,
  input: Input,
  timeline: TimelineRecorder | undefined,
  started: number,
): Promise<number> {
  const watching = timeline?.watch(() => loadOf(app));
  const totalEntries = input.survey.entries;
  const progress = startProgress(() => snapshotOf(app), {
    totalEntries,
    maxSessions: options.maxConcurrentSessions,
    mode: options.quiet ? 'off' : process.stdout.isTTY === true ? 'live' : 'lines',
    write: (text) => process.stdout.write(text),
  });
  try {
    for (const message of readInputFile(input.path, input.path, options.maxMessageBytes)) {
      try {
        await waitForRoom(() => backlogOf(app));
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
    progress.stop();
    watching?.stop();
  }
  const report = await app.report();
  const picture =
    timeline === undefined ? undefined : await buildRunPicture(app, report, timeline, input.path);
  if (served === undefined) await app.stop();

  // The JSON report first: a page that cannot be written must not cost the report. A path that
  // fails only when written (a full device, /proc) is one line naming it, and the exit is 1.
  const unwritten: string[] = [];
  /** The path once written, else undefined with the reason kept for the end. */
  const write = (flag: string, path: string | undefined, writeIt: (path: string) => void) => {
    if (path === undefined) return undefined;
    try {
      writeIt(path);
      return path;
    } catch (error) {
      unwritten.push(`npm start: could not write ${flag} ${path}: ${errorMessage(error)}`);
      return undefined;
    }
  };
  const reportPath = write('--report', options.report, (path) => writeJsonFile(path, report));
  const htmlPath =
    picture === undefined
      ? undefined
      : write('--html', options.html, (path) => writeFileSync(path, renderHtml(picture)));
  if (!options.quiet) {
    const text = summary(report, {
      input: input.path,
      ledgerMessages: input.survey.ledgerMessages,
      entries: totalEntries,
      seconds: (Date.now() - started) / 1000,
      reportPath,
      htmlPath,
    });
    process.stdout.write(`${text}\n`);
  }
  for (const line of unwritten) process.stderr.write(`${line}\n`);
  if (served !== undefined) {
    try {
      await serveUntilStopped(served);
    } finally {
      await app.stop();
    }
  }
  return unwritten.length === 0 ? 0 : 1;
}

/** True while `--serve` keeps the app up: a signal then closes it, and the run ends as it would have. */
let serving = false;

/**
 * `--serve`, once the run is over: the app stays up (its pumps, sagas and timers keep running, so a
 * replay is processed) until SIGINT or SIGTERM; then the server closes.
 */
async function serveUntilStopped(served: Served): Promise<void> {
  serving = true;
  process.stdout.write(
    `console: ${served.url}${CONSOLE_PATH}\n` +
      `HTTP API: ${served.url}/api/ (keys are not checked locally); Ctrl-C stops it\n`,
  );
  const signal = await new Promise<NodeJS.Signals>((resolvePromise) => {
    const stop = (received: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolvePromise(received);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  process.stdout.write(`${signal}: closing the console and the app\n`);
  await served.close();
  serving = false;
}

/**
 * Ctrl-C or a kill ends the run with the conventional 128 + signal number and a line saying that no
 * report was written, rather than Node's silent default.
 */
function exitOnSignals(): void {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      // Serving, the run is over and its report written: serveUntilStopped closes it cleanly.
      if (serving) return;
      process.stderr.write(`\nthe run was interrupted (${signal}): no report was written\n`);
      process.exit(code);
    });
  }
}

if (require.main === module) {
  exitOnSignals();
  runMain(() => main(process.argv.slice(2)), 'the run');
}
