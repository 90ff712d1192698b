/** One orchestration instance as the embedded durable driver keeps it, and what is read off it. */
import type { OrchestrationRuntimeStatus, OrchestrationStatus } from '../../src/services/ports';
import { newReplayBook, type ReplayBook } from './episode';
import { toJson, type HistoryEvent } from './history';
import {
  DEFAULT_HTTP_ASYNC_SLEEP_MS,
  LONG_RUNNING_TIMER_INTERVAL_DURATION,
  MAXIMUM_SHORT_TIMER_DURATION,
  UPPER_SCHEMA_VERSION,
  type OrchestratorFunction,
  type OrchestratorTriggerInput,
} from './sdk';

/** What a running instance waits for; `event` means a person (or another system) must act. */
export type InstanceWait = 'episode' | 'activity' | 'timer' | 'event';
export type InstanceState = 'finished' | InstanceWait;

export interface Instance {
  readonly instanceId: string;
  readonly name: string;
  readonly orchestrator: OrchestratorFunction;
  inputJson: string;
  runtimeStatus: OrchestrationRuntimeStatus;
  output: unknown;
  customStatus: unknown;
  readonly createdTime: number;
  lastUpdatedTime: number;
  history: HistoryEvent[];
  /** New events, each waiting for its own episode. */
  inbox: HistoryEvent[];
  episodeRunning: boolean;
  /** Bumped by continueAsNew, so that late outcomes of the previous run are dropped. */
  generation: number;
  book: ReplayBook;
  /** Pending timers by id, each with its cancel function. */
  timers: Map<number, () => void>;
  activitiesInFlight: number;
}

export function newInstance(
  instanceId: string,
  name: string,
  orchestrator: OrchestratorFunction,
  inputJson: string,
  at: number,
): Instance {
  return {
    instanceId,
    name,
    orchestrator,
    inputJson,
    runtimeStatus: 'Pending',
    output: undefined,
    customStatus: undefined,
    createdTime: at,
    lastUpdatedTime: at,
    history: [],
    inbox: [],
    episodeRunning: false,
    generation: 0,
    book: newReplayBook(),
    timers: new Map(),
    activitiesInFlight: 0,
  };
}

export function isFinished(status: OrchestrationRuntimeStatus): boolean {
  return status === 'Completed' || status === 'Failed' || status === 'Terminated';
}

/** Payloads cross the host as JSON: a copy through JSON is what the other side sees. */
export function throughJson(value: unknown): unknown {
  return JSON.parse(toJson(value));
}

export function stateOf(instance: Instance): InstanceState {
  if (isFinished(instance.runtimeStatus)) return 'finished';
  if (instance.episodeRunning || instance.inbox.length > 0) return 'episode';
  if (instance.activitiesInFlight > 0) return 'activity';
  // A retry backoff is work under way even when a cancel event is awaited alongside (Task.any).
  if (instance.book.retryTimers.size > 0) return 'timer';
  if (instance.book.liveWait) return 'event';
  // With nothing in flight and no timer, only an external event can move it on.
  return instance.timers.size > 0 ? 'timer' : 'event';
}

export function triggerInput(instance: Instance, history: HistoryEvent[]): OrchestratorTriggerInput {
  return {
    history,
    input: JSON.parse(instance.inputJson),
    instanceId: instance.instanceId,
    isReplaying: instance.history.length > 0,
    upperSchemaVersion: UPPER_SCHEMA_VERSION,
    parentInstanceId: undefined,
    maximumShortTimerDuration: MAXIMUM_SHORT_TIMER_DURATION,
    longRunningTimerIntervalDuration: LONG_RUNNING_TIMER_INTERVAL_DURATION,
    defaultHttpAsyncRequestSleepTimeMillseconds: DEFAULT_HTTP_ASYNC_SLEEP_MS,
  };
}

export function statusOf(instance: Instance): OrchestrationStatus {
  return {
    instanceId: instance.instanceId,
    name: instance.name,
    runtimeStatus: instance.runtimeStatus,
    input: JSON.parse(instance.inputJson),
    output: throughJson(instance.output),
    customStatus: throughJson(instance.customStatus),
    createdTime: new Date(instance.createdTime).toISOString(),
    lastUpdatedTime: new Date(instance.lastUpdatedTime).toISOString(),
  };
}
