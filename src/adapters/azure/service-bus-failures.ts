/**
 * What a Service Bus failure means to the app: transient, permanent, or a role not in effect yet
 * (AuthorizationPendingError). No `@azure/service-bus` import: the embedded runtime's
 * `authorizationDelay` fault (local/outages.ts) raises the SDK's error shape and classifies it here,
 * through the very function the sender adapter uses, without loading the SDK.
 */
import { AuthorizationPendingError, PermanentError, TransientError } from '../../domain/errors';

/** The role the app's sender needs on a queue (bicep/modules/roles.bicep assigns it per queue). */
export const SERVICE_BUS_SENDER_ROLE = 'Azure Service Bus Data Sender';

/** The fields of `ServiceBusError` (@azure/service-bus) the classification reads. */
export interface ServiceBusErrorShape extends Error {
  name: 'ServiceBusError';
  code: string;
  retryable: boolean;
}

/**
 * As the SDK's own `isServiceBusError` decides it (sdk/servicebus/service-bus/src/serviceBusError.ts:
 * an object whose `name` is "ServiceBusError").
 */
export function isServiceBusErrorShape(error: unknown): error is ServiceBusErrorShape {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { name?: unknown }).name === 'ServiceBusError' &&
    typeof (error as { code?: unknown }).code === 'string'
  );
}

/** The role a call needs and where, so that a refusal can name them. */
export interface RoleNeeded {
  role: string;
  resource: string;
}

/**
 * Transient when Service Bus says so (or is busy, or timed out), or when the error is not one of
 * its own; permanent otherwise. `action` names what failed, e.g. `sending to parked`. With `needs`,
 * an `UnauthorizedAccess` (the service's amqp:unauthorized-access, which the SDK does not retry)
 * is a role not in effect yet, waited out; without it (the operations' one-shot calls) it stays
 * permanent.
 */
export function classify(error: unknown, action: string, needs?: RoleNeeded): Error {
  if (isServiceBusErrorShape(error)) {
    if (error.retryable || error.code === 'ServiceBusy' || error.code === 'ServiceTimeout') {
      return new TransientError('bus-unavailable', `${action} failed: ${error.message}`, {
        cause: error,
      });
    }
    if (needs !== undefined && error.code === 'UnauthorizedAccess') {
      return new AuthorizationPendingError(
        needs.role,
        needs.resource,
        `${action} failed (UnauthorizedAccess): ${error.message}`,
        { cause: error },
      );
    }
    return new PermanentError('bus-error', `${action} failed (${error.code}): ${error.message}`, {
      cause: error,
    });
  }
  return new TransientError('bus-unavailable', `${action} failed: ${String(error)}`, {
    cause: error,
  });
}

/** What the sender needs to send to `queue`: the Data Sender role on that queue. */
export function senderRoleOn(fullyQualifiedNamespace: string, queue: string): RoleNeeded {
  return { role: SERVICE_BUS_SENDER_ROLE, resource: `queue ${queue} of ${fullyQualifiedNamespace}` };
}
