import { forwardLedgerBatch, type LedgerDeps } from '../services/convoy/ledger';
import { realTimeBackoff, rideOut, type Backoff } from '../services/backoff';
import { retryTracer } from './retry-trace';
import { QUEUE } from '../services/queues';
import { deliveredMessage } from './delivered-message';
import type { ServiceBusQueueFunction } from './definition';

export const SERVICE_BUS_CONNECTION = 'ServiceBusConnection';
/** The name the ledger function is registered under. */
export const LEDGER_PROCESSOR = 'ledgerProcessor';

/**
 * `ledgerProcessor`: validate and de-batch one ledger message (the serial part of the convoy). A
 * transient failure (a send refused) is tried again inside the delivery before the message goes
 * back; entries already sent are dropped by the queue's duplicate detection (same messageId).
 */
export function ledgerProcessor(
  deps: LedgerDeps,
  backoff: Backoff = realTimeBackoff(),
): ServiceBusQueueFunction {
  return {
    name: LEDGER_PROCESSOR,
    queueName: QUEUE.ledger,
    connection: SERVICE_BUS_CONNECTION,
    isSessionsEnabled: true,
    handler: async (body, context) => {
      // A batch's messageId is its batchId (docs/messages.md): the body's copy survives the worker's conversion.
      const message = deliveredMessage(body, context, { messageId: 'batchId' });
      const outcome = await rideOut(
        backoff,
        () => forwardLedgerBatch(deps, message),
        retryTracer(deps.telemetry, context, message),
      );
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
  };
}
