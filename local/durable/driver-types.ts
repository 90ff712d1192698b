/** The embedded durable driver as its callers see it: options, the driver's operations, its stats. */
import type { OrchestrationClient, OrchestrationRuntimeStatus } from '../../src/services/ports';
import type { RpcTypedData } from '../worker/core-types';
import type { RegisteredFunction } from '../worker/core';
import type { ActivityFaults, DurableLog } from './activity';
import type { ClockOption } from './clock';
import type { HistoryEvent } from './history';
import type { InstanceWait } from './instance';
import type { PurgeFilter } from './management-api';

export interface DurableDriverOptions {
  /** What `df.app.orchestration` / `df.app.activity` registered through `@azure/functions`. */
  functions: readonly RegisteredFunction[];
  /** The task hub the client binding names (host.json `durableTask.hubName`). */
  taskHub?: string;
  /** Real time by default. */
  clock?: ClockOption;
  /** Activities running at once across all instances; 16 by default. */
  maxConcurrentActivities?: number;
  faults?: ActivityFaults;
  log?: DurableLog;
}

export interface InstanceSummary {
  instanceId: string;
  name: string;
  runtimeStatus: OrchestrationRuntimeStatus;
  /** Undefined once the instance finished. */
  waitingFor: InstanceWait | undefined;
  activitiesInFlight: number;
  pendingTimers: number;
  historyLength: number;
}

export interface DurableDriverStats {
  instancesStarted: number;
  instancesPurged: number;
  /** Requests to the served management API (the app's durable client). */
  managementRequests: number;
  /** Orchestrator executions, each one a replay of the history so far plus one new event. */
  episodes: number;
  activitiesRun: number;
  activityFailures: number;
  timersFired: number;
  faultsInjected: number;
}

export interface ReplayCheck {
  /** Actions the orchestrator returned beyond those already carried out: 0 for a deterministic one. */
  newActions: number;
  isDone: boolean;
  output: unknown;
}

export interface DurableDriver {
  /** The extension's own client, in process (the app's functions use the HTTP API through `durableClientInput`). */
  readonly client: OrchestrationClient;
  /** The `durableClient` binding a function receives: where the served management API is. */
  durableClientInput(): Promise<RpcTypedData>;
  /** Purges as the extension's `PurgeInstanceHistoryAsync` with filters does; returns how many were deleted. */
  purgeInstances(filter: PurgeFilter): number;
  start(): void;
  /** Cancels every timer and waits for the episodes and activities in flight; pending whenIdle calls reject. */
  stop(): Promise<void>;
  now(): number;
  /**
   * Resolves when no activity or episode is in flight and every instance is finished or waiting for
   * an external event. With the virtual clock, an instance waiting for a timer only waits until
   * runUntilIdle or advanceTime moves the clock.
   */
  whenIdle(): Promise<void>;
  /**
   * Virtual clock: while some instance waits for a retry backoff, or for timers alone (a delay),
   * moves the clock to the next timer and fires it (timers fire in time order); then resolves like
   * whenIdle. A timer raced against an external event (a review timeout in a Task.any) fires only
   * once the clock passes it, e.g. with advanceTime. Real clock: same as whenIdle.
   */
  runUntilIdle(): Promise<void>;
  /** Virtual clock: moves the clock forward, firing every timer due on the way in time order. */
  advanceTime(ms: number): Promise<void>;
  instances(): InstanceSummary[];
  history(instanceId: string): HistoryEvent[];
  /** Runs the orchestrator once more over its recorded history, as a pure replay, to check determinism. */
  replayOnly(instanceId: string): Promise<ReplayCheck>;
  stats(): DurableDriverStats;
}
