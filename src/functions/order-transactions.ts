import type { InvocationContext } from '@azure/functions';
import type { Attributes } from '@opentelemetry/api';
import { applyEntry, type ConsumerDeps, type TransactionOutcome } from '../services/idempotent-consumer';
import { realTimeBackoff, rideOut, type Backoff } from '../services/backoff';
import { withinDeadline } from '../services/delivery-deadline';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../services/message-size';
import { FULFILL_ORDER } from '../services/fulfillment/starter';
import type { DeliveredMessage } from '../services/ports';
import { recordDeliveryWait } from './delivery-wait';
import { retryTracer } from './retry-trace';
import { QUEUE } from '../services/queues';
import { durableClientInput } from '../adapters/azure/durable-client';
import { deliveredMessage } from './delivered-message';
import type { ServiceBusQueueFunction } from './definition';
import { deliveryAttributes, SERVICE_BUS_CONNECTION } from './ledger-processor';
import {
  hostTraceContext,
  inInvocationSpan,
  messageTraceContext,
  SpanKind,
  tracedSender,
  tracedStarter,
} from './order-trace';

/**
 * The order an entry's delivery is for: the entry's `orderId`, else its session's (they are equal
 * unless the entry is misrouted, and then the entry's own order is the one an operator looks for).
 */
function orderOfDelivery(message: DeliveredMessage): string | undefined {
  const { body } = message;
  if (typeof body === 'object' && body !== null && Object.hasOwn(body, 'orderId')) {
    const orderId = (body as { orderId: unknown }).orderId;
    if (typeof orderId === 'string') return orderId;
  }
  return message.sessionId;
}

/** The verdict on the entry, on its delivery's span. */
function outcomeAttributes(outcome: TransactionOutcome): Attributes {
  return outcome.kind === 'parked'
    ? { 'order.entry.outcome': 'parked', 'order.entry.park_reason': outcome.reason }
    : { 'order.entry.outcome': outcome.kind };
}

/**
 * `orderTransactions`: the idempotent consumer, one order's session at a time. Its dependencies may
 * depend on the invocation (on Azure the durable client comes from the invocation's bindings).
 * A transient failure is tried again inside the delivery (src/services/backoff.ts) before the
 * message goes back to the broker; no call starts past the delivery's deadline
 * (src/services/delivery-deadline.ts).
 *
 * Each delivery is a span of its order's trace (./order-trace.ts), under the span that sent the
 * entry: a redelivery or a replay is another span there. The parks it sends and the saga it starts
 * are its children.
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
      await inInvocationSpan(
        {
          name: `process ${QUEUE.orderTransactions}`,
          kind: SpanKind.CONSUMER,
          orderId: orderOfDelivery(message),
          incoming: [hostTraceContext(context), messageTraceContext(message.applicationProperties)],
          attributes: deliveryAttributes(QUEUE.orderTransactions, message, context),
        },
        async (span) => {
          const resolved = deps(context);
          recordDeliveryWait(resolved.telemetry, QUEUE.orderTransactions, context);
          const traced: ConsumerDeps = {
            ...resolved,
            sender: tracedSender(resolved.sender, resolved.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES),
            fulfillment: tracedStarter(resolved.fulfillment, FULFILL_ORDER),
          };
          const outcome = await rideOut(
            backoff,
            (deadline) => applyEntry(withinDeadline(traced, deadline), message),
            retryTracer(resolved.telemetry, context, message),
          );
          span.setAttributes(outcomeAttributes(outcome));
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
      );
    },
  };
}
