/**
 * `npm run package` (tools/package/package-app.ts): the zip holds the compiled Azure code, host.json, a
 * package.json without scripts or devDependencies, and the production dependencies only; nothing
 * local-only (embedded runtime, CLIs, bench, tests, TypeScript sources, source maps). The Azure
 * entry's import graph reaches none of the local-only code, and every file it requires is in the zip.
 *
 * The packager runs as a child process (archiver is an ES module, which Jest cannot require) on a
 * project made here: the real src/ compiled file by file (tsconfig has isolatedModules, so that is
 * what tsc emits), the real host.json and package.json, and a small node_modules with a lock that
 * has production, nested, dev, dev-optional and missing optional packages. Zipping the real
 * production dependencies (about 57,000 files) takes minutes, so the selection from the real lock
 * is checked without zipping.
 */
import { spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative } from 'node:path';
import * as ts from 'typescript';
import * as yauzl from 'yauzl';
import { productionPaths } from '../../tools/package/package-plan';

const ROOT = join(__dirname, '..', '..');
const PACKAGE_JSON = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  main: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

function readZip(file: string): Promise<Map<string, Buffer>> {
  return new Promise((done, fail) => {
    yauzl.open(file, { lazyEntries: true }, (error, zip) => {
      if (error) return fail(error);
      const files = new Map<string, Buffer>();
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError) return fail(streamError);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            files.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => done(files));
      zip.on('error', fail);
      zip.readEntry();
    });
  });
}

/** Follows `require("...")` from the entry through the zipped JavaScript. */
function requireGraph(
  files: ReadonlyMap<string, Buffer>,
  entry: string,
): { reached: string[]; bare: string[] } {
  const reached = new Set<string>();
  const bare = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (reached.has(file)) continue;
    const text = files.get(file);
    if (text === undefined) throw new Error(`${file} is required but not in the zip`);
    reached.add(file);
    for (const match of text.toString('utf8').matchAll(/\brequire\("([^"]+)"\)/g)) {
      const specifier = match[1];
      if (!specifier.startsWith('.')) {
        bare.add(specifier);
        continue;
      }
      const base = posix.normalize(posix.join(posix.dirname(file), specifier));
      const candidates = [base, `${base}.js`, `${base}/index.js`];
      const found = candidates.find((candidate) => files.has(candidate));
      if (found === undefined) throw new Error(`${file} requires ${specifier}, which is not in the zip`);
      queue.push(found);
    }
  }
  return { reached: [...reached].sort(), bare: [...bare].sort() };
}

function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** Compiled folders that are never deployed: written out here, not taken from the packager, so that the test can fail. */
const LOCAL_ONLY_PREFIXES = ['dist/local/', 'dist/bench/', 'dist/tools/'];

describe('the production dependencies of the real lock', () => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const { required, optional } = productionPaths(lock);
  const all = new Set([...required, ...optional]);

  it('include every dependency and no dev-only package', () => {
    for (const name of Object.keys(PACKAGE_JSON.dependencies)) expect(all).toContain(`node_modules/${name}`);
    // A devDependency can also be a production package's dependency (@types/node is one of
    // @azure/functions'): npm flags only the dev-only ones `dev`, and those stay out.
    const devOnly = Object.keys(PACKAGE_JSON.devDependencies).filter(
      (name) => (lock.packages as Record<string, { dev?: boolean }>)[`node_modules/${name}`]?.dev === true,
    );
    expect(devOnly).toEqual(expect.arrayContaining(['typescript', 'jest', 'archiver', 'eslint', 'yauzl']));
    for (const name of devOnly) expect(all).not.toContain(`node_modules/${name}`);
  });
});

describe('npm run package', () => {
  let dir: string;
  let project: string;
  let zip: Map<string, Buffer>;
  let run: ReturnType<typeof spawnSync>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'package-test-'));
    project = join(dir, 'project');
    const options = ts.convertCompilerOptionsFromJson(
      (ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile).config as { compilerOptions: object })
        .compilerOptions,
      ROOT,
    ).options;
    for (const file of [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'tools'))]) {
      const out = ts.transpileModule(readFileSync(file, 'utf8'), {
        compilerOptions: options,
        fileName: file,
      });
      const target = join(project, 'dist', relative(ROOT, file)).replace(/\.ts$/, '.js');
      write(target, out.outputText);
      write(`${target}.map`, out.sourceMapText ?? '{}');
    }
    write(join(project, 'dist', 'src', 'functions', 'stray.d.ts'), 'export {};\n');
    write(join(project, 'dist', 'tests', 'unit', 'order.test.js'), '');
    write(join(project, 'dist', 'local', 'cli', 'start.js'), '');
    write(join(project, 'dist', 'bench', 'bench.js'), '');
    write(join(project, 'host.json'), readFileSync(join(ROOT, 'host.json'), 'utf8'));
    write(join(project, 'package.json'), readFileSync(join(ROOT, 'package.json'), 'utf8'));
    write(join(project, 'src', 'functions', 'index.ts'), '');
    write(join(project, 'tests', 'unit', 'order.test.ts'), '');
    const lock = {
      name: 'order-convoy',
      lockfileVersion: 3,
      packages: {
        '': { name: 'order-convoy' },
        'node_modules/prod-a': { version: '1.0.0' },
        'node_modules/prod-a/node_modules/nested-b': { version: '2.0.0' },
        'node_modules/dev-c': { version: '1.0.0', dev: true },
        'node_modules/devopt-e': { version: '1.0.0', devOptional: true },
        'node_modules/opt-d': { version: '1.0.0', optional: true },
      },
    };
    write(join(project, 'package-lock.json'), JSON.stringify(lock));
    for (const path of ['prod-a', 'prod-a/node_modules/nested-b', 'dev-c', 'devopt-e']) {
      write(join(project, 'node_modules', path, 'package.json'), '{}');
      write(join(project, 'node_modules', path, 'index.js'), 'module.exports = 1;\n');
    }
    write(join(project, 'node_modules', '.bin', 'jest'), '');
    run = spawnSync(
      process.execPath,
      [join(project, 'dist', 'tools', 'package', 'package-app.js'), '--root', project, '--level', '1'],
      { encoding: 'utf8', env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') } },
    );
    zip = run.status === 0 ? await readZip(join(project, 'package', 'app.zip')) : new Map();
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('makes the zip and says where', () => {
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^package: \d+ files in .*app\/ and .*app\.zip \(\d+\.\d MB\)\n$/);
  });

  it('holds the compiled Azure code, host.json, package.json and the production dependencies', () => {
    const names = [...zip.keys()];
    expect(names).toEqual(
      expect.arrayContaining([
        PACKAGE_JSON.main,
        'dist/src/functions/http/operations-http.js',
        'dist/src/adapters/azure/service-bus-operations.js',
        'dist/src/domain/order.js',
        'host.json',
        'package.json',
        'node_modules/prod-a/index.js',
        'node_modules/prod-a/node_modules/nested-b/index.js',
      ]),
    );
    expect(zip.get('host.json')?.toString()).toBe(readFileSync(join(ROOT, 'host.json'), 'utf8'));
  });

  it('holds nothing local-only', () => {
    const names = [...zip.keys()];
    const localOnly = names.filter(
      (name) =>
        LOCAL_ONLY_PREFIXES.some((prefix) => name.startsWith(prefix)) ||
        /\.(ts|map)$/.test(name) ||
        /^(src|tests|dist\/tests|bicep|scripts|tools)\//.test(name) ||
        /^node_modules\/(dev-c|devopt-e|opt-d|\.bin)\//.test(name) ||
        ['package-lock.json', 'tsconfig.json', 'jest.config.js', 'local.settings.sample.json'].includes(name),
    );
    expect(localOnly).toEqual([]);
    expect(names.filter((name) => name.startsWith('dist/')).every((name) => name.endsWith('.js'))).toBe(true);
  });

  it('ships a package.json without scripts or devDependencies', () => {
    const shipped = JSON.parse(zip.get('package.json')?.toString() ?? '{}') as Record<string, unknown>;
    expect(shipped.main).toBe(PACKAGE_JSON.main);
    expect(shipped.dependencies).toEqual(PACKAGE_JSON.dependencies);
    expect(Object.hasOwn(shipped, 'devDependencies')).toBe(false);
    expect(Object.hasOwn(shipped, 'scripts')).toBe(false);
  });

  it('has every file the entry requires, and the entry needs only production dependencies', () => {
    const { reached, bare } = requireGraph(zip, PACKAGE_JSON.main);
    expect(reached.filter((file) => LOCAL_ONLY_PREFIXES.some((prefix) => file.startsWith(prefix)))).toEqual(
      [],
    );
    const builtins = new Set(builtinModules);
    const packages = bare.filter((s) => !s.startsWith('node:') && !builtins.has(s)).map(packageNameOf);
    for (const name of packages) expect(Object.keys(PACKAGE_JSON.dependencies)).toContain(name);
    expect(packages).toEqual(expect.arrayContaining(['@azure/functions', 'durable-functions']));
  });

  it('stages the same files as a folder for func and azd', () => {
    const staged = readdirSync(join(project, 'package', 'app'), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile())
      .map((entry) =>
        relative(join(project, 'package', 'app'), join(entry.parentPath, entry.name))
          .split('\\')
          .join('/'),
      )
      .sort();
    expect(staged).toEqual([...zip.keys()].sort());
  });

  it('refuses, in one line with exit 2, when the build or a dependency is missing', () => {
    const empty = join(dir, 'empty');
    write(join(empty, 'host.json'), '{}');
    write(join(empty, 'package-lock.json'), '{}');
    write(join(empty, 'package.json'), JSON.stringify({ main: 'dist/src/functions/index.js' }));
    const script = join(project, 'dist', 'tools', 'package', 'package-app.js');
    const missingBuild = spawnSync(process.execPath, [script, '--root', empty], { encoding: 'utf8' });
    expect(missingBuild.status).toBe(2);
    expect(missingBuild.stderr).toMatch(
      /^package: package.json main \(dist\/src\/functions\/index.js\) not found: run `npm run build` first\n$/,
    );
    const badLevel = spawnSync(process.execPath, [script, '--level', 'x'], { encoding: 'utf8' });
    expect(badLevel.status).toBe(2);
    expect(badLevel.stderr).toBe('package: --level must be a digit 0-9, got "x"\n');
    rmSync(join(project, 'node_modules', 'prod-a', 'node_modules'), { recursive: true });
    const missingDependency = spawnSync(
      process.execPath,
      [script, '--root', project, '--out', join(dir, 'out2')],
      {
        encoding: 'utf8',
        env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') },
      },
    );
    expect(missingDependency.status).toBe(2);
    expect(missingDependency.stderr).toMatch(
      /node_modules\/prod-a\/node_modules\/nested-b is a production dependency but is not installed/,
    );
  });
});
