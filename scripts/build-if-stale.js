#!/usr/bin/env node
/**
 * Builds (`npm run build`) only when `dist` is older than the sources, as make would: a source
 * file without its compiled twin, or newer than it, or a tsconfig or package.json newer than the
 * oldest output, means stale. `npm start` and `npm run bench` run it first, so that `--help` and
 * repeated runs do not wait for a compile of code that has not changed.
 */
'use strict';
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');
const { spawnSync } = require('node:child_process');

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Why `dist` is stale, or null when every output is newer than what it is built from. */
function staleReason(root) {
  const settings = ['tsconfig.json', 'tsconfig.build.json', 'package.json']
    .map((name) => join(root, name))
    .filter((path) => existsSync(path));
  const newestSetting = Math.max(0, ...settings.map((path) => statSync(path).mtimeMs));
  const folders = ['src', 'local', 'bench', 'tools']
    .map((name) => join(root, name))
    .filter((dir) => existsSync(dir));
  for (const source of folders.flatMap(sources)) {
    const output = join(root, 'dist', relative(root, source)).replace(/\.ts$/, '.js');
    if (!existsSync(output)) return `${relative(root, output)} is missing`;
    const built = statSync(output).mtimeMs;
    if (built < statSync(source).mtimeMs) return `${relative(root, source)} changed`;
    if (built < newestSetting) return 'a tsconfig or package.json changed';
  }
  return null;
}

module.exports = { staleReason };

if (require.main === module) {
  const root = join(__dirname, '..');
  const reason = staleReason(root);
  if (reason !== null) {
    process.stderr.write(`building: ${reason}\n`);
    const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
    process.exitCode = build.status ?? 1;
  }
}
