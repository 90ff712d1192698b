/**
 * The OrchestrationClient port on the Durable Functions client bound to the current invocation. Each
 * call is held to the call bound (src/adapters/handler-time.ts); the client takes no AbortSignal, so
 * a call past it is given up on, not stopped.
 */
import type { InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';
import type { DurableClient } from 'durable-functions';
import { TransientError } from '../../domain/errors';
import type { OrchestrationClient, OrchestrationRuntimeStatus } from '../../services/ports';
import { CALL_BOUND_MS } from '../handler-time';
import { withinCallBound } from './call-bound';

export const durableClientInput = df.input.durableClient();

/** The client throws a plain Error whose message carries the HTTP 404 for an unknown instance. */
function isNotFound(error: unknown): boolean {
  return error instanceof Error && /HTTP 404/.test(error.message);
}

function unavailable(what: string, error: unknown): TransientError {
  return new TransientError('durable-unavailable', `${what}: ${String(error)}`, { cause: error });
}

export function durableOrchestrationClient(context: InvocationContext): OrchestrationClient {
  // Made on first use: most invocations of orderTransactions start nothing, and the client costs an
  // HTTP client and the validation of every URL of its binding.
  let made: DurableClient | undefined;
  const client = (): DurableClient => (made ??= df.getClient(context));
  const getStatus: OrchestrationClient['getStatus'] = async (instanceId) => {
    try {
      const status = await withinCallBound(`status of ${instanceId}`, CALL_BOUND_MS, () =>
        client().getStatus(instanceId),
      );
      return {
        instanceId: status.instanceId,
        name: status.name,
        runtimeStatus: status.runtimeStatus as OrchestrationRuntimeStatus,
        input: status.input,
        output: status.output,
        customStatus: status.customStatus,
        createdTime: new Date(status.createdTime).toISOString(),
        lastUpdatedTime: new Date(status.lastUpdatedTime).toISOString(),
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      if (error instanceof TransientError) throw error;
      throw unavailable(`status of ${instanceId} unknown`, error);
    }
  };
  return {
    getStatus,
    async startNew(name, instanceId, input) {
      // An instance that exists, in whatever state, is not started again: a redelivered
      // submission must not run a second saga. A racing start fails and the redelivery sees it.
      if ((await getStatus(instanceId)) !== undefined) return false;
      try {
        await withinCallBound(`starting ${instanceId}`, CALL_BOUND_MS, () =>
          client().startNew(name, { instanceId, input }),
        );
        return true;
      } catch (error) {
        if (error instanceof TransientError) throw error;
        throw unavailable(`could not start ${instanceId}`, error);
      }
    },
    async raiseEvent(instanceId, eventName, data) {
      try {
        await withinCallBound(`raising ${eventName} on ${instanceId}`, CALL_BOUND_MS, () =>
          client().raiseEvent(instanceId, eventName, data),
        );
      } catch (error) {
        if (error instanceof TransientError) throw error;
        throw unavailable(`could not raise ${eventName} on ${instanceId}`, error);
      }
    },
  };
}
