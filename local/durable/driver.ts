/**
 * The embedded Durable Functions runtime (docs/architecture.md decision 5): runs orchestrations written for the
 * real `durable-functions` SDK as the Durable extension does, without a host. Each episode hands the
 * SDK's own orchestrator function the instance history, reads the actions it returns (cumulative:
 * only the new ones are carried out, see durable-episode), runs activities and timers, and appends
 * their outcomes to the history for the next episode. Retries of `callActivityWithRetry` follow the
 * extension's retry interceptor: after each failed attempt a timer, then a new attempt, and a timer
 * after the last one too, which the SDK waits for before it throws into the orchestrator.
 *
 * One new event per episode: the SDK numbers tasks in the order it meets them while replaying, so
 * feeding events one at a time is what keeps the ids the driver assigns predictable.
 */
import type { WorkerLog } from '../worker/invoke';
import { createActivityRunner, type ActivityOutcome } from './activity';
import { durableClientBinding } from './client-binding';
import { createDriverClock } from './clock';
import { decideOnActions, decideOnEvent, newReplayBook, type Effect } from './episode';
import { orchestratorsOf } from './functions';
import {
  copyEvents,
  executionCompleted,
  executionStarted,
  orchestratorCompleted,
  orchestratorStarted,
  taskCompleted,
  taskFailed,
  timerFired,
  toJson,
  type HistoryEvent,
} from './history';
import { isFinished, stateOf, throughJson, triggerInput, type Instance } from './instance';
import { createManagementApi } from './management-api';
import { createInstanceControl } from './instance-control';
import { runOrchestrator, type OrchestratorFunction } from './sdk';

export type { ClockOption } from './clock';
export type { DurableLog } from './activity';
export type { HistoryEvent } from './history';
export type { InstanceWait } from './instance';
export type { PurgeFilter } from './management-api';

export type { ActivityFaults as DurableDriverFaults } from './activity';
export type {
  DurableDriver,
  DurableDriverOptions,
  DurableDriverStats,
  InstanceSummary,
  ReplayCheck,
} from './driver-types';
import type { DurableDriver, DurableDriverOptions } from './driver-types';

const DEFAULT_MAX_CONCURRENT_ACTIVITIES = 16;
/** The extension's hub name when host.json sets none. */
const DEFAULT_TASK_HUB = 'TestHubName';
/** A guard against an orchestration that keeps scheduling timers forever. */
const MAX_TIMER_STEPS = 100_000;

interface Waiter {
  ready(): boolean;
  resolve(): void;
  reject(error: Error): void;
}

export function createDurableDriver(options: DurableDriverOptions): DurableDriver {
  const clock = createDriverClock(options.clock ?? { mode: 'real' });
  const activities = createActivityRunner({
    functions: options.functions,
    maxConcurrent: options.maxConcurrentActivities ?? DEFAULT_MAX_CONCURRENT_ACTIVITIES,
    faults: options.faults ?? {},
    log: options.log,
  });
  const workerLog: WorkerLog = (functionName, level, category, message) => {
    if (level !== 'none' && category === 'user') options.log?.(functionName, level, message);
  };
  const orchestrators: Map<string, OrchestratorFunction> = orchestratorsOf(options.functions, workerLog);
  const taskHub = options.taskHub ?? DEFAULT_TASK_HUB;

  const instances = new Map<string, Instance>();
  // Kept up to date by refresh(), so that idleness is known without scanning every instance.
  const busy = new Set<Instance>();
  const onTimersOnly = new Set<Instance>();
  const inFlight = new Set<Promise<void>>();
  let waiters: Waiter[] = [];
  let started = false;
  let stopped = false;
  const counters = { instancesStarted: 0, instancesPurged: 0, episodes: 0, timersFired: 0 };

  const track = (work: Promise<void>): void => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };

  const isQuiet = (): boolean => busy.size === 0;
  const isIdle = (): boolean => busy.size === 0 && onTimersOnly.size === 0;

  const notify = (): void => {
    if (waiters.length === 0) return;
    const ready = waiters.filter((waiter) => waiter.ready());
    if (ready.length === 0) return;
    waiters = waiters.filter((waiter) => !ready.includes(waiter));
    for (const waiter of ready) waiter.resolve();
  };

  /** Re-files the instance after any change of what it waits for. */
  const refresh = (instance: Instance): void => {
    const state = stateOf(instance);
    if (state === 'episode' || state === 'activity') busy.add(instance);
    else busy.delete(instance);
    if (state === 'timer') onTimersOnly.add(instance);
    else onTimersOnly.delete(instance);
    notify();
  };

  const waitFor = (ready: () => boolean): Promise<void> => {
    if (stopped) return Promise.reject(new Error('durable driver stopped'));
    if (ready()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => waiters.push({ ready, resolve, reject }));
  };

  // ---------------------------------------------------------------------------------------------
  // Work: events in, timers and activities out
  // ---------------------------------------------------------------------------------------------

  const enqueue = (instance: Instance, event: HistoryEvent): void => {
    instance.inbox.push(event);
    pump(instance);
    refresh(instance);
  };

  const startTimer = (instance: Instance, timerId: number, fireAt: number): void => {
    const generation = instance.generation;
    const cancel = clock.schedule(fireAt, instance.instanceId, () => {
      instance.timers.delete(timerId);
      if (generation === instance.generation && !isFinished(instance.runtimeStatus)) {
        counters.timersFired++;
        enqueue(instance, timerFired(clock.now(), timerId, fireAt));
      } else {
        refresh(instance);
      }
    });
    instance.timers.set(timerId, cancel);
  };

  const cancelTimers = (
    instance: Instance,
    timerIds: Iterable<number> = [...instance.timers.keys()],
  ): void => {
    for (const timerId of timerIds) {
      instance.timers.get(timerId)?.();
      instance.timers.delete(timerId);
    }
  };

  const outcomeEvent = (taskId: number, outcome: ActivityOutcome): HistoryEvent =>
    outcome.ok
      ? taskCompleted(clock.now(), taskId, outcome.resultJson)
      : taskFailed(clock.now(), taskId, outcome);

  const runActivity = (instance: Instance, taskId: number, name: string, input: unknown): void => {
    const generation = instance.generation;
    instance.activitiesInFlight++;
    track(
      activities.run(name, input, instance.instanceId, taskId).then((outcome) => {
        instance.activitiesInFlight--;
        if (generation === instance.generation && !isFinished(instance.runtimeStatus) && !stopped) {
          enqueue(instance, outcomeEvent(taskId, outcome));
        } else {
          refresh(instance);
        }
      }),
    );
  };

  const carryOut = (instance: Instance, effect: Effect): void => {
    switch (effect.kind) {
      case 'runActivity':
        runActivity(instance, effect.taskId, effect.name, effect.input);
        break;
      case 'startTimer':
        startTimer(instance, effect.timerId, effect.fireAt);
        break;
      case 'cancelTimer':
        cancelTimers(instance, [effect.timerId]);
        break;
    }
  };

  // ---------------------------------------------------------------------------------------------
  // Episodes
  // ---------------------------------------------------------------------------------------------

  const finish = (
    instance: Instance,
    status: 'Completed' | 'Failed',
    output: unknown,
    recorded: HistoryEvent[],
    at: number,
  ): void => {
    instance.runtimeStatus = status;
    instance.output = output;
    instance.history.push(...copyEvents([...recorded, executionCompleted(at, status, toJson(output))], true));
    instance.inbox = [];
    cancelTimers(instance);
  };

  const fail = (instance: Instance, message: string, recorded: HistoryEvent[], at: number): void => {
    // The extension's wording, which is also what the status shows on Azure.
    finish(instance, 'Failed', `Orchestrator function '${instance.name}' failed: ${message}`, recorded, at);
  };

  /** continueAsNew: a fresh history with the new input; outcomes still in flight belong to the old run. */
  const restart = (instance: Instance, input: unknown, at: number): void => {
    instance.generation++;
    cancelTimers(instance);
    instance.inputJson = toJson(input);
    instance.history = [];
    instance.inbox = [executionStarted(at, instance.name, instance.inputJson)];
    instance.book = newReplayBook();
  };

  const runEpisode = async (instance: Instance, event: HistoryEvent): Promise<void> => {
    // The extension dequeues each work item from the task hub's control queue: I/O, so other work
    // (the Functions host's lock renewal, HTTP requests) gets its turn between episodes rather than
    // waiting for a whole saga run on a store without latency.
    await new Promise((resolve) => setImmediate(resolve));
    if (stopped) return;
    const at = clock.now();
    const generation = instance.generation;
    const opening = [orchestratorStarted(at), event];
    const onEvent = decideOnEvent(instance.book, event, at);
    const history = [...copyEvents(instance.history, true), ...copyEvents(opening, false)];
    const result = await runOrchestrator(instance.orchestrator, triggerInput(instance, history));
    if (generation !== instance.generation || stopped) return;
    counters.episodes++;
    instance.runtimeStatus = 'Running';
    instance.lastUpdatedTime = at;
    if (result.state?.customStatus) instance.customStatus = throughJson(result.state.customStatus.value);
    const recorded = [...opening, ...onEvent.events];
    if (result.outcome === 'failed') {
      fail(instance, result.message, [...recorded, orchestratorCompleted(at)], at);
      return;
    }
    const onActions = decideOnActions(instance.book, result.state.actions, at);
    if ('error' in onActions) {
      fail(instance, onActions.error, [...recorded, orchestratorCompleted(at)], at);
      return;
    }
    recorded.push(...onActions.events, orchestratorCompleted(at));
    if (result.state.isDone && onActions.continueAsNew) {
      restart(instance, onActions.continueAsNew.input, at);
    } else if (result.state.isDone) {
      finish(instance, 'Completed', throughJson(result.state.output), recorded, at);
    } else {
      instance.history.push(...copyEvents(recorded, true));
      for (const effect of [...onEvent.effects, ...onActions.effects]) carryOut(instance, effect);
    }
  };

  /** Runs the instance's episodes one after the other, one new event each. */
  function pump(instance: Instance): void {
    if (!started || stopped || instance.episodeRunning || isFinished(instance.runtimeStatus)) return;
    const event = instance.inbox.shift();
    if (!event) return;
    instance.episodeRunning = true;
    track(
      runEpisode(instance, event)
        .catch((error: unknown) => {
          const message = error instanceof Error ? error.message : String(error);
          fail(instance, `embedded durable driver: ${message}`, [], clock.now());
        })
        .finally(() => {
          instance.episodeRunning = false;
          pump(instance);
          refresh(instance);
        }),
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Client and control
  // ---------------------------------------------------------------------------------------------

  const { managed, client } = createInstanceControl({
    instances,
    orchestrators,
    clock,
    counters,
    enqueue,
    cancelTimers: (instance) => cancelTimers(instance),
    refresh,
  });
  const api = createManagementApi(managed, taskHub);

  const instanceOf = (instanceId: string): Instance => {
    const instance = instances.get(instanceId);
    if (!instance) throw new Error(`No instance with ID '${instanceId}' found.`);
    return instance;
  };

  return {
    client,
    durableClientInput: durableClientBinding(api, taskHub),
    purgeInstances: (filter) => managed.purgeWhere(filter),
    start() {
      if (stopped) throw new Error('durable driver stopped');
      started = true;
      for (const instance of instances.values()) pump(instance);
    },
    async stop() {
      stopped = true;
      await api.close();
      clock.stop();
      for (const instance of instances.values()) instance.timers.clear();
      const pending = waiters;
      waiters = [];
      for (const waiter of pending) waiter.reject(new Error('durable driver stopped'));
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    now: () => clock.now(),
    whenIdle: () => waitFor(isIdle),
    async runUntilIdle() {
      if (clock.mode === 'real') return waitFor(isIdle);
      for (let step = 0; ; step++) {
        await waitFor(isQuiet);
        if (onTimersOnly.size === 0) return;
        if (step >= MAX_TIMER_STEPS) {
          throw new Error(`runUntilIdle: instances still wait for timers after ${step} firings`);
        }
        // Time order: the earliest timer overall is due no later than any an instance waits for alone.
        if (!clock.fireNext()) return;
      }
    },
    async advanceTime(ms) {
      if (clock.mode !== 'virtual') throw new Error('advanceTime needs the virtual clock');
      const target = clock.now() + ms;
      for (let step = 0; step < MAX_TIMER_STEPS; step++) {
        await waitFor(isQuiet);
        const [next] = clock.pending();
        if (!next || next.fireAt > target) break;
        clock.fireNext();
      }
      clock.moveTo(target);
      await waitFor(isQuiet);
    },
    instances: () =>
      [...instances.values()].map((instance) => {
        const state = stateOf(instance);
        return {
          instanceId: instance.instanceId,
          name: instance.name,
          runtimeStatus: instance.runtimeStatus,
          waitingFor: state === 'finished' ? undefined : state,
          activitiesInFlight: instance.activitiesInFlight,
          pendingTimers: instance.timers.size,
          historyLength: instance.history.length,
        };
      }),
    history: (instanceId) => copyEvents(instanceOf(instanceId).history, true),
    async replayOnly(instanceId) {
      const instance = instanceOf(instanceId);
      const history = copyEvents(instance.history, true);
      const result = await runOrchestrator(instance.orchestrator, triggerInput(instance, history));
      const state = result.state;
      return {
        newActions: state ? Math.max(0, state.actions.leaves.length - instance.book.knownLeaves.length) : 0,
        isDone: state?.isDone ?? false,
        output: throughJson(state?.output),
      };
    },
    stats: () => ({ ...counters, managementRequests: api.requests(), ...activities.stats() }),
  };
}
