/**
 * The `durableClient` input binding's value, as the Durable extension serialises it for an
 * out-of-process app (azure-functions-durable-extension
 * `src/WebJobs.Extensions.DurableTask/Bindings/BindingHelper.cs`, `DurableOrchestrationClientToString`:
 * `taskHubName`, `creationUrls` (`HttpApiHandler.GetInstanceCreationLinks`), `managementUrls` (the
 * management payload of the placeholder id `INSTANCEID`), `baseUrl`, `requiredQueryStringParameters`,
 * and `rpcBaseUrl`, the local endpoint durable-functions calls). It is a string, which the host sends
 * as RPC `string` and the Node worker parses.
 */
import type { RpcTypedData } from '../worker/core-types';
import { managementPayload, type ManagementApi } from './management-api';

const INSTANCE_ID_PLACEHOLDER = 'INSTANCEID';

/**
 * The binding's value for each invocation that declares it. The extension writes the same text for
 * every invocation of one task hub at one endpoint, and it writes it in the host, not in the worker:
 * so it is written here once per `rpcBaseUrl`, and each invocation gets that text (the worker still
 * parses it every time, as on Azure).
 */
export function durableClientBinding(api: ManagementApi, taskHub: string): () => Promise<RpcTypedData> {
  let written: { rpcBaseUrl: string; text: string } | undefined;
  return async () => {
    const rpcBaseUrl = await api.rpcBaseUrl();
    if (written?.rpcBaseUrl !== rpcBaseUrl) written = { rpcBaseUrl, text: bindingText(rpcBaseUrl, taskHub) };
    return { string: written.text };
  };
}

function bindingText(rpcBaseUrl: string, taskHub: string): string {
  const baseUrl = `${new URL(rpcBaseUrl).origin}/runtime/webhooks/durabletask`;
  // The system key of the extension's webhook; the embedded API asks for none.
  const requiredQueryStringParameters = '';
  const instancePrefix = `${baseUrl}/orchestrators/{functionName}[/{instanceId}]`;
  return JSON.stringify({
    taskHubName: taskHub,
    creationUrls: {
      createNewInstancePostUri: `${instancePrefix}?${requiredQueryStringParameters}`,
      createAndWaitOnNewInstancePostUri:
        `${instancePrefix}?timeout={timeoutInSeconds}&pollingInterval={intervalInSeconds}&` +
        requiredQueryStringParameters,
    },
    managementUrls: managementPayload(baseUrl, INSTANCE_ID_PLACEHOLDER, taskHub),
    baseUrl,
    requiredQueryStringParameters,
    rpcBaseUrl,
  });
}
