import type { InvocationContext } from '@azure/functions';
import { applyEntry, type ConsumerDeps } from '../services/idempotent-consumer';
import { realTimeBackoff, rideOut, type Backoff } from '../services/backoff';
import { retryTracer } from './retry-trace';
import { QUEUE } from '../services/queues';
import { durableClientInput } from '../adapters/azure/durable-client';
import { deliveredMessage } from './delivered-message';
import type { ServiceBusQueueFunction } from './definition';
import { SERVICE_BUS_CONNECTION } from './ledger-processor';

/**
 * `orderTransactions`: the idempotent consumer, one order's session at a time. Its dependencies may
 * depend on the invocation (on Azure the durable client comes from the invocation's bindings).
 * A transient failure is tried again inside the delivery (src/services/backoff.ts) before the
 * message goes back to the broker.
 */
export function orderTransactions(
  deps: (context: InvocationContext) => ConsumerDeps,
  backoff: Backoff = realTimeBackoff(),
): ServiceBusQueueFunction {
  return {
    name: 'orderTransactions',
    queueName: QUEUE.orderTransactions,
    connection: SERVICE_BUS_CONNECTION,
    isSessionsEnabled: true,
    // The fulfillment starter's durable client.
    extraInputs: [durableClientInput],
    handler: async (body, context) => {
      // An entry travels in its order's session: the entry's orderId is compared as the worker converts it.
      const message = deliveredMessage(body, context, { sessionId: 'orderId' });
      const resolved = deps(context);
      const outcome = await rideOut(
        backoff,
        () => applyEntry(resolved, message),
        retryTracer(resolved.telemetry, context, message),
      );
      resolved.telemetry.trace(
        outcome.kind === 'parked' ? 'warning' : 'information',
        `order transaction ${outcome.kind}`,
        {
          invocationId: context.invocationId,
          messageId: message.messageId,
          sessionId: message.sessionId,
          deliveryCount: message.deliveryCount,
          sequence: message.applicationProperties.sequence,
          correlationId: message.correlationId,
          ...outcome,
        },
      );
    },
  };
}
