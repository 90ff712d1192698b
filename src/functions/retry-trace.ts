import type { InvocationContext } from '@azure/functions';
import { trace } from '@opentelemetry/api';
import { errorMessage } from '../domain/errors';
import type { RetryNotice } from '../services/backoff';
import type { DeliveredMessage, Telemetry } from '../services/ports';

/**
 * Each wait inside a delivery, as a warning and a count: an outage shows as a run of them. The
 * delivery's span (./order-trace.ts) says how many attempts failed.
 */
export function retryTracer(
  telemetry: Telemetry,
  context: InvocationContext,
  message: DeliveredMessage,
): (notice: RetryNotice) => void {
  return ({ error, attempt, delayMs, waitedMs }) => {
    const properties = {
      functionName: context.functionName,
      invocationId: context.invocationId,
      messageId: message.messageId,
      sessionId: message.sessionId,
      deliveryCount: message.deliveryCount,
      correlationId: message.correlationId,
    };
    trace.getActiveSpan()?.setAttribute('handler.failed_attempts', attempt);
    telemetry.metric('handler.retried', 1, { functionName: context.functionName });
    telemetry.trace('warning', 'transient failure; trying again in the same delivery', {
      ...properties,
      attempt,
      delayMs,
      waitedMs,
      error: errorMessage(error),
    });
  };
}
