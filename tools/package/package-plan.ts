/**
 * What the deployment package holds (`npm run package`, tools/package/package-app.ts): the compiled Azure
 * code, host.json, a package.json without scripts or devDependencies, and the production
 * dependencies only, as package-lock.json resolves them. Nothing local-only: the embedded runtime,
 * the CLIs, the bench, tests, TypeScript sources and source maps stay out.
 *
 * Core Tools publishes a Node app from the local folder, node_modules included, and does not honour
 * the wildcard lines of `.funcignore` (Azure/azure-functions-core-tools#2701), so the package is
 * staged in a folder of its own rather than filtered at publish time.
 */
import { compareText } from '../../src/domain/compare';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';

export class PackageError extends Error {
  override readonly name = 'PackageError';
}

interface LockPackage {
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  link?: boolean;
}

interface Lockfile {
  lockfileVersion?: number;
  packages?: Record<string, LockPackage>;
}

/**
 * The lock's install paths (`node_modules/a`, `node_modules/a/node_modules/b`) that production
 * needs: every package not flagged `dev` (npm marks dev-only ones) nor `devOptional` (needed only by
 * a dev dependency or an optional one we do not ship as required). Links are the workspace's own.
 */
export function productionPaths(lock: Lockfile): { required: string[]; optional: string[] } {
  if (lock.packages === undefined || (lock.lockfileVersion ?? 0) < 2) {
    throw new PackageError('package-lock.json: lockfileVersion 2 or 3 with a "packages" map is required');
  }
  const required: string[] = [];
  const optional: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || !path.startsWith('node_modules/')) continue;
    if (entry.dev === true || entry.devOptional === true || entry.link === true) continue;
    (entry.optional === true ? optional : required).push(path);
  }
  return { required: required.sort(), optional: optional.sort() };
}

/** One file of the package: where it comes from (a file, or generated text) and its name in it. */
export type PackageEntry = { name: string; from: string } | { name: string; text: string };

function toPosix(path: string): string {
  return path.split(sep).join(posix.sep);
}

/** Every file under `dir` (following links), except in folders for which `skipDir` says so. */
function walk(dir: string, skipDir: (relativePath: string) => boolean, base = dir): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = toPosix(relative(base, path));
    const isDir = entry.isDirectory() || (entry.isSymbolicLink() && statSync(path).isDirectory());
    if (isDir) {
      if (!skipDir(rel)) files.push(...walk(path, skipDir, base));
    } else {
      files.push(path);
    }
  }
  return files;
}

/** The package.json that ships: what the host and npm need at run time, nothing to build or test. */
export function deployedPackageJson(source: Record<string, unknown>): Record<string, unknown> {
  const keep = ['name', 'version', 'private', 'description', 'main', 'engines', 'dependencies'];
  const result: Record<string, unknown> = {};
  for (const key of keep) if (Object.hasOwn(source, key)) result[key] = source[key];
  return result;
}

export interface PlanInput {
  /** The project root: dist/, host.json, package.json, package-lock.json, node_modules/. */
  root: string;
}

/** The package's entries, in a stable order; fails naming what is missing. */
export function planPackage({ root }: PlanInput): PackageEntry[] {
  const distSrc = join(root, 'dist', 'src');
  const mainOf = (pkg: Record<string, unknown>) => (typeof pkg.main === 'string' ? pkg.main : '');
  for (const required of ['host.json', 'package.json', 'package-lock.json']) {
    if (!existsSync(join(root, required))) throw new PackageError(`${required} not found in ${root}`);
  }
  const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  const main = mainOf(packageJson);
  if (!existsSync(join(root, main)) || main === '') {
    throw new PackageError(`package.json main (${main || 'unset'}) not found: run \`npm run build\` first`);
  }
  const entries: PackageEntry[] = [];
  // dist/src is the app and nothing else (tests/contract/layout.test.ts).
  for (const file of walk(distSrc, () => false)) {
    const name = toPosix(relative(root, file));
    if (!name.endsWith('.js')) continue; // no source maps, no .d.ts, no stray .ts
    entries.push({ name, from: file });
  }
  entries.push({ name: 'host.json', from: join(root, 'host.json') });
  entries.push({
    name: 'package.json',
    text: `${JSON.stringify(deployedPackageJson(packageJson), null, 2)}\n`,
  });

  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as Lockfile;
  const { required, optional } = productionPaths(lock);
  for (const path of [...required, ...optional]) {
    const dir = join(root, ...path.split('/'));
    if (!existsSync(dir)) {
      if (optional.includes(path)) continue; // an optional dependency for another platform
      throw new PackageError(`${path} is a production dependency but is not installed: run \`npm ci\``);
    }
    // A nested node_modules holds other lock entries, packaged on their own.
    for (const file of walk(dir, (rel) => rel === 'node_modules' || rel.endsWith('/node_modules'))) {
      entries.push({ name: toPosix(relative(root, file)), from: file });
    }
  }
  return entries.sort((a, b) => compareText(a.name, b.name));
}
