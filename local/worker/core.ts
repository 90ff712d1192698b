/**
 * The embedded stand-in for `@azure/functions-core`, the module the Node worker provides at run time
 * (azure-functions-nodejs-worker `src/setupCoreModule.ts`): `@azure/functions` hands it its
 * programming model (`setProgrammingModel`), every function it registers (`registerFunction`, with
 * the binding metadata the library built) and every hook (`registerHook`). The embedded host then
 * invokes through that programming model, as the worker does.
 *
 * The library requires this module lazily and only once per module registry
 * (`src/utils/tryGetCoreApiLazy.ts`), so it must be resolvable before the first `app.*` call:
 * under jest through `moduleNameMapper`, under Node by the same `require` interception the worker
 * installs (`installCoreModule`).
 */
import Module from 'node:module';
import type {
  FunctionCallback,
  FunctionMetadata,
  HookCallback,
  ProgrammingModel,
  RpcLogCategory,
  RpcLogLevel,
} from './core-types';

export const CORE_MODULE = '@azure/functions-core';

/** The worker version this stand-in answers as (the library only checks that `log` exists). */
export const version = '3.10.1';
export const hostVersion = '4.1040.300';

/** azure-functions-nodejs-worker `src/Disposable.ts`: runs its callback once. */
export class Disposable {
  static from(...disposables: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => {
      for (const disposable of disposables) disposable.dispose();
    });
  }

  #callOnDispose: (() => unknown) | undefined;

  constructor(callOnDispose: () => unknown) {
    this.#callOnDispose = callOnDispose;
  }

  dispose(): unknown {
    const call = this.#callOnDispose;
    this.#callOnDispose = undefined;
    return call?.();
  }
}

/** One function as `registerFunction` received it: the library's metadata and its callback. */
export interface RegisteredFunction {
  readonly metadata: FunctionMetadata;
  readonly callback: FunctionCallback;
}

export type HookName = 'preInvocation' | 'postInvocation' | 'appStart' | 'appTerminate' | 'log';

let programmingModel: ProgrammingModel | undefined;
/** Registrations outside any capture (the Azure entry point loaded as the worker loads it). */
const appFunctions = new Map<string, RegisteredFunction>();
let capturing: Map<string, RegisteredFunction> | undefined;
const hooks = new Map<string, Set<HookCallback>>();
let systemLog: (level: RpcLogLevel, category: RpcLogCategory, message: string) => void = () => undefined;

export function setProgrammingModel(model: ProgrammingModel): void {
  programmingModel = model;
}

export function getProgrammingModel(): ProgrammingModel {
  if (programmingModel === undefined) {
    throw new Error('@azure/functions has not set its programming model: no function was registered yet');
  }
  return programmingModel;
}

/**
 * As the worker's `src/coreApi/registerFunction.ts`: the id is `functionId` or the name, and a
 * second function with the same id is refused.
 */
export function registerFunction(metadata: FunctionMetadata, callback: FunctionCallback): Disposable {
  const functions = capturing ?? appFunctions;
  const functionId = metadata.functionId ?? metadata.name;
  if (functions.has(functionId)) {
    throw new Error(`A function with id "${functionId}" has already been registered.`);
  }
  functions.set(functionId, { metadata, callback });
  return new Disposable(() => functions.delete(functionId));
}

export function registerHook(hookName: string, callback: HookCallback): Disposable {
  let registered = hooks.get(hookName);
  if (registered === undefined) {
    registered = new Set();
    hooks.set(hookName, registered);
  }
  const set = registered;
  set.add(callback);
  return new Disposable(() => set.delete(callback));
}

/** The hooks of one kind, in registration order (`src/hooks/getHooks.ts`). */
export function hooksOf(hookName: HookName): HookCallback[] {
  return [...(hooks.get(hookName) ?? [])];
}

export function log(level: RpcLogLevel, category: RpcLogCategory, message: string): void {
  systemLog(level, category, message);
}

/** Where the library's system log lines go (`workerSystemLog`); nowhere unless set. */
export function onSystemLog(handler: typeof systemLog): void {
  systemLog = handler;
}

/** Every function registered outside a capture, in registration order. */
export function registeredFunctions(): RegisteredFunction[] {
  return [...appFunctions.values()];
}

/**
 * Runs `register` (calls of `app.*` / `df.app.*`) and returns what it registered, kept apart from
 * every other capture: one process may hold several embedded apps, each with its own functions.
 */
export function captureRegistrations(register: () => void): RegisteredFunction[] {
  installCoreModule();
  if (capturing !== undefined) throw new Error('registrations are already being captured');
  const captured = new Map<string, RegisteredFunction>();
  capturing = captured;
  try {
    register();
  } finally {
    capturing = undefined;
  }
  return [...captured.values()];
}

let installed = false;

/**
 * Makes `require('@azure/functions-core')` answer with this module under plain Node, by the
 * interception the worker installs (`Module.prototype.require` behind a Proxy). Under jest the
 * module registry resolves it through `moduleNameMapper` instead, and this changes nothing there.
 */
export function installCoreModule(): void {
  if (installed) return;
  installed = true;
  const self: unknown = module.exports;
  Module.prototype.require = new Proxy(Module.prototype.require, {
    apply(target, thisArg, argArray: unknown[]) {
      if (argArray[0] === CORE_MODULE) return self;
      return Reflect.apply(target, thisArg, argArray) as unknown;
    },
  });
}
