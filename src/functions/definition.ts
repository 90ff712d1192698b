/**
 * One definition per function: the trigger options and the handler, used both by the Azure
 * registration (`app.serviceBusQueue`) and by the embedded Functions host. The host never runs a copy.
 */
import type { InvocationContext } from '@azure/functions';

export interface ServiceBusQueueFunction {
  name: string;
  queueName: string;
  /** Name of the app-setting prefix of the identity-based connection, e.g. `ServiceBusConnection`. */
  connection: string;
  isSessionsEnabled: boolean;
  handler: (message: unknown, context: InvocationContext) => Promise<void>;
}
