/**
 * `npm run package`: the deployment package of the Azure app (what is in it: tools/package/package-plan.ts),
 * staged as a folder (`package/app/`, which `func azure functionapp publish` and azd deploy) and
 * zipped (`package/app.zip`, for `az functionapp deployment source config-zip` or any zip deploy).
 *
 *   node dist/tools/package/package-app.js [--root DIR] [--out DIR] [--level 0-9]
 */
import { errorMessage } from '../../src/domain/errors';
import { copyFileSync, createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PackageError, planPackage, type PackageEntry } from './package-plan';
import { runMain } from '../cli/run-main';

export interface PackageOptions {
  root: string;
  out: string;
  /** zlib level: 0 stores, 9 compresses most. */
  level: number;
}

const USAGE = 'usage: package-app [--root DIR] [--out DIR] [--level 0-9]';

export function parsePackageArgs(args: readonly string[], cwd: string): PackageOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: { root: { type: 'string' }, out: { type: 'string' }, level: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw new PackageError(`${errorMessage(error)}; ${USAGE}`);
  }
  const root = resolve(cwd, parsed.values.root ?? '.');
  const level = parsed.values.level ?? '6';
  if (!/^[0-9]$/.test(level)) throw new PackageError(`--level must be a digit 0-9, got "${level}"`);
  return { root, out: resolve(root, parsed.values.out ?? 'package'), level: Number(level) };
}

function stage(entries: readonly PackageEntry[], dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  for (const entry of entries) {
    const target = join(dir, ...entry.name.split('/'));
    mkdirSync(dirname(target), { recursive: true });
    if ('text' in entry) writeFileSync(target, entry.text);
    else copyFileSync(entry.from, target);
  }
}

async function zip(entries: readonly PackageEntry[], file: string, level: number): Promise<number> {
  // archiver 8 is an ES module: loaded on use (require(esm), Node 20.19+ and 22.12+).
  const { ZipArchive } = await import('archiver');
  rmSync(file, { force: true });
  const archive = new ZipArchive({ zlib: { level } });
  const output = createWriteStream(file);
  const closed = new Promise<void>((done, fail) => {
    output.on('close', done);
    output.on('error', fail);
    archive.on('error', fail);
  });
  archive.pipe(output);
  for (const entry of entries) {
    if ('text' in entry) archive.append(entry.text, { name: entry.name });
    else archive.file(entry.from, { name: entry.name });
  }
  await archive.finalize();
  await closed;
  return archive.pointer();
}

export async function packageApp(options: PackageOptions): Promise<{ files: number; zipBytes: number }> {
  const entries = planPackage({ root: options.root });
  mkdirSync(options.out, { recursive: true });
  stage(entries, join(options.out, 'app'));
  const zipBytes = await zip(entries, join(options.out, 'app.zip'), options.level);
  return { files: entries.length, zipBytes };
}

export async function main(args: readonly string[]): Promise<number> {
  let options: PackageOptions;
  try {
    options = parsePackageArgs(args, process.cwd());
    const { files, zipBytes } = await packageApp(options);
    process.stdout.write(
      `package: ${files} files in ${join(options.out, 'app')}/ and ${join(options.out, 'app.zip')} ` +
        `(${(zipBytes / 1e6).toFixed(1)} MB)\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof PackageError) {
      process.stderr.write(`package: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

if (require.main === module) runMain(() => main(process.argv.slice(2)), 'package');
