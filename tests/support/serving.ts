/**
 * `npm start -- --serve` as a real process (local/cli/start.ts through ts-node's register), for
 * the tests that call the served app over HTTP: its output collected, and the line naming where it
 * serves waited for.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

export interface ServedProcess {
  child: ChildProcess;
  /** The exit code once the process ends. */
  exited: Promise<number | null>;
  /** Everything it has written to stdout and stderr so far. */
  printed(): string;
  /** The first group of `pattern` once the output matches it; rejects if the process ends first. */
  waitFor(pattern: RegExp): Promise<string>;
}

/** Runs local/cli/start.ts with `args` (which should hold `--serve`) in `cwd`. */
export function serveInChild(args: readonly string[], cwd: string = ROOT): ServedProcess {
  const child = spawn(
    process.execPath,
    ['-r', join(ROOT, 'tests', 'support', 'register-ts.js'), join(ROOT, 'local', 'cli', 'start.ts'), ...args],
    { cwd, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let printed = '';
  child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', resolveExit));
  return {
    child,
    exited,
    printed: () => printed,
    waitFor: (pattern) =>
      new Promise<string>((resolveMatch, reject) => {
        const poll = setInterval(() => {
          const match = pattern.exec(printed);
          if (match !== null) {
            clearInterval(poll);
            resolveMatch(match[1]);
          }
        }, 50);
        void exited.then(() => {
          clearInterval(poll);
          reject(new Error(`exited before serving: ${printed}`));
        });
      }),
  };
}
