/**
 * `src/` is the app: what deploys and nothing else. Every file under it is reached from the Azure
 * entry point (`main` in package.json), and it imports nothing outside `src/` but packages the app
 * depends on and Node's own modules. The embedded runtime (`local/`), the bench (`bench/`) and the
 * tools (`tools/`) import the app; the app never imports them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import * as ts from 'typescript';

const ROOT = resolve(__dirname, '..', '..');
const SRC = join(ROOT, 'src');
const ENTRY = join(SRC, 'functions', 'index.ts');
const PACKAGE_JSON = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  main: string;
  dependencies: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

const FILES = new Set(sourceFiles(SRC));

function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((i) => i.fileName);
}

/** The file a relative specifier names, as TypeScript resolves it (`x` → `x.ts` or `x/index.ts`). */
function resolveRelative(from: string, specifier: string): string {
  const base = resolve(dirname(from), specifier);
  return [`${base}.ts`, join(base, 'index.ts')].find((candidate) => FILES.has(candidate)) ?? `${base}.ts`;
}

function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

const show = (file: string) => relative(ROOT, file).split(sep).join('/');

describe('the layout: src/ is the app', () => {
  it('names the compiled entry point as package.json main', () => {
    expect(PACKAGE_JSON.main).toBe('dist/src/functions/index.js');
  });

  it('reaches every file under src/ from the Azure entry point', () => {
    const reached = new Set<string>();
    const queue = [ENTRY];
    while (queue.length > 0) {
      const file = queue.pop() as string;
      if (reached.has(file)) continue;
      reached.add(file);
      for (const specifier of importsOf(file)) {
        if (specifier.startsWith('.')) queue.push(resolveRelative(file, specifier));
      }
    }
    const unreached = [...FILES].filter((file) => !reached.has(file)).map(show);
    expect(unreached).toEqual([]);
  });

  it('imports nothing outside src/ but the app’s dependencies and Node’s modules', () => {
    const builtins = new Set(builtinModules);
    const dependencies = new Set(Object.keys(PACKAGE_JSON.dependencies));
    const outside: string[] = [];
    for (const file of FILES) {
      for (const specifier of importsOf(file)) {
        const allowed = specifier.startsWith('.')
          ? resolveRelative(file, specifier).startsWith(SRC + sep)
          : specifier.startsWith('node:') ||
            builtins.has(specifier) ||
            dependencies.has(packageNameOf(specifier));
        if (!allowed) outside.push(`${show(file)} imports ${specifier}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('catches a file nothing reaches and an import of the embedded runtime', () => {
    // The checks above on a made-up tree, so that they are seen to fail.
    const stray = join(SRC, 'services', 'stray.ts');
    expect(FILES.has(stray)).toBe(false);
    expect(resolveRelative(join(SRC, 'functions', 'index.ts'), '../../local/app').startsWith(SRC + sep)).toBe(
      false,
    );
  });
});
