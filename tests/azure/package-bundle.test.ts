/**
 * What goes into the deployed bundle (`npm run package`, scripts/package-app.js), read from
 * esbuild's metafile: each npm package enters once. A package that ships both a CommonJS and an ES
 * module build would otherwise enter twice, once for the `require()`s of CommonJS dependents and
 * once for the `import`s of ES module ones (Node's "dual package hazard"), and every cold start
 * would compile and run both copies.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

interface Metafile {
  inputs: Record<string, { bytes: number; format?: 'cjs' | 'esm'; imports: Array<{ path: string }> }>;
}

interface PackageApp {
  /** Writes the bundle into the app folder; returns esbuild's metafile. */
  bundle(appDir: string): Promise<Metafile>;
}

const { bundle } = require(resolve(__dirname, '..', '..', 'scripts', 'package-app.js')) as PackageApp;

/** The folder of the npm package an input belongs to (its innermost node_modules/<name>), or undefined for the app's own. */
export function packageOf(input: string): string | undefined {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const [scope, name] = input.slice(at + 'node_modules/'.length).split('/');
  return input.slice(0, at + 'node_modules/'.length) + (scope.startsWith('@') ? `${scope}/${name}` : scope);
}

/**
 * Packages entered in both module formats: imported from outside the package once as a CommonJS
 * file and once as an ES module file. A package's own files importing each other do not count: the
 * Azure SDKs' ES module builds import one small CommonJS file of their own on purpose, to share
 * state with their CommonJS build (e.g. @azure/core-tracing's `dist/commonjs/state.js`).
 */
export function packagesInBothFormats(metafile: Metafile): string[] {
  const formats = new Map<string, Set<string>>();
  for (const [importer, { imports }] of Object.entries(metafile.inputs)) {
    for (const { path } of imports) {
      const pkg = packageOf(path);
      const format = metafile.inputs[path]?.format;
      if (pkg === undefined || format === undefined || packageOf(importer) === pkg) continue;
      formats.set(pkg, (formats.get(pkg) ?? new Set()).add(format));
    }
  }
  return [...formats].filter(([, found]) => found.size > 1).map(([pkg]) => pkg);
}

describe('packagesInBothFormats', () => {
  it('names a package imported as both its CommonJS and its ES module build, and only that one', () => {
    const file = (format: 'cjs' | 'esm' | undefined, ...imports: string[]) => ({
      bytes: 1,
      format,
      imports: imports.map((path) => ({ path })),
    });
    expect(
      packagesInBothFormats({
        inputs: {
          'src/functions/index.ts': file(
            'esm',
            'node_modules/@azure/core-util/dist/esm/index.js',
            'node_modules/@azure/core-tracing/dist/esm/index.js',
            'node_modules/rhea/lib/index.js',
          ),
          'node_modules/other/index.js': file(
            'cjs',
            'node_modules/@azure/core-util/dist/commonjs/index.js',
            'node_modules/a/node_modules/rhea/lib/index.js',
            'node_modules/mime-db/db.json',
          ),
          'node_modules/@azure/core-util/dist/esm/index.js': file('esm'),
          'node_modules/@azure/core-util/dist/commonjs/index.js': file('cjs'),
          'node_modules/@azure/core-tracing/dist/esm/index.js': file(
            'esm',
            'node_modules/@azure/core-tracing/dist/commonjs/state.js',
          ),
          'node_modules/@azure/core-tracing/dist/commonjs/state.js': file('cjs'),
          'node_modules/rhea/lib/index.js': file('cjs'),
          'node_modules/a/node_modules/rhea/lib/index.js': file('esm'),
          'node_modules/mime-db/db.json': file(undefined),
        },
      }),
    ).toEqual(['node_modules/@azure/core-util']);
  });
});

describe('the deployed bundle', () => {
  let out: string;
  let metafile: Metafile;

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'package-bundle-'));
    metafile = await bundle(out);
  }, 120_000);

  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('holds each npm package once: none as both its CommonJS and its ES module build', () => {
    expect(packagesInBothFormats(metafile)).toEqual([]);
  });
});
