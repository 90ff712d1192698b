/**
 * How every function definition is registered with the Functions host: one loop per trigger kind,
 * each definition's options (its extra inputs included) passed as they are. The Azure entry point
 * (./index) and the embedded runtime both call this; the embedded host then reads back what
 * `@azure/functions` registered, so neither side has registrations of its own.
 */
import { app } from '@azure/functions';
import * as df from 'durable-functions';
import type {
  ActivityDefinition,
  HttpFunctionDefinition,
  OrchestrationDefinition,
  ServiceBusQueueFunction,
} from './definition';

export interface FunctionDefinitions {
  serviceBus: readonly ServiceBusQueueFunction[];
  http: readonly HttpFunctionDefinition[];
  orchestrations: readonly OrchestrationDefinition[];
  activities: readonly ActivityDefinition[];
}

export function registerFunctions(definitions: FunctionDefinitions): void {
  for (const { name, handler, ...options } of definitions.serviceBus) {
    app.serviceBusQueue(name, { ...options, handler });
  }
  for (const { name, handler, ...options } of definitions.http) app.http(name, { ...options, handler });
  for (const { name, handler } of definitions.orchestrations) df.app.orchestration(name, handler);
  for (const { name, handler } of definitions.activities) df.app.activity(name, { handler });
}
