/**
 * Orchestrators and activities as the Durable extension invokes them on a Node app: the functions
 * `df.app.orchestration` and `df.app.activity` registered through `@azure/functions` (an
 * `orchestrationTrigger` / `activityTrigger` binding, the SDK's `createOrchestrator` /
 * `wrapActivityHandler` as callback), each call going through the Node worker's path (../worker).
 *
 * What the extension binds (azure-functions-durable-extension
 * `src/WebJobs.Extensions.DurableTask/Bindings/OrchestrationTriggerAttributeBindingProvider.cs`,
 * `OrchestrationContextToString`; `ActivityTriggerAttributeBindingProvider.cs`, `BindAsync`): an
 * orchestrator gets the context JSON (history, input, instanceId, isReplaying, schema versions,
 * timer settings) as a string, which the worker parses; an activity gets its input as JSON, with
 * `instanceId` and `data` (the input again) as trigger metadata. The return value comes back as RPC
 * typed data (`toRpcTypedData`): the orchestrator's state as `json`, an activity's result as
 * `string`, `int`, `double` or `json`, which the host reads back into a .NET value and the extension
 * stores as the activity's JSON output.
 */
import { randomUUID } from 'node:crypto';
import { triggerOf, withTrigger } from '../worker/bindings';
import type { RpcTypedData } from '../worker/core-types';
import type { RegisteredFunction } from '../worker/core';
import { invokeThroughWorker, type WorkerLog } from '../worker/invoke';
import { toJson } from './history';
import type { OrchestratorFunction, OrchestratorTriggerInput } from './sdk';

export const ORCHESTRATION_TRIGGER = 'orchestrationTrigger';
export const ACTIVITY_TRIGGER = 'activityTrigger';

/** An activity call: the input's JSON in, the result's JSON out (or the handler's error thrown). */
export type ActivityFunction = (inputJson: string, instanceId: string) => Promise<string>;

function request(
  registered: RegisteredFunction,
  data: RpcTypedData,
  triggerMetadata: Record<string, RpcTypedData>,
): {
  invocationId: string;
  functionId: string;
  inputData: Array<{ name: string; data: RpcTypedData }>;
  triggerMetadata: Record<string, RpcTypedData>;
} {
  return {
    invocationId: randomUUID(),
    functionId: registered.metadata.functionId ?? registered.metadata.name,
    inputData: [{ name: triggerOf(registered).name, data }],
    triggerMetadata,
  };
}

/** The JSON the host and extension make of a returned RPC value (GrpcMessageConversionExtensions `ToObject`). */
export function returnedJson(value: RpcTypedData | null | undefined): string {
  if (value === null || value === undefined) return toJson(null);
  if (typeof value.string === 'string') return JSON.stringify(value.string);
  if (typeof value.json === 'string') return toJson(JSON.parse(value.json));
  if (typeof value.int === 'number') return JSON.stringify(value.int);
  if (typeof value.double === 'number') return JSON.stringify(value.double);
  if (value.bytes) return JSON.stringify(Buffer.from(value.bytes).toString('base64'));
  return toJson(null);
}

export function orchestratorsOf(
  functions: readonly RegisteredFunction[],
  log: WorkerLog,
): Map<string, OrchestratorFunction> {
  const orchestrators = new Map<string, OrchestratorFunction>();
  for (const registered of withTrigger(functions, ORCHESTRATION_TRIGGER)) {
    const orchestrator: OrchestratorFunction = async (trigger: OrchestratorTriggerInput) => {
      const { response } = await invokeThroughWorker(
        registered,
        request(registered, { string: JSON.stringify(trigger) }, {}),
        log,
      );
      const value = response.returnValue;
      if (typeof value?.json === 'string') return JSON.parse(value.json) as unknown;
      return typeof value?.string === 'string' ? value.string : undefined;
    };
    orchestrators.set(registered.metadata.name, orchestrator);
  }
  return orchestrators;
}

export function activitiesOf(
  functions: readonly RegisteredFunction[],
  log: WorkerLog,
): Map<string, ActivityFunction> {
  const activities = new Map<string, ActivityFunction>();
  for (const registered of withTrigger(functions, ACTIVITY_TRIGGER)) {
    const activity: ActivityFunction = async (inputJson, instanceId) => {
      const { response } = await invokeThroughWorker(
        registered,
        request(
          registered,
          { json: inputJson },
          { instanceId: { string: instanceId }, data: { json: inputJson } },
        ),
        log,
      );
      return returnedJson(response.returnValue);
    };
    activities.set(registered.metadata.name, activity);
  }
  return activities;
}
