/** Runs a command's `main` as the process: its resolved number is the exit code; a throw is exit 1. */
export function runMain(main: () => Promise<number>, what: string): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(
        `${what} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
