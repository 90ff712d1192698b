/**
 * The bench's cold-start row: what loading the app costs a fresh Functions worker, for the entry
 * point that deploys (`npm run package`'s esbuild bundle, scripts/package-app.js) beside the
 * unbundled build (`dist/src/functions/index.js` with node_modules). Each load runs in a fresh
 * `node` process (./cold-start-probe) with the settings every Azure deployment has, Application
 * Insights' connection string included (a syntactically valid one whose endpoint is 127.0.0.1:9:
 * nothing is sent, and what is measured is CPU time, which no network wait inflates). The loads
 * take turns, each round starting one further along, and each reports the median of its rounds.
 *
 * Beside the two entries, reference loads take the bundle's cost apart and show what other
 * packagings of the same entry would cost (REFERENCE_LOADS): the bundle read and parsed but never
 * run, Node's built-in modules it requires alone, and two other esbuild settings.
 *
 * Targets: the package's entry loads with at least COLD_START_MIN_RATIO times less CPU than the
 * unbundled entry, and the package holds at most COLD_START_MAX_PACKAGE_FILES files.
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULTS, SETTING } from '../src/adapters/settings';
import { textTable } from '../tools/cli/text-table';
import type { BenchTarget } from './results';
import type { ColdStartProbeReport } from './cold-start-probe';
import { repositoryRoot } from './repo-root';

const run = promisify(execFile);

export const COLD_START_MIN_RATIO = 4;
export const COLD_START_MAX_PACKAGE_FILES = 100;
/** How long each child lets what the load deferred (immediates, short timers) run before it reports. */
export const COLD_START_SETTLE_MS = 200;

/**
 * What a Function App's process has at load: every app setting the Bicep gives it (the code's
 * settings, src/adapters/settings.ts; with its default parameters) and the platform's
 * `WEBSITE_SITE_NAME`, by which the Azure Monitor exporter knows it runs on App Service (without it
 * the exporter's statsbeat asks the VM metadata endpoint at start: export/statsbeat/statsbeatMetrics.js
 * `getResourceProvider`). `AZURE_CLIENT_ID` makes the entry build the managed identity credential,
 * as on Azure. Nothing here reaches a network: no token is asked for at load, and the ingestion
 * endpoint is 127.0.0.1:9.
 */
export const COLD_START_ENV: Readonly<Record<string, string>> = {
  [SETTING.serviceBusNamespace]: 'orders-bench.servicebus.windows.net',
  [SETTING.cosmosEndpoint]: 'https://orders-bench.documents.azure.com:443/',
  [SETTING.cosmosDatabase]: DEFAULTS.cosmosDatabase,
  [SETTING.managedIdentityClientId]: '00000000-0000-0000-0000-000000000001',
  [SETTING.taskHubName]: DEFAULTS.taskHubName,
  [SETTING.applicationInsightsConnectionString]:
    'InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://127.0.0.1:9/',
  [SETTING.catalog]: '{}',
  [SETTING.creditLimit]: String(DEFAULTS.creditLimit),
  [SETTING.cancellationFeePercent]: String(DEFAULTS.cancellationFeePercent),
  [SETTING.retryFirstIntervalMs]: String(DEFAULTS.retry.firstIntervalMs),
  [SETTING.retryBackoffCoefficient]: String(DEFAULTS.retry.backoffCoefficient),
  [SETTING.retryMaxIntervalMs]: String(DEFAULTS.retry.maxIntervalMs),
  [SETTING.retryMaxAttempts]: String(DEFAULTS.retry.maxAttempts),
  [SETTING.reviewTimeoutMinutes]: String(DEFAULTS.reviewTimeoutMinutes),
  [SETTING.duplicateDetectionWindow]: DEFAULTS.duplicateDetectionWindow,
  // Service Bus Standard's limit, as the Bicep writes it for the default tier.
  [SETTING.maxMessageBytes]: String(256 * 1024),
  [SETTING.telemetrySamplingRatio]: String(DEFAULTS.telemetrySamplingRatio),
  WEBSITE_SITE_NAME: 'orders-bench',
};

export interface ColdStartSide {
  label: 'bundle' | 'unbundled';
  /** The entry point, relative to the repository (the bundle's: inside the staged package). */
  entry: string;
  /** Files the deployment holds: the package's, or dist/src plus the production node_modules. */
  files: number;
  bytes: number;
  /** Each round's CPU of the load, settle window included (what the targets judge), ms. */
  cpuMs: number[];
  medianCpuMs: number;
  /** Each round's CPU of the synchronous require alone, ms. */
  loadCpuMs: number[];
  medianLoadCpuMs: number;
  modules: number;
  registered: number;
}

/** One npm package's (or the app's own sources') share of the bundle, from esbuild's metafile. */
export interface BundleInput {
  name: string;
  bytes: number;
  share: number;
}

/** What each reference load is, in the order the row prints them (ColdStartReference.label). */
export const REFERENCE_LOADS = {
  parsed: 'the bundle read and parsed, none of it run',
  builtins: 'the Node built-in modules it requires, alone',
  names: 'the same bundle with identifiers minified too',
  defaults: "the same entry bundled with esbuild's defaults",
} as const;

export type ReferenceLabel = keyof typeof REFERENCE_LOADS;
const REFERENCE_LABELS = Object.keys(REFERENCE_LOADS) as ReferenceLabel[];

/** A load beside the two entries, in the same rounds, that takes the bundle's cost apart. */
export interface ColdStartReference {
  label: ReferenceLabel;
  bytes: number;
  cpuMs: number[];
  medianCpuMs: number;
}

export interface ColdStartRow {
  rounds: number;
  settleMs: number;
  bundle: ColdStartSide;
  unbundled: ColdStartSide;
  /** unbundled.medianCpuMs / bundle.medianCpuMs. */
  ratio: number;
  /** The bundle's largest inputs by package, largest first. */
  largestInputs: BundleInput[];
  references: ColdStartReference[];
}

interface Metafile {
  outputs: Record<
    string,
    {
      bytes: number;
      inputs: Record<string, { bytesInOutput: number }>;
      imports?: { path: string; external?: boolean }[];
    }
  >;
}

/**
 * The bundle's source inside a function declaration that nothing calls: loading it reads the file
 * and pre-parses all of it (V8 compiles a declared function lazily, on its first call), and runs
 * none of it.
 */
export function parsedNotRun(source: string): string {
  return `function parsedNotRun() {\n${source}\n}\n`;
}

/** A script that requires the Node built-in modules the bundle requires, and nothing else. */
export function builtinsAlone(metafile: Metafile): string {
  const builtins = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const { path, external } of output.imports ?? [])
      if (external === true && isBuiltin(path)) builtins.add(path);
  }
  return [...builtins]
    .sort()
    .map((name) => `require(${JSON.stringify(name)});\n`)
    .join('');
}

/** What the bundle's CPU is made of, from the medians: parsing, Node's built-ins, and what its code runs. */
export function bundleCostApart(row: Pick<ColdStartRow, 'bundle' | 'references'>): {
  parsedMs: number;
  builtinsMs: number;
  runMs: number;
} | null {
  const median = (label: ReferenceLabel): number | undefined =>
    row.references.find((reference) => reference.label === label)?.medianCpuMs;
  const parsedMs = median('parsed');
  const builtinsMs = median('builtins');
  if (parsedMs === undefined || builtinsMs === undefined) return null;
  return { parsedMs, builtinsMs, runMs: row.bundle.medianCpuMs - parsedMs - builtinsMs };
}

/** What each package (the innermost node_modules folder of an input), or the app itself, adds to the bundle. */
export function bundleComposition(metafile: Metafile, top = 12): BundleInput[] {
  const byName = new Map<string, number>();
  let total = 0;
  for (const output of Object.values(metafile.outputs)) {
    total += output.bytes;
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const inner = input.split('node_modules/').at(-1) ?? input;
      const name = input.includes('node_modules/')
        ? (/^((?:@[^/]+\/)?[^/]+)/.exec(inner)?.[1] ?? inner)
        : '(the app: src/)';
      byName.set(name, (byName.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...byName]
    .map(([name, bytes]) => ({ name, bytes, share: total > 0 ? bytes / total : 0 }))
    .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name))
    .slice(0, top);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function filesUnder(dir: string, skip: (name: string) => boolean = () => false): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skip(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path, skip));
    else if (entry.isFile()) found.push(path);
  }
  return found;
}

interface PackageJson {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/**
 * The folders of the production dependencies, transitively, as Node resolves them from each
 * dependent (its own node_modules first, then each parent folder's): what an unbundled deployment
 * ships. Optional and peer dependencies count where they are installed.
 */
export function productionPackageDirs(root: string): string[] {
  const found = new Set<string>();
  const visit = (from: string): void => {
    const pkg = JSON.parse(readFileSync(join(from, 'package.json'), 'utf8')) as PackageJson;
    const names = new Set([
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(pkg.optionalDependencies ?? {}),
      ...Object.keys(pkg.peerDependencies ?? {}),
    ]);
    for (const name of names) {
      for (let dir = from; ; dir = dirname(dir)) {
        const candidate = join(dir, 'node_modules', name);
        if (existsSync(join(candidate, 'package.json'))) {
          if (!found.has(candidate)) {
            found.add(candidate);
            visit(candidate);
          }
          break;
        }
        if (dirname(dir) === dir || relative(root, dir).startsWith('..')) break;
      }
    }
  };
  visit(root);
  return [...found].sort();
}

function sizeOf(files: readonly string[]): number {
  return files.reduce((sum, file) => sum + statSync(file).size, 0);
}

/** The files the unbundled deployment would hold: dist/src, package.json, host.json and the production node_modules. */
export function unbundledFiles(root: string): string[] {
  return [
    ...filesUnder(join(root, 'dist', 'src')),
    join(root, 'package.json'),
    join(root, 'host.json'),
    ...productionPackageDirs(root).flatMap((dir) => filesUnder(dir, (name) => name === 'node_modules')),
  ];
}

async function probe(
  script: string,
  entry: string,
  later: readonly string[],
  scratch: string,
): Promise<ColdStartProbeReport> {
  // A clean environment: the deployment's settings, and a temp folder of the row's own for any
  // file an SDK writes at load.
  const env = { PATH: process.env.PATH ?? '', HOME: scratch, TMPDIR: scratch, ...COLD_START_ENV };
  const { stdout } = await run(process.execPath, [script, String(COLD_START_SETTLE_MS), entry, ...later], {
    env,
    maxBuffer: 1 << 20,
  });
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as ColdStartProbeReport;
}

interface PackageApp {
  packageApp(options: { out: string; level: number }): Promise<{ appDir: string; metafile: Metafile }>;
  bundleOptions(outfile: string): Record<string, unknown>;
}

/**
 * Writes the reference loads (REFERENCE_LOADS) into `dir`: the bundle wrapped so that it is parsed
 * and never run, a script of its built-ins, and the same entry built by esbuild with identifiers
 * minified too, and with esbuild's defaults (each package's `require` build, no substitutes,
 * nothing minified) instead of the package's choices.
 */
async function writeReferenceLoads(
  packager: PackageApp,
  bundleEntry: string,
  metafile: Metafile,
  dir: string,
): Promise<Record<ReferenceLabel, string>> {
  mkdirSync(dir, { recursive: true });
  const files: Record<ReferenceLabel, string> = {
    parsed: join(dir, 'parsed.js'),
    builtins: join(dir, 'builtins.js'),
    names: join(dir, 'names.js'),
    defaults: join(dir, 'defaults.js'),
  };
  writeFileSync(files.parsed, parsedNotRun(readFileSync(bundleEntry, 'utf8')));
  writeFileSync(files.builtins, builtinsAlone(metafile));
  // esbuild is the packager's own dependency, as scripts/package-app.js loads it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const esbuild = require('esbuild') as { build(options: Record<string, unknown>): Promise<unknown> };
  await esbuild.build({ ...packager.bundleOptions(files.names), minifyIdentifiers: true });
  await esbuild.build({
    ...packager.bundleOptions(files.defaults),
    plugins: [],
    mainFields: undefined,
    minifyWhitespace: false,
    minifySyntax: false,
  });
  return files;
}

export async function runColdStartRow(
  rounds: number,
  progress: (line: string) => void,
): Promise<ColdStartRow> {
  const root = repositoryRoot();
  const script = join(__dirname, 'cold-start-probe.js');
  const unbundledEntry = join(root, 'dist', 'src', 'functions', 'index.js');
  for (const file of [script, unbundledEntry]) {
    if (!existsSync(file)) throw new Error(`the cold-start row runs from the build: ${file} is missing`);
  }
  const scratch = mkdtempSync(join(tmpdir(), 'bench-cold-start-'));
  try {
    progress('cold start: npm run package into a temp folder ...');
    // scripts/package-app.js is plain JavaScript, loaded from the repository as npm run package runs it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const packager = require(join(root, 'scripts', 'package-app.js')) as PackageApp;
    const { appDir, metafile } = await packager.packageApp({ out: join(scratch, 'package'), level: 0 });
    const main = (JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8')) as { main: string }).main;
    const packageFiles = filesUnder(appDir);
    const bundleEntry = join(appDir, main);
    // Every other script of the package (chunks a split bundle loads on first use) is loaded too.
    const chunks = packageFiles.filter((file) => file !== bundleEntry && /\.(c|m)?js$/.test(file));
    const referenceFiles = await writeReferenceLoads(
      packager,
      bundleEntry,
      metafile,
      join(scratch, 'references'),
    );
    const bundleLoad = {
      label: 'bundle',
      entry: bundleEntry,
      later: chunks,
      reports: [] as ColdStartProbeReport[],
    };
    const unbundledLoad = {
      label: 'unbundled',
      entry: unbundledEntry,
      later: [],
      reports: [] as ColdStartProbeReport[],
    };
    const referenceLoads = REFERENCE_LABELS.map((label) => ({
      label,
      entry: referenceFiles[label],
      later: [],
      reports: [] as ColdStartProbeReport[],
    }));
    const loads = [bundleLoad, unbundledLoad, ...referenceLoads];
    for (let round = 1; round <= rounds; round += 1) {
      // Each round starts one load further along, so that no load is always first or last.
      for (let turn = 0; turn < loads.length; turn += 1) {
        const load = loads[(round - 1 + turn) % loads.length];
        const report = await probe(script, load.entry, load.later, scratch);
        load.reports.push(report);
        progress(
          `  cold start round ${round} of ${rounds}, ${load.label}: ${report.settledCpuMs.toFixed(0)} ms CPU, ${report.modules} modules`,
        );
      }
    }
    const unbundled = unbundledFiles(root);
    const side = (
      label: 'bundle' | 'unbundled',
      entry: string,
      files: readonly string[],
      reports: readonly ColdStartProbeReport[],
    ): ColdStartSide => ({
      label,
      entry: label === 'bundle' ? join('package', 'app', main) : relative(root, entry),
      files: files.length,
      bytes: sizeOf(files),
      cpuMs: reports.map((report) => report.settledCpuMs),
      medianCpuMs: median(reports.map((report) => report.settledCpuMs)),
      loadCpuMs: reports.map((report) => report.loadCpuMs),
      medianLoadCpuMs: median(reports.map((report) => report.loadCpuMs)),
      modules: Math.max(...reports.map((report) => report.modules)),
      registered: Math.min(...reports.map((report) => report.registered)),
    });
    const bundle = side('bundle', bundleEntry, packageFiles, bundleLoad.reports);
    const unbundledSide = side('unbundled', unbundledEntry, unbundled, unbundledLoad.reports);
    const references = referenceLoads.map((load): ColdStartReference => ({
      label: load.label,
      bytes: statSync(load.entry).size,
      cpuMs: load.reports.map((report) => report.settledCpuMs),
      medianCpuMs: median(load.reports.map((report) => report.settledCpuMs)),
    }));
    return {
      rounds,
      settleMs: COLD_START_SETTLE_MS,
      bundle,
      unbundled: unbundledSide,
      ratio: bundle.medianCpuMs > 0 ? unbundledSide.medianCpuMs / bundle.medianCpuMs : 0,
      largestInputs: bundleComposition(metafile),
      references,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

export function coldStartTargets(row: ColdStartRow | null): BenchTarget[] {
  if (row === null) return [];
  const { bundle, unbundled } = row;
  return [
    {
      target: `cold start: the package's entry loads with >= ${COLD_START_MIN_RATIO}x less CPU than the unbundled entry`,
      pass: row.ratio >= COLD_START_MIN_RATIO && bundle.registered === unbundled.registered,
      detail:
        `${row.ratio.toFixed(2)}x: ${bundle.medianCpuMs.toFixed(0)} vs ${unbundled.medianCpuMs.toFixed(0)} ms CPU ` +
        `(medians of ${row.rounds} fresh processes each; ${bundle.registered} and ${unbundled.registered} functions registered)`,
    },
    {
      target: `cold start: the package holds <= ${COLD_START_MAX_PACKAGE_FILES} files`,
      pass: bundle.files <= COLD_START_MAX_PACKAGE_FILES,
      detail: `${bundle.files} files, ${(bundle.bytes / 1e6).toFixed(1)} MB (unbundled: ${unbundled.files} files, ${(unbundled.bytes / 1e6).toFixed(1)} MB)`,
    },
  ];
}

export function formatColdStart(row: ColdStartRow): string {
  const line = (side: ColdStartSide): string[] => [
    side.label,
    side.entry,
    side.medianCpuMs.toFixed(0),
    side.medianLoadCpuMs.toFixed(0),
    side.cpuMs.map((ms) => ms.toFixed(0)).join(' '),
    String(side.modules),
    String(side.files),
    (side.bytes / 1e6).toFixed(1),
    String(side.registered),
  ];
  const header = ['entry', 'file', 'CPU ms', 'require ms', 'rounds', 'modules', 'files', 'MB', 'functions'];
  return [
    `cold start: each entry loaded in a fresh node process (${row.rounds} rounds, taking turns), with the deployment's settings`,
    'and a (fake) Application Insights connection string, the stand-in @azure/functions-core installed first',
    '',
    textTable([header, line(row.bundle), line(row.unbundled)], Number.POSITIVE_INFINITY, (column) =>
      column <= 1 || column === 4 ? 'left' : 'right',
    ),
    '',
    `CPU ms: process.cpuUsage (user + system) from the require to ${row.settleMs} ms after it (what the load deferred`,
    'included), median; require ms: the synchronous require alone; modules: CommonJS modules compiled; files, MB: what',
    `the deployment holds (unbundled: dist/src and the production node_modules). unbundled / bundle: ${row.ratio.toFixed(2)}x.`,
    '',
    "the bundle's largest inputs (esbuild metafile):",
    textTable(
      row.largestInputs.map((input) => [
        input.name,
        `${(input.bytes / 1e6).toFixed(2)} MB`,
        `${(input.share * 100).toFixed(1)} %`,
      ]),
      Number.POSITIVE_INFINITY,
      (column) => (column === 0 ? 'left' : 'right'),
    ),
    ...formatReferences(row),
  ].join('\n');
}

/** The reference loads beside the bundle, and its CPU taken apart from them. */
function formatReferences(row: ColdStartRow): string[] {
  if (row.references.length === 0) return [];
  const apart = bundleCostApart(row);
  const lines = [
    ['the bundle, as above', row.bundle.medianCpuMs.toFixed(0), (row.bundle.bytes / 1e6).toFixed(1)],
    ...row.references.map((reference) => [
      REFERENCE_LOADS[reference.label],
      reference.medianCpuMs.toFixed(0),
      (reference.bytes / 1e6).toFixed(1),
    ]),
  ];
  return [
    '',
    'beside it, in the same rounds (CPU ms, median; MB of the file loaded):',
    textTable([['load', 'CPU ms', 'MB'], ...lines], Number.POSITIVE_INFINITY, (column) =>
      column === 0 ? 'left' : 'right',
    ),
    ...(apart === null
      ? []
      : [
          '',
          `the bundle's ${row.bundle.medianCpuMs.toFixed(0)} ms: ${apart.parsedMs.toFixed(0)} reading and parsing it, ` +
            `${apart.builtinsMs.toFixed(0)} Node's built-ins, ${apart.runMs.toFixed(0)} what its code runs at load ` +
            "(the SDKs' top-level code, the clients the entry builds, and compiling what runs).",
        ]),
  ];
}
