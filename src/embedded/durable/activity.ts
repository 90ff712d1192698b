/**
 * Runs durable activities as the Durable extension and the Functions host do: the handler wrapped
 * by the SDK's own `wrapActivityHandler`, a fresh InvocationContext per call, the result as JSON, and
 * a failure reported as the extension reports it (TaskFailed `Reason` and `Details`, plus
 * `FailureDetails` when the app registered an exception properties provider).
 */
import { randomUUID } from 'node:crypto';
import { keyedRandom } from '../faults';
import { format } from 'node:util';
import { InvocationContext } from '@azure/functions';
import type { ActivityHandler } from 'durable-functions';
import type { LogLevel } from '@azure/functions';
import { TransientError, errorMessage } from '../../domain/errors';
import type { ActivityDefinition } from '../../functions/definition';
import { toJson, type FailureDetailsPayload } from './history';
import { wrapActivity } from './sdk';

export type DurableLog = (functionName: string, level: LogLevel, message: string) => void;

export type ActivityOutcome =
  | { ok: true; resultJson: string }
  | { ok: false; reason: string; details: string; failureDetails?: FailureDetailsPayload };

/** Seeded activity faults (CONTRACTS 3, `--faults`). */
export interface ActivityFaults {
  /** Probability that an invocation fails with a retryable error before its handler runs. */
  activityTransient?: number;
  /** Probability that an invocation does its work, then its result is lost: it fails with a retryable error. */
  activityResultLost?: number;
  /** Every draw is a function of this seed and of the invocation, never of the order invocations ran in. */
  seed?: number;
}

export interface ActivityRunnerOptions {
  activities: readonly ActivityDefinition[];
  maxConcurrent: number;
  faults: ActivityFaults;
  log: DurableLog | undefined;
}

/**
 * The fault draw of one invocation, in [0, 1): a hash of the seed, the fault and the invocation
 * (its instance and the id of its TaskScheduled event, both fixed by the orchestration's history).
 * Activities of many instances run at once and finish in any order; a shared random stream would hand
 * each invocation a different draw from run to run, and one seed would not give one run.
 */
export function faultDraw(
  seed: number,
  fault: 'activityTransient' | 'activityResultLost',
  instanceId: string,
  taskId: number,
): number {
  return keyedRandom(seed, fault)(`${instanceId}\u0000${taskId}`);
}

export interface ActivityRunnerStats {
  activitiesRun: number;
  activityFailures: number;
  faultsInjected: number;
}

export interface ActivityRunner {
  /**
   * Never rejects: a failure is an outcome, as it is in the orchestration history. `taskId` is the
   * EventId of the invocation's TaskScheduled event.
   */
  run(name: string, input: unknown, instanceId: string, taskId: number): Promise<ActivityOutcome>;
  stats(): ActivityRunnerStats;
}

export const INJECTED_FAULT_CODE = 'injected-activity-fault';

/** A .NET exception as `Utils.SerializeCause` writes it into `Details` (trimmed to what callers read). */
function serializedCause(message: string, stack: string): string {
  const friendly = ` ${message}`;
  return JSON.stringify({
    $type: 'System.Exception, System.Private.CoreLib',
    ClassName: 'System.Exception',
    Message: friendly,
    Data: null,
    InnerException: {
      $type: 'Microsoft.Azure.WebJobs.Script.Workers.Rpc.RpcException, Microsoft.Azure.WebJobs.Script',
      IsUserException: false,
      RemoteStackTrace: stack,
      RemoteMessage: message,
      ClassName: 'Microsoft.Azure.WebJobs.Script.Workers.Rpc.RpcException',
      Message: `Result: Failure\nException: ${message}\nStack: ${stack}`,
    },
    HelpURL: null,
    StackTraceString: null,
    HResult: -2146233088,
    Source: null,
  });
}

/** `wrapActivityHandler` replaces the message with this JSON when an exception properties provider is set. */
function failureDetailsOf(message: string): FailureDetailsPayload | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const payload = parsed as Record<string, unknown>;
  if (typeof payload.errorType !== 'string' || typeof payload.errorMessage !== 'string') return undefined;
  const details: FailureDetailsPayload = {
    ErrorType: payload.errorType,
    ErrorMessage: payload.errorMessage,
    IsNonRetriable: payload.isNonRetriable === true,
  };
  if (typeof payload.stackTrace === 'string') details.StackTrace = payload.stackTrace;
  if (typeof payload.properties === 'object' && payload.properties !== null) {
    details.Properties = payload.properties as Record<string, unknown>;
  }
  return details;
}

/**
 * The extension reads the worker's message out of "Result: Failure\nException: <message>\nStack: ..."
 * keeping the space after the label, hence the double space after "failed:" seen on Azure too.
 */
export function activityFailure(name: string, error: unknown): ActivityOutcome {
  const message = errorMessage(error);
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  const outcome: ActivityOutcome = {
    ok: false,
    reason: `Activity function '${name}' failed:  ${message}`,
    details: serializedCause(message, stack),
  };
  const failureDetails = failureDetailsOf(message);
  if (failureDetails) outcome.failureDetails = failureDetails;
  return outcome;
}

function missingActivity(name: string): ActivityOutcome {
  const message = `Activity function '${name}' does not exist.`;
  return {
    ok: false,
    reason: `Activity function '${name}' failed: ${message}`,
    details: serializedCause(message, ''),
  };
}

/** At most `limit` calls at once; the others wait their turn in arrival order. */
function createLimiter(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await work();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

export function createActivityRunner(options: ActivityRunnerOptions): ActivityRunner {
  const stats: ActivityRunnerStats = { activitiesRun: 0, activityFailures: 0, faultsInjected: 0 };
  const limit = createLimiter(Math.max(1, options.maxConcurrent));
  const handlers = new Map<string, ActivityHandler>();
  const { activityTransient = 0, activityResultLost = 0, seed = 0 } = options.faults;
  /** The invocation each running InvocationContext stands for, by its invocationId. */
  const running = new Map<string, { instanceId: string; taskId: number }>();
  const drawn = (
    fault: 'activityTransient' | 'activityResultLost',
    probability: number,
    invocationId: string,
  ): boolean => {
    const invocation = running.get(invocationId);
    if (probability === 0 || invocation === undefined) return false;
    if (faultDraw(seed, fault, invocation.instanceId, invocation.taskId) >= probability) return false;
    stats.faultsInjected++;
    return true;
  };
  for (const definition of options.activities) {
    const { name, handler } = definition;
    // The faults are thrown inside the wrapped handler so that they are reported like any other failure.
    const faulty: ActivityHandler = async (input, context) => {
      if (drawn('activityTransient', activityTransient, context.invocationId)) {
        throw new TransientError(INJECTED_FAULT_CODE, `injected transient fault in activity ${name}`);
      }
      const result: unknown = await handler(input, context);
      if (drawn('activityResultLost', activityResultLost, context.invocationId)) {
        throw new TransientError(
          INJECTED_FAULT_CODE,
          `injected fault: activity ${name} ran, then its result was lost`,
        );
      }
      return result;
    };
    handlers.set(name, wrapActivity(faulty));
  }

  const invoke = async (
    name: string,
    handler: ActivityHandler,
    input: unknown,
    instanceId: string,
    taskId: number,
  ) => {
    const invocationId = randomUUID();
    running.set(invocationId, { instanceId, taskId });
    const context = new InvocationContext({
      functionName: name,
      invocationId,
      triggerMetadata: { instanceId },
      logHandler: (level, ...args) => options.log?.(name, level, format(...args)),
    });
    stats.activitiesRun++;
    try {
      // The result crosses the host as JSON, as it does on Azure.
      const result: unknown = await handler(input, context);
      return { ok: true, resultJson: toJson(result) } satisfies ActivityOutcome;
    } catch (error) {
      stats.activityFailures++;
      return activityFailure(name, error);
    } finally {
      running.delete(invocationId);
    }
  };

  return {
    run(name, input, instanceId, taskId) {
      const handler = handlers.get(name);
      if (!handler) return Promise.resolve(missingActivity(name));
      // Each invocation gets its own copy of the input, as a deserialized host payload would be.
      const copy: unknown = JSON.parse(toJson(input));
      return limit(() => invoke(name, handler, copy, instanceId, taskId));
    },
    stats: () => ({ ...stats }),
  };
}
