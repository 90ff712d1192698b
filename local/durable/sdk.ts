/**
 * What the durable-functions 3.x SDK exchanges with the Durable extension, typed and narrowed in one
 * place: the orchestrator trigger input, the actions an episode returns, the state it reports. The
 * functions themselves are the ones `df.app.orchestration` / `df.app.activity` registered
 * (./functions), invoked through the Node worker's path.
 */
import { errorMessage } from '../../src/domain/errors';
import type { HistoryEvent } from './history';

/** What the Durable extension passes to an orchestrator function (its trigger input). */
export interface OrchestratorTriggerInput {
  history: HistoryEvent[];
  input: unknown;
  instanceId: string;
  isReplaying: boolean;
  upperSchemaVersion: number;
  parentInstanceId: string | undefined;
  /** Required from schema V3 on by `createTimer`; a .NET TimeSpan string. */
  maximumShortTimerDuration: string;
  longRunningTimerIntervalDuration: string;
  defaultHttpAsyncRequestSleepTimeMillseconds: number;
}

/** One orchestrator episode: the trigger input in, the SDK's orchestrator state out (or its error thrown). */
export type OrchestratorFunction = (trigger: OrchestratorTriggerInput) => Promise<unknown>;

/** ReplaySchema.V4 (the enum counts from V1 = 0), the newest this SDK knows; actions come back nested. */
export const UPPER_SCHEMA_VERSION = 3;

/**
 * The embedded store has no timer length limit (as with the Netherite and MSSQL backends), so the
 * SDK never splits a timer into the long-timer chain the Azure Storage backend needs.
 */
export const MAXIMUM_SHORT_TIMER_DURATION = '36500.00:00:00';
export const LONG_RUNNING_TIMER_INTERVAL_DURATION = '3.00:00:00';
export const DEFAULT_HTTP_ASYNC_SLEEP_MS = 30_000;

// ---------------------------------------------------------------------------------------------
// Actions (lib/src/actions/ActionType.js)
// ---------------------------------------------------------------------------------------------

export const ActionType = {
  CallActivity: 0,
  CallActivityWithRetry: 1,
  ContinueAsNew: 4,
  CreateTimer: 5,
  WaitForExternalEvent: 6,
  WhenAny: 11,
  WhenAll: 12,
} as const;

export interface RetryPolicy {
  firstRetryIntervalInMilliseconds: number;
  maxNumberOfAttempts: number;
  backoffCoefficient: number | undefined;
  maxRetryIntervalInMilliseconds: number | undefined;
}

export type OrchestratorAction =
  | { kind: 'activity'; name: string; input: unknown; retry: RetryPolicy | undefined }
  | { kind: 'timer'; fireAt: number; isCanceled: boolean }
  | { kind: 'event'; name: string }
  | { kind: 'continueAsNew'; input: unknown }
  | { kind: 'unsupported'; actionType: unknown };

/** Activities and timers take the next sequence number when scheduled; the others take none. */
export function takesTaskId(action: OrchestratorAction): boolean {
  return action.kind === 'activity' || action.kind === 'timer';
}

export interface FlatActions {
  /** Leaf actions in scheduling order, each once (a task yielded again inside a new Task.all/any repeats its object). */
  leaves: OrchestratorAction[];
  /** For each top-level action (one per yield that scheduled something), the indices of its leaves. */
  tops: number[][];
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

function numberField(source: Record<string, unknown>, field: string): number | undefined {
  const value = source[field];
  return typeof value === 'number' ? value : undefined;
}

function stringField(source: Record<string, unknown>, field: string): string {
  const value = source[field];
  if (typeof value !== 'string') throw new Error(`orchestrator action without ${field}`);
  return value;
}

function timeOf(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'string') return Date.parse(value);
  throw new Error('timer action without fireAt');
}

/** `Utils.processInput` sends a string input JSON-encoded; the extension decodes it for the activity. */
function activityInput(input: unknown): unknown {
  return typeof input === 'string' ? JSON.parse(input) : input;
}

function retryPolicy(value: unknown): RetryPolicy {
  const options = record(value);
  const first = options && numberField(options, 'firstRetryIntervalInMilliseconds');
  const attempts = options && numberField(options, 'maxNumberOfAttempts');
  if (!options || first === undefined || attempts === undefined)
    throw new Error('retry action without retryOptions');
  return {
    firstRetryIntervalInMilliseconds: first,
    maxNumberOfAttempts: attempts,
    backoffCoefficient: numberField(options, 'backoffCoefficient'),
    maxRetryIntervalInMilliseconds: numberField(options, 'maxRetryIntervalInMilliseconds'),
  };
}

function toAction(source: Record<string, unknown>): OrchestratorAction {
  switch (source.actionType) {
    case ActionType.CallActivity:
      return {
        kind: 'activity',
        name: stringField(source, 'functionName'),
        input: activityInput(source.input),
        retry: undefined,
      };
    case ActionType.CallActivityWithRetry:
      return {
        kind: 'activity',
        name: stringField(source, 'functionName'),
        input: activityInput(source.input),
        retry: retryPolicy(source.retryOptions),
      };
    case ActionType.CreateTimer:
      return { kind: 'timer', fireAt: timeOf(source.fireAt), isCanceled: source.isCanceled === true };
    case ActionType.WaitForExternalEvent:
      return { kind: 'event', name: stringField(source, 'externalEventName') };
    case ActionType.ContinueAsNew:
      return { kind: 'continueAsNew', input: activityInput(source.input) };
    default:
      return { kind: 'unsupported', actionType: source.actionType };
  }
}

/**
 * Flattens the cumulative actions an episode returns. Leaves are deduplicated by object identity:
 * within one run the SDK reuses a task's action object wherever the task appears again.
 */
export function flattenActions(actions: unknown): FlatActions {
  const leaves: OrchestratorAction[] = [];
  const tops: number[][] = [];
  const seen = new Map<object, number>();
  const visit = (value: unknown, into: number[]): void => {
    const source = record(value);
    if (!source) throw new Error('orchestrator returned a malformed action');
    if (source.actionType === ActionType.WhenAll || source.actionType === ActionType.WhenAny) {
      const children = source.compoundActions;
      if (!Array.isArray(children)) throw new Error('compound action without compoundActions');
      for (const child of children) visit(child, into);
      return;
    }
    let index = seen.get(source);
    if (index === undefined) {
      index = leaves.push(toAction(source)) - 1;
      seen.set(source, index);
    }
    into.push(index);
  };
  if (!Array.isArray(actions)) throw new Error('orchestrator returned no actions array');
  for (const group of actions) {
    if (!Array.isArray(group)) throw new Error('orchestrator returned a malformed actions array');
    for (const action of group) {
      const top: number[] = [];
      visit(action, top);
      tops.push(top);
    }
  }
  return { leaves, tops };
}

// ---------------------------------------------------------------------------------------------
// Episode results
// ---------------------------------------------------------------------------------------------

export interface EpisodeState {
  isDone: boolean;
  actions: FlatActions;
  output: unknown;
  /** Present only when the orchestrator set a truthy custom status (the SDK omits the others). */
  customStatus: { value: unknown } | undefined;
  error: string | undefined;
}

function readState(value: unknown): EpisodeState {
  const state = record(value);
  if (!state || typeof state.isDone !== 'boolean')
    throw new Error('orchestrator returned no orchestrator state');
  return {
    isDone: state.isDone,
    actions: flattenActions(state.actions),
    output: state.output,
    customStatus: 'customStatus' in state ? { value: state.customStatus } : undefined,
    error: typeof state.error === 'string' ? state.error : undefined,
  };
}

export type EpisodeResult =
  | { outcome: 'ran'; state: EpisodeState }
  | { outcome: 'failed'; message: string; state: EpisodeState | undefined };

const OUT_OF_PROC_DATA_LABEL = '\n\n$OutOfProcData$:';

/**
 * An unhandled orchestrator failure is thrown as `<prefix>\n\n$OutOfProcData$:<state JSON>`. In
 * 3.5.0 the prefix is the orchestrator's `orchestratorReturned` flag ("false"), not the message, so
 * the message is taken from the state's `error`, which is what the extension reports too.
 */
function readFailure(error: unknown): EpisodeResult {
  const text = errorMessage(error);
  const at = text.indexOf(OUT_OF_PROC_DATA_LABEL);
  if (at < 0) return { outcome: 'failed', message: text, state: undefined };
  let state: EpisodeState | undefined;
  try {
    state = readState(JSON.parse(text.slice(at + OUT_OF_PROC_DATA_LABEL.length)));
  } catch {
    state = undefined;
  }
  return { outcome: 'failed', message: state?.error ?? text.slice(0, at), state };
}

/** Runs one episode of a wrapped orchestrator and reads what it decided. */
export async function runOrchestrator(
  orchestrator: OrchestratorFunction,
  trigger: OrchestratorTriggerInput,
): Promise<EpisodeResult> {
  let value: unknown;
  try {
    value = await orchestrator(trigger);
  } catch (error) {
    return readFailure(error);
  }
  return { outcome: 'ran', state: readState(value) };
}
