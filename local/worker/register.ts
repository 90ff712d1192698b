/**
 * The app's definitions registered through `@azure/functions` exactly as the Azure entry point
 * registers them (src/functions/registration), captured by the stand-in core for one embedded app.
 */
import { registerFunctions, type FunctionDefinitions } from '../../src/functions/registration';
import { captureRegistrations, type RegisteredFunction } from './core';

export function registerAndCapture(definitions: Partial<FunctionDefinitions>): RegisteredFunction[] {
  return captureRegistrations(() =>
    registerFunctions({ serviceBus: [], http: [], orchestrations: [], activities: [], ...definitions }),
  );
}
