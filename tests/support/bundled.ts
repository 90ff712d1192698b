/**
 * A source file built with the deployed bundle's esbuild options (scripts/package-app.js:
 * `bundleOptions`), so a test can run what Azure runs: the SDKs as the bundle resolves them (each
 * package's ES module build, durable-functions' substitutes), not as node_modules holds them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build, type BuildOptions, type Plugin } from 'esbuild';

const ROOT = resolve(__dirname, '..', '..');

const { bundleOptions } = require(join(ROOT, 'scripts', 'package-app.js')) as {
  bundleOptions(outfile: string, entryPoints: string[]): BuildOptions;
};

export interface Bundled<T> {
  module: T;
  /** Deletes the temp folder the bundle was written to. */
  remove(): void;
}

/**
 * Bundles `entry` (a path from the repository root) and loads it. The app's modules named in
 * `shared` (paths from the root, without extension) stay outside the bundle: it takes them from the
 * test's own module registry, so the test's `instanceof` holds for the errors they define.
 */
export async function loadBundled<T>(entry: string, shared: readonly string[] = []): Promise<Bundled<T>> {
  const dir = mkdtempSync(join(tmpdir(), 'bundled-'));
  const outfile = join(dir, 'bundle.js');
  const sharedPaths = new Set(shared.map((path) => join(ROOT, path)));
  const options = bundleOptions(outfile, [join(ROOT, entry)]);
  const shareWithTest: Plugin = {
    name: 'share-with-test',
    setup(builder) {
      builder.onResolve({ filter: /^\./ }, (args) => {
        const path = resolve(args.resolveDir, args.path);
        return sharedPaths.has(path) ? { path, external: true } : undefined;
      });
    },
  };
  await build({ ...options, plugins: [shareWithTest, ...(options.plugins ?? [])] });
  return {
    module: require(outfile) as T,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
