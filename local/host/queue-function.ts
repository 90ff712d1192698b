/**
 * A Service Bus function as the embedded host runs it: its trigger options read from the binding
 * metadata `@azure/functions` registered (`app.serviceBusQueue` → `trigger.serviceBusQueue`:
 * `queueName`, `connection`, `isSessionsEnabled`), and each delivery invoked through the Node
 * worker's path with the payload the host and the Service Bus extension send (../worker/service-bus).
 */
import { randomUUID } from 'node:crypto';
import type { ReceivedMessage } from '../broker/broker';
import {
  bindExtraInputs,
  booleanOption,
  stringOption,
  triggerOf,
  withTrigger,
  type InputBinder,
} from '../worker/bindings';
import type { RegisteredFunction } from '../worker/core';
import { invokeThroughWorker, type WorkerLog } from '../worker/invoke';
import { serviceBusBody, serviceBusTriggerMetadata } from '../worker/service-bus';

export const SERVICE_BUS_TRIGGER = 'serviceBusTrigger';

export interface QueueFunction {
  readonly registered: RegisteredFunction;
  readonly name: string;
  readonly queueName: string;
  readonly connection: string;
  readonly isSessionsEnabled: boolean;
  readonly triggerName: string;
}

export function queueFunctionsOf(functions: readonly RegisteredFunction[]): QueueFunction[] {
  return withTrigger(functions, SERVICE_BUS_TRIGGER).map((registered) => {
    const { name, binding } = triggerOf(registered);
    return {
      registered,
      name: registered.metadata.name,
      queueName: stringOption(registered, binding, 'queueName'),
      connection: stringOption(registered, binding, 'connection'),
      isSessionsEnabled: booleanOption(binding, 'isSessionsEnabled'),
      triggerName: name,
    };
  });
}

/**
 * Invocation ids as the host's: GUID-shaped and unique, here a random prefix per host and a
 * counter, which costs a fraction of a `randomUUID` for every message.
 */
export function invocationIds(): () => string {
  const prefix = randomUUID().slice(0, 24);
  let counter = 0;
  return () => {
    counter += 1;
    return prefix + counter.toString(16).padStart(12, '0');
  };
}

/** Runs the function for one delivery; resolves when the handler returned, rejects with its error. */
export async function invokeForMessage(
  fn: QueueFunction,
  message: ReceivedMessage,
  invocationId: string,
  binder: InputBinder | undefined,
  log: WorkerLog,
): Promise<void> {
  const extraInputs = await bindExtraInputs(fn.registered, binder);
  await invokeThroughWorker(
    fn.registered,
    {
      invocationId,
      functionId: fn.registered.metadata.functionId ?? fn.name,
      inputData: [{ name: fn.triggerName, data: serviceBusBody(message) }, ...extraInputs],
      triggerMetadata: serviceBusTriggerMetadata(message),
      traceContext: { traceParent: '', traceState: '', attributes: {} },
    },
    log,
  );
}
