/**
 * A file of this repository that a comment or a document names exists: a path such as
 * `src/services/convoy/parking.ts` in a comment, the README or docs/ still leads to that file after
 * it moved. A path cited from another repository (the Node worker's `src/converters/...`) names that
 * repository on its line or the two before, and is not checked here.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

/** Where a path of this repository may start. */
const TOP = [
  'src',
  'local',
  'bench',
  'tools',
  'tests',
  'docs',
  'scripts',
  'bicep',
  'samples',
  '.ci',
  '.github',
];
const MENTION = new RegExp(
  `(?<![\\w/.@-])((?:${TOP.map((top) => top.replace('.', '\\.')).join('|')})/[\\w./-]*\\.(?:ts|js|mjs|md|bicep|bicepparam|sh|json|ndjson|csproj|yml))(?![\\w/-])`,
  'g',
);
/** A line that cites another repository or package, whose `src/...` is that one's. */
const OTHER_REPOSITORY =
  /azure-functions-[\w-]+|azure-sdk-for-[\w-]+|azure-dev|@azure\/[\w-]+|durable-functions|durabletask|Azure\/[\w-]+|vercel/;

/** Text files git tracks, but the lock and the test files that make up paths on purpose. */
function trackedTexts(): string[] {
  return execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => /\.(ts|js|mjs|md|bicep|bicepparam|sh|yml|yaml|json)$|^\.ci\/run$/.test(file))
    .filter((file) => file !== 'package-lock.json' && existsSync(join(ROOT, file)));
}

export function missingMentions(files: readonly string[], read: (file: string) => string): string[] {
  const missing: string[] = [];
  for (const file of files) {
    const lines = read(file).split('\n');
    lines.forEach((line, index) => {
      for (const match of line.matchAll(MENTION)) {
        const path = match[1];
        const context = lines.slice(Math.max(0, index - 2), index + 1).join('\n');
        if (OTHER_REPOSITORY.test(context)) continue;
        // Made-up trees in tests (a fixture's `docs/a.md`) live in folders this repository lacks or
        // are written by the test itself: only a path whose folder exists here is this repository's.
        if (!existsSync(join(ROOT, dirname(path)))) continue;
        if (!existsSync(join(ROOT, path))) missing.push(`${file}:${index + 1} names ${path}`);
      }
    });
  }
  return missing;
}

describe('paths named in comments and documents', () => {
  it('lead to files that exist', () => {
    // These write made-up paths on purpose: the links test's fixtures, the stale check's tree, this file.
    const fixtures = new Set([
      'tests/contract/links.test.ts',
      'tests/bench/build-if-stale.test.ts',
      'tests/contract/path-mentions.test.ts',
    ]);
    const files = trackedTexts().filter((file) => !fixtures.has(file));
    expect(missingMentions(files, (file) => readFileSync(join(ROOT, file), 'utf8'))).toEqual([]);
  });

  it('catches a path that moved, and leaves another repository’s alone', () => {
    const texts: Record<string, string> = {
      'a.ts': '// see src/services/parking.ts\n// azure-functions-nodejs-library\n// `src/services/x.ts`\n',
    };
    expect(missingMentions(['a.ts'], (file) => texts[file] ?? '')).toEqual([
      'a.ts:1 names src/services/parking.ts',
    ]);
  });
});
