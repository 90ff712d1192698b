/** A command run through its `main` in a test: a fresh folder for its files, its output captured. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CliCapture {
  /** The test's own folder, removed after it. */
  readonly dir: string;
  /** What the command wrote to stdout and stderr, chunk by chunk. */
  readonly stdout: string[];
  readonly stderr: string[];
  /** Writes `text` to `name` in the test's folder and returns its path. */
  file(name: string, text: string): string;
}

/** Call inside a `describe`: sets up before each test and cleans up after it. */
export function captureCli(prefix: string): CliCapture {
  let dir = '';
  let stdout: string[] = [];
  let stderr: string[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    stdout = [];
    stderr = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout.push(String(chunk));
      return true;
    });
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    file(name, text) {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
  };
}
