/**
 * The cold-start row's parts that need no child process: which files an unbundled deployment
 * holds (its production dependencies, resolved as Node resolves them), and the targets on made-up
 * rows (PASS and FAIL at the thresholds; no timing is asserted).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Script } from 'node:vm';
import {
  builtinsAlone,
  bundleComposition,
  bundleCostApart,
  COLD_START_ENV,
  coldStartTargets,
  formatColdStart,
  parsedNotRun,
  productionPackageDirs,
  type ColdStartReference,
  type ColdStartRow,
  type ColdStartSide,
} from '../../bench/cold-start';
import { readSettings, SETTING } from '../../src/adapters/settings';

function write(path: string, content: object | string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
}

describe('the files of an unbundled deployment', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'cold-start-tree-'));
    write(join(root, 'package.json'), { dependencies: { a: '1' }, devDependencies: { tool: '1' } });
    write(join(root, 'node_modules', 'a', 'package.json'), { dependencies: { b: '1', c: '1' } });
    write(join(root, 'node_modules', 'a', 'index.js'), '');
    // a's own b (nested) wins over the hoisted one, which nothing else needs.
    write(join(root, 'node_modules', 'a', 'node_modules', 'b', 'package.json'), {});
    write(join(root, 'node_modules', 'b', 'package.json'), {});
    write(join(root, 'node_modules', 'c', 'package.json'), { optionalDependencies: { missing: '1' } });
    write(join(root, 'node_modules', 'tool', 'package.json'), {});
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('are the production dependencies, transitively, each where Node finds it from its dependent', () => {
    expect(productionPackageDirs(root).map((dir) => relative(root, dir))).toEqual([
      join('node_modules', 'a'),
      join('node_modules', 'a', 'node_modules', 'b'),
      join('node_modules', 'c'),
    ]);
  });
});

const side = (label: 'bundle' | 'unbundled', medianCpuMs: number, files: number): ColdStartSide => ({
  label,
  entry: label === 'bundle' ? 'package/app/dist/index.js' : 'dist/src/functions/index.js',
  files,
  bytes: files * 1000,
  cpuMs: [medianCpuMs],
  medianCpuMs,
  loadCpuMs: [medianCpuMs],
  medianLoadCpuMs: medianCpuMs,
  modules: label === 'bundle' ? 1 : 1000,
  registered: 24,
});

const row = (bundleMs: number, unbundledMs: number, packageFiles = 3): ColdStartRow => ({
  rounds: 1,
  settleMs: 200,
  bundle: side('bundle', bundleMs, packageFiles),
  unbundled: side('unbundled', unbundledMs, 20_000),
  ratio: unbundledMs / bundleMs,
  largestInputs: [{ name: '@azure/cosmos', bytes: 700_000, share: 0.5 }],
  references: [],
});

const reference = (label: ColdStartReference['label'], medianCpuMs: number): ColdStartReference => ({
  label,
  bytes: 2_000_000,
  cpuMs: [medianCpuMs],
  medianCpuMs,
});

describe("the row's settings", () => {
  it('are every app setting the Bicep gives the code, so the load builds what it builds on Azure', () => {
    for (const name of Object.values(SETTING)) expect(COLD_START_ENV).toHaveProperty([name]);
    const settings = readSettings(COLD_START_ENV);
    // The managed identity credential, as on Azure, not the CLI logins of `func start`.
    expect(settings.managedIdentityClientId).toBeDefined();
    expect(settings.applicationInsightsConnectionString).toBeDefined();
  });

  it("include the platform's own WEBSITE_SITE_NAME, by which the exporter knows it runs on App Service", () => {
    // Without it the Azure Monitor exporter's statsbeat asks the VM metadata endpoint at start
    // (@azure/monitor-opentelemetry-exporter, export/statsbeat/statsbeatMetrics.js
    // getResourceProvider), which a Function App never does.
    expect(COLD_START_ENV.WEBSITE_SITE_NAME).toMatch(/\S/);
  });
});

describe('the cold-start targets', () => {
  it('pass at 4x less CPU than the unbundled entry and fail below', () => {
    expect(coldStartTargets(row(250, 1000))[0].pass).toBe(true);
    expect(coldStartTargets(row(251, 1000))[0].pass).toBe(false);
    expect(coldStartTargets(row(500, 1000))[0].detail).toMatch(/^2\.00x: 500 vs 1000 ms CPU/);
  });

  it('fail when the two entries do not register the same functions, however fast', () => {
    const broken = row(100, 1000);
    broken.bundle.registered = 0;
    expect(coldStartTargets(broken)[0].pass).toBe(false);
  });

  it('hold the package to 100 files', () => {
    expect(coldStartTargets(row(250, 1000, 100))[1].pass).toBe(true);
    expect(coldStartTargets(row(250, 1000, 101))[1].pass).toBe(false);
    expect(coldStartTargets(null)).toEqual([]);
  });

  it('print both entries and the ratio, with a connection string that sends nowhere', () => {
    const text = formatColdStart(row(500, 1000));
    expect(text).toMatch(/^bundle\s+package\/app\/dist\/index\.js\s+500\s/m);
    expect(text).toMatch(/^unbundled\s+dist\/src\/functions\/index\.js\s+1000\s/m);
    expect(text).toContain('unbundled / bundle: 2.00x');
    expect(COLD_START_ENV.APPLICATIONINSIGHTS_CONNECTION_STRING).toMatch(
      /IngestionEndpoint=https:\/\/127\.0\.0\.1:9\//,
    );
  });
});

describe("the bundle's composition", () => {
  it('adds up each package, nested copies under their own name, and the app apart', () => {
    const metafile = {
      outputs: {
        'app/dist/index.js': {
          bytes: 1000,
          inputs: {
            'node_modules/@azure/cosmos/dist/a.js': { bytesInOutput: 300 },
            'node_modules/@azure/cosmos/dist/b.js': { bytesInOutput: 200 },
            'node_modules/x/node_modules/@azure/cosmos/c.js': { bytesInOutput: 100 },
            'node_modules/moment/moment.js': { bytesInOutput: 250 },
            'src/functions/index.ts': { bytesInOutput: 150 },
          },
        },
      },
    };
    expect(bundleComposition(metafile)).toEqual([
      { name: '@azure/cosmos', bytes: 600, share: 0.6 },
      { name: 'moment', bytes: 250, share: 0.25 },
      { name: '(the app: src/)', bytes: 150, share: 0.15 },
    ]);
    expect(bundleComposition(metafile, 1)).toHaveLength(1);
  });
});

describe('the reference loads beside the bundle', () => {
  it('parse the bundle without running any of it, whatever its last line is', () => {
    const context: { ran?: boolean } = {};
    new Script(parsedNotRun('globalThis.ran = true; // the last line is a comment')).runInNewContext(context);
    expect(context.ran).toBeUndefined();
    // Parsed, not skipped: a syntax error anywhere in it fails the load.
    expect(() => new Script(parsedNotRun('function inner() { return 1 +; }'))).toThrow(/Unexpected token/);
  });

  it("require the bundle's external built-ins once each, and not the worker's module or a package", () => {
    const metafile = {
      outputs: {
        'a.js': {
          bytes: 1,
          inputs: {},
          imports: [
            { path: 'node:crypto', external: true },
            { path: 'http', external: true },
            { path: '@azure/functions-core', external: true },
            { path: 'node_modules/x/index.js' },
          ],
        },
        'b.js': { bytes: 1, inputs: {}, imports: [{ path: 'http', external: true }] },
      },
    };
    expect(builtinsAlone(metafile)).toBe('require("http");\nrequire("node:crypto");\n');
  });

  it("take the bundle's CPU apart into parsing, built-ins and what its code runs", () => {
    const apart = row(300, 900);
    apart.references = [reference('parsed', 130), reference('builtins', 45), reference('defaults', 420)];
    expect(bundleCostApart(apart)).toEqual({ parsedMs: 130, builtinsMs: 45, runMs: 125 });
    expect(bundleCostApart(row(300, 900))).toBeNull();
    const text = formatColdStart(apart);
    expect(text).toMatch(/^the bundle read and parsed, none of it run\s+130\s+2\.0$/m);
    expect(text).toMatch(/^the same entry bundled with esbuild's defaults\s+420\s+2\.0$/m);
    expect(text).toContain(
      "the bundle's 300 ms: 130 reading and parsing it, 45 Node's built-ins, 125 what its code runs",
    );
  });
});
