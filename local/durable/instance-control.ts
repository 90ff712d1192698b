/**
 * Starting, querying, signalling and purging instances: what the management API (and the
 * in-process client) ask of the embedded durable driver, with the extension's semantics
 * (./management-api cites them).
 */
import type { OrchestrationClient } from '../../src/services/ports';
import type { DriverClock } from './clock';
import { eventRaised, executionStarted, toJson, type HistoryEvent } from './history';
import { isFinished, newInstance, statusOf, type Instance } from './instance';
import {
  instanceIdProblem,
  type ManagedInstances,
  type RaiseResult,
  type StartResult,
} from './management-api';
import type { OrchestratorFunction } from './sdk';

export interface InstanceControlDeps {
  instances: Map<string, Instance>;
  orchestrators: ReadonlyMap<string, OrchestratorFunction>;
  clock: Pick<DriverClock, 'now'>;
  counters: { instancesStarted: number; instancesPurged: number };
  enqueue(instance: Instance, event: HistoryEvent): void;
  cancelTimers(instance: Instance): void;
  refresh(instance: Instance): void;
}

export function createInstanceControl(deps: InstanceControlDeps): {
  managed: ManagedInstances;
  client: OrchestrationClient;
} {
  const { instances, orchestrators, clock, counters, enqueue, cancelTimers, refresh } = deps;

  const create = (
    name: string,
    orchestrator: OrchestratorFunction,
    instanceId: string,
    input: unknown,
  ): void => {
    const at = clock.now();
    const inputJson = toJson(input);
    const instance = newInstance(instanceId, name, orchestrator, inputJson, at);
    instances.set(instanceId, instance);
    counters.instancesStarted++;
    enqueue(instance, executionStarted(at, name, inputJson));
  };

  /** Drops an instance and its history; late outcomes of its work find it gone. */
  const purge = (instance: Instance): void => {
    instance.generation++;
    cancelTimers(instance);
    instance.runtimeStatus = 'Terminated';
    instance.inbox = [];
    instances.delete(instance.instanceId);
    counters.instancesPurged++;
    refresh(instance);
  };

  const managed: ManagedInstances = {
    start(name, instanceId, input): StartResult {
      const orchestrator = orchestrators.get(name);
      if (!orchestrator) return 'unknown-orchestrator';
      const problem = instanceIdProblem(instanceId);
      if (problem !== null) return { invalidInstanceId: problem };
      const existing = instances.get(instanceId);
      if (existing && !isFinished(existing.runtimeStatus)) return 'running';
      if (existing) purge(existing);
      create(name, orchestrator, instanceId, input);
      return 'started';
    },
    status(instanceId) {
      const instance = instances.get(instanceId);
      return instance && statusOf(instance);
    },
    raiseEvent(instanceId, eventName, data): RaiseResult {
      const instance = instances.get(instanceId);
      if (!instance) return 'not-found';
      if (isFinished(instance.runtimeStatus)) return 'gone';
      enqueue(instance, eventRaised(clock.now(), eventName, data));
      return 'accepted';
    },
    purge(instanceId) {
      const instance = instances.get(instanceId);
      if (!instance) return false;
      purge(instance);
      return true;
    },
    purgeWhere(filter) {
      // DurableClient.PurgeInstanceHistoryAsync(createdTimeFrom, createdTimeTo, runtimeStatus): by
      // creation time, within the statuses given (all of them when none is).
      const doomed = [...instances.values()].filter(
        (instance) =>
          instance.createdTime >= filter.createdTimeFrom &&
          (filter.createdTimeTo === undefined || instance.createdTime <= filter.createdTimeTo) &&
          (filter.runtimeStatus === undefined ||
            filter.runtimeStatus.length === 0 ||
            filter.runtimeStatus.includes(instance.runtimeStatus)),
      );
      doomed.forEach(purge);
      return doomed.length;
    },
  };

  const client: OrchestrationClient = {
    async startNew(name, instanceId, input) {
      if (!orchestrators.has(name)) {
        throw new Error(`orchestration ${name} is not registered with the embedded durable driver`);
      }
      if (instances.has(instanceId)) return false;
      const started = managed.start(name, instanceId, input);
      if (typeof started === 'object') throw new Error(started.invalidInstanceId);
      return started === 'started';
    },
    async getStatus(instanceId) {
      return managed.status(instanceId);
    },
    async raiseEvent(instanceId, eventName, data) {
      // As the durable client: unknown instance → error (HTTP 404); finished one → ignored (HTTP 410).
      if (managed.raiseEvent(instanceId, eventName, data) === 'not-found') {
        throw new Error(`No instance with ID '${instanceId}' found.`);
      }
    },
  };

  return { managed, client };
}
