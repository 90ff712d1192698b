/**
 * Reading the binding metadata `@azure/functions` produced for a registered function
 * (azure-functions-nodejs-library `src/converters/toCoreFunctionMetadata.ts`): the trigger is the one
 * `in` binding whose type ends in `Trigger`, extra inputs are the other `in` bindings, and every
 * binding is keyed by its name. The embedded host takes a function's trigger options from here, not
 * from a copy of its own.
 */
import type { RpcBindingInfo, RpcTypedData } from './core-types';
import type { RegisteredFunction } from './core';

export interface NamedBinding {
  name: string;
  binding: RpcBindingInfo;
}

export function isTriggerType(type: unknown): boolean {
  return typeof type === 'string' && /trigger$/i.test(type);
}

export function triggerOf(registered: RegisteredFunction): NamedBinding {
  for (const [name, binding] of Object.entries(registered.metadata.bindings)) {
    if (binding.direction === 'in' && isTriggerType(binding.type)) return { name, binding };
  }
  throw new Error(`function ${registered.metadata.name} has no trigger binding`);
}

export function extraInputsOf(registered: RegisteredFunction): NamedBinding[] {
  return Object.entries(registered.metadata.bindings)
    .filter(([, binding]) => binding.direction === 'in' && !isTriggerType(binding.type))
    .map(([name, binding]) => ({ name, binding }));
}

export function stringOption(
  registered: RegisteredFunction,
  binding: RpcBindingInfo,
  option: string,
): string {
  const value = binding[option];
  if (typeof value !== 'string' || value === '') {
    throw new Error(`function ${registered.metadata.name}: binding ${String(binding.type)} has no ${option}`);
  }
  return value;
}

export function booleanOption(binding: RpcBindingInfo, option: string): boolean {
  return binding[option] === true;
}

/** The functions whose trigger is of one type, e.g. `serviceBusTrigger`. */
export function withTrigger(functions: readonly RegisteredFunction[], type: string): RegisteredFunction[] {
  return functions.filter((registered) => triggerOf(registered).binding.type === type);
}

/**
 * The value of each extra input for one invocation, as the host binds it (e.g. the durable client's
 * JSON); an input the host cannot bind fails the invocation, as a binding error does on Azure.
 */
export type InputBinder = (input: NamedBinding, functionName: string) => RpcTypedData | Promise<RpcTypedData>;

export async function bindExtraInputs(
  registered: RegisteredFunction,
  binder: InputBinder | undefined,
): Promise<Array<{ name: string; data: RpcTypedData }>> {
  const inputs = extraInputsOf(registered);
  if (inputs.length === 0) return [];
  if (binder === undefined) {
    throw new Error(
      `function ${registered.metadata.name} has inputs (${inputs.map((input) => input.binding.type).join(', ')}) ` +
        'that this host cannot bind',
    );
  }
  return Promise.all(
    inputs.map(async (input) => ({ name: input.name, data: await binder(input, registered.metadata.name) })),
  );
}
