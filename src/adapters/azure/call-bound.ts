/**
 * One call to Azure held to a bound (src/adapters/handler-time.ts, `CALL_BOUND_MS`): at the bound the
 * call's AbortSignal fires, so that the SDK stops where it honours it, and the call is given up on
 * at once whether it does or not (the Cosmos DB client's waits between retries do not). What the
 * call did meanwhile is what a client timeout leaves: it may or may not have happened, which the
 * consumers are idempotent for.
 */
import { TransientError } from '../../domain/errors';

export function withinCallBound<T>(
  what: string,
  boundMs: number,
  call: (abortSignal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const givenUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(
        new TransientError(
          'call-timed-out',
          `${what} took more than ${boundMs / 1000} s, the most one call to Azure may take; given up`,
        ),
      );
    }, boundMs);
  });
  return Promise.race([call(controller.signal), givenUp]).finally(() => clearTimeout(timer));
}
