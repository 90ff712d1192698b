/**
 * Runs durable activities as the Durable extension and the Functions host do: the function
 * `df.app.activity` registered (the handler inside the SDK's own `wrapActivityHandler`), invoked
 * through the worker's path (./functions), the result as JSON, and a failure reported as the
 * extension reports it (TaskFailed `Reason` and `Details`, plus `FailureDetails` when the app
 * registered an exception properties provider).
 */
import { keyedRandom } from '../faults';
import type { LogLevel } from '@azure/functions';
import { TransientError, errorMessage } from '../../src/domain/errors';
import type { RegisteredFunction } from '../worker/core';
import type { WorkerLog } from '../worker/invoke';
import { activitiesOf, type ActivityFunction } from './functions';
import { toJson, type FailureDetailsPayload } from './history';

export type DurableLog = (functionName: string, level: LogLevel, message: string) => void;

export type ActivityOutcome =
  | { ok: true; resultJson: string }
  | { ok: false; reason: string; details: string; failureDetails?: FailureDetailsPayload };

/** Seeded activity faults (docs/cli.md, `--faults`). */
export interface ActivityFaults {
  /** Probability that an invocation fails with a retryable error before its handler runs. */
  activityTransient?: number;
  /** Probability that an invocation does its work, then its result is lost: it fails with a retryable error. */
  activityResultLost?: number;
  /** Every draw is a function of this seed and of the invocation, never of the order invocations ran in. */
  seed?: number;
}

export interface ActivityRunnerOptions {
  functions: readonly RegisteredFunction[];
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
  const { activityTransient = 0, activityResultLost = 0, seed = 0 } = options.faults;
  const drawn = (
    fault: 'activityTransient' | 'activityResultLost',
    probability: number,
    instanceId: string,
    taskId: number,
  ): boolean => {
    if (probability === 0) return false;
    if (faultDraw(seed, fault, instanceId, taskId) >= probability) return false;
    stats.faultsInjected++;
    return true;
  };
  const workerLog: WorkerLog = (functionName, level, category, message) => {
    if (level !== 'none' && category === 'user') options.log?.(functionName, level, message);
  };
  const activities = activitiesOf(options.functions, workerLog);

  const invoke = async (
    name: string,
    activity: ActivityFunction,
    inputJson: string,
    instanceId: string,
    taskId: number,
  ) => {
    stats.activitiesRun++;
    try {
      // The faults fail the invocation as a host-side failure would: before the handler runs, or
      // after it did its work, when its result is lost on the way back.
      if (drawn('activityTransient', activityTransient, instanceId, taskId)) {
        throw new TransientError(INJECTED_FAULT_CODE, `injected transient fault in activity ${name}`);
      }
      const resultJson = await activity(inputJson, instanceId);
      if (drawn('activityResultLost', activityResultLost, instanceId, taskId)) {
        throw new TransientError(
          INJECTED_FAULT_CODE,
          `injected fault: activity ${name} ran, then its result was lost`,
        );
      }
      return { ok: true, resultJson } satisfies ActivityOutcome;
    } catch (error) {
      stats.activityFailures++;
      return activityFailure(name, error);
    }
  };

  return {
    run(name, input, instanceId, taskId) {
      const activity = activities.get(name);
      if (!activity) return Promise.resolve(missingActivity(name));
      // The input crosses the host as JSON, as it does on Azure.
      const inputJson = toJson(input);
      return limit(() => invoke(name, activity, inputJson, instanceId, taskId));
    },
    stats: () => ({ ...stats }),
  };
}
