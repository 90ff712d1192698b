import type { InvocationContext } from '@azure/functions';
import { processOrderTransaction, type OrderTransactionDeps } from '../services/order-transactions';
import { QUEUE } from '../services/queues';
import { deliveredMessage } from './delivered-message';
import type { ServiceBusQueueFunction } from './definition';
import { SERVICE_BUS_CONNECTION } from './ledger-processor';

/**
 * `orderTransactions`: the idempotent consumer, one order's session at a time. Its dependencies may
 * depend on the invocation (on Azure the durable client comes from the invocation's bindings).
 */
export function orderTransactions(
  deps: (context: InvocationContext) => OrderTransactionDeps,
): ServiceBusQueueFunction {
  return {
    name: 'orderTransactions',
    queueName: QUEUE.orderTransactions,
    connection: SERVICE_BUS_CONNECTION,
    isSessionsEnabled: true,
    handler: async (body, context) => {
      const message = deliveredMessage(body, context);
      const outcome = await processOrderTransaction(deps(context), message);
      context.log(`order transaction ${outcome.kind}`, {
        ...outcome,
        messageId: message.messageId,
        sessionId: message.sessionId,
        deliveryCount: message.deliveryCount,
        correlationId: message.correlationId,
      });
    },
  };
}
