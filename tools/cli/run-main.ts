/**
 * Runs a command's `main` as the process: its resolved number is the exit code; a throw is exit 1.
 * Should Node's event loop empty while `main` is still pending (nothing left that could ever settle
 * it), the process says so and exits 1 instead of exiting 0 without having done its work.
 */
export function runMain(main: () => Promise<number>, what: string): void {
  let settled = false;
  const stalled = (): void => {
    if (settled) return;
    settled = true;
    process.stderr.write(`${what} stopped before it finished: nothing was left to wake it\n`);
    process.exitCode = 1;
  };
  process.once('beforeExit', stalled);
  main().then(
    (code) => {
      settled = true;
      process.off('beforeExit', stalled);
      process.exitCode = code;
    },
    (error: unknown) => {
      settled = true;
      process.off('beforeExit', stalled);
      process.stderr.write(
        `${what} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
