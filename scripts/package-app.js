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

/** Bundles the entry point; returns esbuild's metafile (what each input adds to the bundle). */
async function bundle(appDir) {
  const esbuild = require('esbuild');
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [ENTRY],
    outfile: join(appDir, MAIN),
    bundle: true,
    platform: 'node',
    // Azure runs Node 22; the bundle also runs on 20, the floor in package.json engines.
    target: 'node20',
    format: 'cjs',
    external: ['@azure/functions-core'],
    // Unminified: a stack trace in Application Insights names the app's own functions.
    minify: false,
    legalComments: 'eof',
    logLevel: 'error',
    metafile: true,
  });
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

module.exports = { MAIN, packageApp };

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
