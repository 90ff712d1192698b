/**
 * host.json `functionTimeout` for the embedded host: an invocation still running when it runs out
 * fails, as the Functions host cancels it (Microsoft.Azure.WebJobs.Host FunctionTimeoutException);
 * for a Service Bus trigger the message is then abandoned and comes back. Node cannot stop the
 * handler's promise; what it does afterwards is what a cancelled invocation's late effects are on
 * Azure too, and the handlers are idempotent for that reason.
 */
import { TransientError } from '../../src/domain/errors';

export class FunctionTimeoutError extends TransientError {
  constructor(functionName: string, timeoutMs: number) {
    super(
      'function-timeout',
      `Timeout value of ${timeoutMs} ms was exceeded by function: ${functionName} (host.json functionTimeout)`,
    );
  }
}

/** The invocation's result, or a FunctionTimeoutError once `timeoutMs` has passed. */
export async function withFunctionTimeout<T>(
  invocation: Promise<T>,
  functionName: string,
  timeoutMs: number,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FunctionTimeoutError(functionName, timeoutMs)), timeoutMs);
  });
  try {
    return await Promise.race([invocation, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
