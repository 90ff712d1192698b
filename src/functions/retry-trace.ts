import type { InvocationContext } from '@azure/functions';
import { trace } from '@opentelemetry/api';
import { AuthorizationPendingError, errorMessage } from '../domain/errors';
import type { RetryNotice } from '../services/backoff';
import type { DeliveredMessage, Telemetry } from '../services/ports';

/**
 * Each wait inside a delivery, as a warning and a count: an outage shows as a run of them. The
 * delivery's span (./order-trace.ts) says how many attempts failed. A wait for a role not in effect
 * yet says which role and where, and raises `AuthorizationPending` once a delivery for each: the event
 * the alert on a role missing for over 30 minutes counts (bicep/modules/alerts.bicep).
 */
export function retryTracer(
  telemetry: Telemetry,
  context: InvocationContext,
  message: DeliveredMessage,
): (notice: RetryNotice) => void {
  const told = new Set<string>();
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
    if (error instanceof AuthorizationPendingError) {
      const { role, resource } = error;
      telemetry.trace(
        'warning',
        `waiting for the role ${role} on ${resource}; trying again in the same delivery`,
        {
          ...properties,
          role,
          resource,
          attempt,
          delayMs,
          waitedMs,
          error: errorMessage(error),
        },
      );
      const key = `${role}\u0000${resource}`;
      if (!told.has(key)) {
        told.add(key);
        telemetry.event('AuthorizationPending', { ...properties, role, resource });
      }
      return;
    }
    telemetry.trace('warning', 'transient failure; trying again in the same delivery', {
      ...properties,
      attempt,
      delayMs,
      waitedMs,
      error: errorMessage(error),
    });
  };
}
