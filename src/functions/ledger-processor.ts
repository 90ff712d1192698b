import type { InvocationContext } from '@azure/functions';
import type { Attributes } from '@opentelemetry/api';
import { forwardLedgerBatch, type LedgerDeps } from '../services/convoy/ledger';
import { realTimeBackoff, rideOut, type Backoff } from '../services/backoff';
import { withinDeadline } from '../services/delivery-deadline';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../services/message-size';
import type { DeliveredMessage } from '../services/ports';
import { recordDeliveryWait } from './delivery-wait';
import { retryTracer } from './retry-trace';
import { QUEUE } from '../services/queues';
import { deliveredMessage } from './delivered-message';
import type { ServiceBusQueueFunction } from './definition';
import {
  ATTRIBUTE,
  hostTraceContext,
  inInvocationSpan,
  messageTraceContext,
  SpanKind,
  tracedSender,
} from './order-trace';

export const SERVICE_BUS_CONNECTION = 'ServiceBusConnection';
/** The name the ledger function is registered under. */
export const LEDGER_PROCESSOR = 'ledgerProcessor';

/** What a Service Bus function's span says of the delivery it handles. */
export function deliveryAttributes(
  queue: string,
  message: DeliveredMessage,
  context: InvocationContext,
): Attributes {
  return {
    [ATTRIBUTE.messagingSystem]: 'servicebus',
    [ATTRIBUTE.destination]: queue,
    [ATTRIBUTE.operation]: 'process',
    [ATTRIBUTE.messageId]: message.messageId,
    [ATTRIBUTE.deliveryCount]: message.deliveryCount,
    [ATTRIBUTE.functionName]: context.functionName,
    [ATTRIBUTE.invocationId]: context.invocationId,
  };
}

/**
 * `ledgerProcessor`: validate and de-batch one ledger message (the serial part of the convoy). A
 * transient failure (a send refused) is tried again inside the delivery before the message goes
 * back; entries already sent are dropped by the queue's duplicate detection (same messageId). No
 * send starts past the delivery's deadline (src/services/delivery-deadline.ts).
 *
 * The batch has a trace of its own (its producer's, when the message carries one); each entry it
 * forwards or parks is sent in a span of that entry's order's trace, linked to the batch's span
 * (./order-trace.ts).
 */
export function ledgerProcessor(
  deps: LedgerDeps,
  backoff: Backoff = realTimeBackoff(),
): ServiceBusQueueFunction {
  const traced: LedgerDeps = {
    ...deps,
    sender: tracedSender(deps.sender, deps.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES),
  };
  return {
    name: LEDGER_PROCESSOR,
    queueName: QUEUE.ledger,
    connection: SERVICE_BUS_CONNECTION,
    isSessionsEnabled: true,
    handler: async (body, context) => {
      // A batch's messageId is its batchId (docs/messages.md): the body's copy survives the worker's conversion.
      const message = deliveredMessage(body, context, { messageId: 'batchId' });
      recordDeliveryWait(deps.telemetry, QUEUE.ledger, context);
      await inInvocationSpan(
        {
          name: `process ${QUEUE.ledger}`,
          kind: SpanKind.CONSUMER,
          incoming: [hostTraceContext(context), messageTraceContext(message.applicationProperties)],
          attributes: deliveryAttributes(QUEUE.ledger, message, context),
        },
        async (span) => {
          const outcome = await rideOut(
            backoff,
            (deadline) => forwardLedgerBatch(withinDeadline(traced, deadline), message),
            retryTracer(deps.telemetry, context, message),
          );
          span.setAttributes({
            'ledger.batch.id': outcome.batchId,
            'ledger.entries.forwarded': outcome.forwarded,
            'ledger.entries.parked': outcome.parked,
          });
          deps.telemetry.trace('information', 'ledger batch forwarded', {
            invocationId: context.invocationId,
            batchId: outcome.batchId,
            forwarded: outcome.forwarded,
            parked: outcome.parked,
            messageId: message.messageId,
            sessionId: message.sessionId,
            correlationId: message.correlationId ?? message.messageId,
          });
        },
      );
    },
  };
}
