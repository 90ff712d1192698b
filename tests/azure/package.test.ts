/**
 * Deploying from a fresh clone, as azd does it. For a Node service azd runs `npm install`, the
 * `build` script (its build step), the service's prepackage hook, `build` again (its package step),
 * and then deploys the folder `dist` names, refusing an empty or missing one (Azure/azure-dev
 * cli/azd/pkg/project/framework_service_node.go: Restore, Build, Package). Here that sequence runs
 * on a copy of the repository's files (what a clone holds; `node_modules` linked for the install),
 * and the folder's entry point (its package.json `main`) is then loaded as the Node worker loads it,
 * with the stand-in `@azure/functions-core`: it must register every function with the same binding
 * metadata as the app's TypeScript entry point.
 */
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import type { RegisteredFunction } from '../../local/worker/core';
import { workerRegistrations } from '../support/azure-entry';

const ROOT = resolve(__dirname, '..', '..');

interface HookConfig {
  run?: string;
  shell?: string;
  posix?: HookConfig;
}

interface ServiceConfig {
  project: string;
  dist: string;
  language: string;
  host: string;
  remoteBuild?: boolean;
  hooks?: Record<string, HookConfig>;
}

const AZURE_YAML = parse(readFileSync(join(ROOT, 'azure.yaml'), 'utf8')) as {
  services: Record<string, ServiceConfig>;
};
const SERVICE = AZURE_YAML.services.api;

/** The files a clone of the repository holds: tracked ones, and new ones git does not ignore. */
function repositoryFiles(): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file !== '' && existsSync(join(ROOT, file)));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** A hook as azd runs it on Linux: its `posix` block where it has one, else its own `run`. */
function hookCommand(hook: HookConfig | undefined): string | undefined {
  return hook?.posix?.run ?? hook?.run;
}

function shapes(functions: readonly RegisteredFunction[]): Map<string, unknown> {
  return new Map(
    functions.map((fn) => [fn.metadata.name, JSON.parse(JSON.stringify(fn.metadata.bindings)) as unknown]),
  );
}

describe('azure.yaml', () => {
  it('deploys the project root as a Node function app from a folder its prepackage hook makes', () => {
    expect(SERVICE).toMatchObject({ project: '.', language: 'js', host: 'function', remoteBuild: false });
    expect(hookCommand(SERVICE.hooks?.prepackage)).toBe('npm run package');
    // azd's build step writes dist/ of the TypeScript build, never the folder it deploys.
    const outDir = (
      JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: { outDir: string } }
    ).compilerOptions.outDir;
    expect(SERVICE.dist.startsWith(`${outDir}/`)).toBe(false);
  });
});

describe('azd on a fresh clone: install, build, prepackage, build, the folder azure.yaml names', () => {
  let dir: string;
  let project: string;
  let steps: Array<{ step: string; run: SpawnSyncReturns<string> }>;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'azd-clone-'));
    project = join(dir, 'repo');
    for (const file of repositoryFiles()) {
      mkdirSync(dirname(join(project, file)), { recursive: true });
      copyFileSync(join(ROOT, file), join(project, file));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
    const npm = (step: string, command: string) => ({
      step,
      run: spawnSync('sh', ['-c', command], { cwd: project, encoding: 'utf8' }),
    });
    steps = [npm('build', 'npm run build')];
    const prepackage = hookCommand(SERVICE.hooks?.prepackage);
    if (prepackage !== undefined) steps.push(npm('prepackage hook', prepackage));
    // azd's package step runs `build` again; it writes dist/ again and nothing else (checked above),
    // so the folder is what the hook made.
  }, 180_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every step to exit 0', () => {
    expect(
      steps.map(({ step, run }) => ({
        step,
        status: run.status,
        stderr: run.status === 0 ? '' : run.stderr,
      })),
    ).toEqual(steps.map(({ step }) => ({ step, status: 0, stderr: '' })));
    expect(steps.at(-1)?.run.stdout).toMatch(
      /^package: .*package\/app\/ and .*package\/app\.zip \(\d+\.\d MB\)\n$/m,
    );
  });

  it('leaves the folder azure.yaml names holding the app: a bundle, host.json and package.json, and nothing to install', () => {
    const app = join(project, SERVICE.dist);
    const files = filesUnder(app)
      .map((file) =>
        file
          .slice(app.length + 1)
          .split('\\')
          .join('/'),
      )
      .sort();
    const deployed = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(files).toEqual([deployed.main, 'host.json', 'package.json'].sort());
    expect(readFileSync(join(app, 'host.json'), 'utf8')).toBe(readFileSync(join(ROOT, 'host.json'), 'utf8'));
    expect(Object.hasOwn(deployed, 'dependencies')).toBe(false);
    expect(Object.hasOwn(deployed, 'devDependencies')).toBe(false);
    expect(Object.hasOwn(deployed, 'scripts')).toBe(false);
    // The only module the bundle leaves to the runtime is the one the Node worker provides.
    const bundle = readFileSync(join(app, String(deployed.main)), 'utf8');
    const external = [...bundle.matchAll(/\brequire\("([^"]+)"\)/g)]
      .map((match) => match[1])
      .filter((specifier) => !specifier.startsWith('node:') && !builtinModules.includes(specifier));
    expect([...new Set(external)]).toEqual(['@azure/functions-core']);
  });

  it("registers every function of the app's entry point, with the same binding metadata", () => {
    const app = join(project, SERVICE.dist);
    const main = (JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { main: string }).main;
    const deployed = shapes(workerRegistrations(join(app, main)));
    const source = shapes(workerRegistrations(join(ROOT, 'src', 'functions', 'index')));
    expect(deployed.size).toBeGreaterThan(20);
    expect([...deployed.keys()].sort()).toEqual([...source.keys()].sort());
    for (const [name, bindings] of source)
      expect({ name, bindings: deployed.get(name) }).toEqual({ name, bindings });
  });

  it('registers the same functions with Application Insights on, as every Azure deployment has it', () => {
    const app = join(project, SERVICE.dist);
    const main = (JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { main: string }).main;
    const registered = workerRegistrations(join(app, main), {
      ServiceBusConnection__fullyQualifiedNamespace: 'orders-test.servicebus.windows.net',
      CosmosDb__accountEndpoint: 'https://orders-test.documents.azure.com:443/',
      APPLICATIONINSIGHTS_CONNECTION_STRING:
        'InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://127.0.0.1:9/',
    });
    expect(registered.length).toBeGreaterThan(20);
  });

  it('refuses a bad flag in one line with exit 2', () => {
    const bad = spawnSync(process.execPath, [join(project, 'scripts', 'package-app.js'), '--level', 'x'], {
      encoding: 'utf8',
    });
    expect({ status: bad.status, stderr: bad.stderr }).toEqual({
      status: 2,
      stderr: 'package: --level must be a digit 0-9, got "x"\n',
    });
  });
});
