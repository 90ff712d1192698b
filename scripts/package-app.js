#!/usr/bin/env node
/**
 * `npm run package`: the deployment package of the Azure app, staged as a folder (`package/app/`,
 * the `dist` that azure.yaml names and its prepackage hook makes, and what `func azure functionapp
 * publish` runs from) and zipped (`package/app.zip`, for any zip deploy).
 *
 * esbuild bundles the entry point (src/functions/index.ts) with its production dependencies into
 * one file, `dist/index.js`: no node_modules folder to ship, and a cold start that reads one file
 * instead of thousands. `@azure/functions-core` stays external: the Node worker provides it at run
 * time, as Node provides `path` (azure-functions-nodejs-library issues 201 and 256; bundles of the
 * v4 model run on Azure as they are: issue 260 of that repository).
 *
 * A cold start compiles and runs what the bundle holds, so it holds as little as the app calls
 * (docs/performance.md, "Cold start"):
 * - each package once, as its ES module build where it ships one: a `require()` resolves as an
 *   `import` would, so the Azure SDKs' CommonJS and ES module builds do not both enter (Node's "dual
 *   package hazard"), and esbuild drops the exports nothing imports (the packages declare
 *   `"sideEffects": false`);
 * - two substitutes for what durable-functions requires (SUBSTITUTES);
 * - whitespace and syntax minified; identifiers keep their names, so a stack trace in Application
 *   Insights still names its functions.
 *
 * It builds from the TypeScript sources, so it needs no `npm run build` first.
 *
 *   node scripts/package-app.js [--out DIR] [--level 0-9]
 */
'use strict';
const { mkdirSync, readFileSync, rmSync, writeFileSync, createWriteStream } = require('node:fs');
const { join, resolve } = require('node:path');
const { parseArgs } = require('node:util');

const ROOT = resolve(__dirname, '..');
const ENTRY = 'src/functions/index.ts';
/** The bundle's name inside the package, and so the deployed package.json's `main`. */
const MAIN = 'dist/index.js';
const USAGE = 'usage: npm run package -- [--out DIR] [--level 0-9]';

class PackageError extends Error {}

function parseOptions(args) {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { out: { type: 'string' }, level: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw new PackageError(`${error.message}; ${USAGE}`);
  }
  const level = parsed.values.level ?? '6';
  if (!/^[0-9]$/.test(level)) throw new PackageError(`--level must be a digit 0-9, got "${level}"`);
  return { out: resolve(process.cwd(), parsed.values.out ?? join(ROOT, 'package')), level: Number(level) };
}

/** The package.json that ships: what the host reads (`main`) and says what it is; nothing to install. */
function deployedPackageJson() {
  const source = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const { name, version, private: isPrivate, description, engines } = source;
  return { name, version, private: isPrivate, description, main: MAIN, engines };
}

/**
 * What durable-functions requires, resolved to less of the same library:
 * - `validator`: its DurableClient.js and getClient.js call `isURL` alone (scripts/bundle/).
 * - `axios`: its DurableClient.js calls the Durable extension's HTTP API on the worker's host with
 *   axios. The build axios publishes for runtimes without Node's `http` (its package exports
 *   `./dist/browser/axios.cjs`) sends with the `fetch` adapter, Node's own `fetch`; the Node build
 *   also holds the `http` adapter with form-data, follow-redirects, proxy-from-env and a MIME table.
 *   tests/embedded/durable-management-api.test.ts drives the bundled client against the extension's
 *   API as the embedded runtime serves it.
 */
const SUBSTITUTES = {
  validator: join(__dirname, 'bundle', 'validator-is-url.mjs'),
  axios: 'axios/dist/browser/axios.cjs',
};

/** Marks a resolution this plugin asked for, so that it does not answer itself. */
const AS_IMPORT = Symbol('resolved as an import');

/** esbuild plugin: SUBSTITUTES, and every `require()` of a package resolved as its `import` is. */
const onePackageBuild = {
  name: 'one-package-build',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === AS_IMPORT) return undefined;
      const path = Object.hasOwn(SUBSTITUTES, args.path) ? SUBSTITUTES[args.path] : args.path;
      if (path === args.path && args.kind !== 'require-call') return undefined;
      const resolved = await build.resolve(path, {
        kind: 'import-statement',
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: AS_IMPORT,
      });
      // What does not resolve as an import (a package with a `require` condition alone) resolves as esbuild would.
      return resolved.errors.length === 0 ? resolved : undefined;
    });
  },
};

/** The esbuild options of the bundle, writing it to `outfile`. */
function bundleOptions(outfile, entryPoints = [ENTRY]) {
  return {
    absWorkingDir: ROOT,
    entryPoints,
    outfile,
    bundle: true,
    platform: 'node',
    // Azure runs Node 22; the bundle also runs on 20, the floor in package.json engines.
    target: 'node20',
    format: 'cjs',
    // A package's ES module build where it names one in `module` and no `exports` map decides.
    mainFields: ['module', 'main'],
    plugins: [onePackageBuild],
    external: ['@azure/functions-core'],
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'eof',
    logLevel: 'error',
    metafile: true,
  };
}

/** Bundles the entry point into the app folder; returns esbuild's metafile (what each input adds to the bundle). */
async function bundle(appDir) {
  const esbuild = require('esbuild');
  const result = await esbuild.build(bundleOptions(join(appDir, MAIN)));
  return result.metafile;
}

async function zip(appDir, file, level) {
  // archiver 8 is an ES module: loaded on use (require(esm), Node 20.19+ and 22.12+).
  const { ZipArchive } = await import('archiver');
  rmSync(file, { force: true });
  const archive = new ZipArchive({ zlib: { level } });
  const output = createWriteStream(file);
  const closed = new Promise((done, fail) => {
    output.on('close', done);
    output.on('error', fail);
    archive.on('error', fail);
  });
  archive.pipe(output);
  archive.directory(appDir, false);
  await archive.finalize();
  await closed;
  return archive.pointer();
}

async function packageApp({ out, level }) {
  const appDir = join(out, 'app');
  // A stale folder must never ship: azd deploys whatever it finds there.
  rmSync(appDir, { recursive: true, force: true });
  mkdirSync(join(appDir, 'dist'), { recursive: true });
  const metafile = await bundle(appDir);
  writeFileSync(join(appDir, 'host.json'), readFileSync(join(ROOT, 'host.json')));
  writeFileSync(join(appDir, 'package.json'), `${JSON.stringify(deployedPackageJson(), null, 2)}\n`);
  const zipBytes = await zip(appDir, join(out, 'app.zip'), level);
  return { appDir, zipFile: join(out, 'app.zip'), zipBytes, metafile };
}

async function main(args) {
  try {
    const { appDir, zipFile, zipBytes } = await packageApp(parseOptions(args));
    process.stdout.write(`package: ${appDir}/ and ${zipFile} (${(zipBytes / 1e6).toFixed(1)} MB)\n`);
    return 0;
  } catch (error) {
    // An esbuild failure has already printed its errors, one per line, with file and position.
    const message = error instanceof PackageError ? error.message : String(error.message).split('\n')[0];
    process.stderr.write(`package: ${message}\n`);
    return 2;
  }
}

module.exports = { MAIN, bundle, bundleOptions, packageApp };

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
