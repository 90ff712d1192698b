/** `npm start` and `npm run bench` build only when dist is older than the sources (scripts/build-if-stale.js). */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const { staleReason } = require('../../scripts/build-if-stale.js') as {
  staleReason: (root: string) => string | null;
};

describe('build only when dist is stale', () => {
  let root: string;
  const at = (path: string, seconds: number): void => utimesSync(join(root, path), seconds, seconds);
  const file = (path: string, seconds: number): void => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), '');
    at(path, seconds);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'convoy-stale-'));
    file('tsconfig.json', 1000);
    file('local/cli/a.ts', 1000);
    file('src/b.ts', 1000);
    file('dist/local/cli/a.js', 2000);
    file('dist/src/b.js', 2000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('current: every output newer than its source and the settings', () => {
    expect(staleReason(root)).toBeNull();
  });

  it('a source changed after its output, or an output missing, or a tsconfig changed', () => {
    at('local/cli/a.ts', 3000);
    expect(staleReason(root)).toBe(`${join('local', 'cli', 'a.ts')} changed`);
    at('local/cli/a.ts', 1000);
    file('src/c.ts', 1000);
    expect(staleReason(root)).toBe(`${join('dist', 'src', 'c.js')} is missing`);
    rmSync(join(root, 'src', 'c.ts'));
    at('tsconfig.json', 3000);
    expect(staleReason(root)).toBe('a tsconfig or package.json changed');
  });

  it('is what npm start and npm run bench run first, instead of a full build', () => {
    const scripts = (
      JSON.parse(readFileSync(resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    expect(scripts.prestart).toBe('node scripts/build-if-stale.js');
    expect(scripts.bench.startsWith('node scripts/build-if-stale.js && ')).toBe(true);
  });
});
