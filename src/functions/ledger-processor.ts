import { forwardLedgerBatch, type LedgerDeps } from '../services/convoy/ledger';
import { QUEUE } from '../services/queues';
import { deliveredMessage } from './delivered-message';
import type { ServiceBusQueueFunction } from './definition';

export const SERVICE_BUS_CONNECTION = 'ServiceBusConnection';

/** `ledgerProcessor`: validate and de-batch one ledger message (the serial part of the convoy). */
export function ledgerProcessor(deps: LedgerDeps): ServiceBusQueueFunction {
  return {
    name: 'ledgerProcessor',
    queueName: QUEUE.ledger,
    connection: SERVICE_BUS_CONNECTION,
    isSessionsEnabled: true,
    handler: async (body, context) => {
      // A batch's messageId is its batchId (CONTRACTS 1): the body's copy survives the worker's conversion.
      const message = deliveredMessage(body, context, { messageId: 'batchId' });
      const outcome = await forwardLedgerBatch(deps, message);
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
