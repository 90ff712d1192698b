/**
 * One invocation as the Node worker runs it (azure-functions-nodejs-worker
 * `src/eventHandlers/InvocationHandler.ts`): a core invocation context from the host's request and
 * the function's metadata, the library's invocation model for it (`getInvocationModel`), the
 * arguments it builds from the RPC input data and trigger metadata (`getArguments`), the
 * `preInvocation` hooks, the handler (`invokeFunction`), the `postInvocation` hooks, and the RPC
 * response (`getResponse`). A handler's error is thrown after the post-invocation hooks, as there.
 */
import type {
  CoreInvocationContext,
  HookData,
  InvocationState,
  PostInvocationContext,
  PreInvocationContext,
  RpcFunctionMetadata,
  RpcInvocationRequest,
  RpcInvocationResponse,
  RpcLogCategory,
  RpcLogLevel,
} from './core-types';
import { getProgrammingModel, hooksOf, type HookName, type RegisteredFunction } from './core';

export type WorkerLog = (
  functionName: string,
  level: RpcLogLevel,
  category: RpcLogCategory,
  message: string,
) => void;

const keptMetadata = new WeakMap<RegisteredFunction, RpcFunctionMetadata>();

/**
 * The function metadata as the worker keeps it (`src/coreApi/registerFunction.ts`): made once when
 * the function is registered, and the same object for each of its invocations.
 */
export function rpcMetadataOf(registered: RegisteredFunction): RpcFunctionMetadata {
  let kept = keptMetadata.get(registered);
  if (kept === undefined) {
    kept = metadataOf(registered);
    keptMetadata.set(registered, kept);
  }
  return kept;
}

function metadataOf(registered: RegisteredFunction): RpcFunctionMetadata {
  const { metadata } = registered;
  return {
    name: metadata.name,
    functionId: metadata.functionId ?? metadata.name,
    bindings: metadata.bindings,
    rawBindings: Object.entries(metadata.bindings).map(([name, binding]) =>
      JSON.stringify({ ...binding, name }),
    ),
    retryOptions: metadata.retryOptions,
    scriptFile: 'unknown',
  };
}

const appHookData: HookData = {};

async function runHooks(
  name: HookName,
  context: PreInvocationContext | PostInvocationContext,
): Promise<void> {
  for (const hook of hooksOf(name)) await (hook as (context: unknown) => unknown)(context);
}

export interface WorkerInvocation {
  response: RpcInvocationResponse;
  /** The library's InvocationContext the handler saw (for the host's own bookkeeping). */
  context: unknown;
}

export async function invokeThroughWorker(
  registered: RegisteredFunction,
  request: RpcInvocationRequest & { invocationId: string },
  log: WorkerLog,
): Promise<WorkerInvocation> {
  const name = registered.metadata.name;
  let state: InvocationState | undefined;
  const coreContext: CoreInvocationContext = {
    invocationId: request.invocationId,
    request,
    metadata: rpcMetadataOf(registered),
    get state() {
      return state;
    },
    set state(value) {
      state = value;
    },
    log: (level, category, message) => log(name, level, category, message),
  };
  const model = await getProgrammingModel().getInvocationModel(coreContext);
  const hookData: HookData = {};
  const { context, inputs } = await model.getArguments();
  const pre: PreInvocationContext = {
    hookData,
    appHookData,
    invocationContext: context,
    inputs,
    functionCallback: registered.callback,
  };
  coreContext.state = 'preInvocationHooks';
  try {
    await runHooks('preInvocation', pre);
  } finally {
    coreContext.state = undefined;
  }
  const post: PostInvocationContext = {
    hookData,
    appHookData,
    invocationContext: context,
    inputs: pre.inputs,
    result: null,
    error: null,
  };
  coreContext.state = 'invocation';
  try {
    post.result = await model.invokeFunction(context, pre.inputs, pre.functionCallback);
  } catch (error) {
    post.error = error;
  } finally {
    coreContext.state = undefined;
  }
  coreContext.state = 'postInvocationHooks';
  try {
    await runHooks('postInvocation', post);
  } finally {
    coreContext.state = undefined;
  }
  if (post.error !== null && post.error !== undefined) throw post.error;
  return { response: await model.getResponse(context, post.result), context };
}
