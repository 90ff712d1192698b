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

export async function durableClientInput(api: ManagementApi, taskHub: string): Promise<RpcTypedData> {
  const rpcBaseUrl = await api.rpcBaseUrl();
  const baseUrl = `${new URL(rpcBaseUrl).origin}/runtime/webhooks/durabletask`;
  // The system key of the extension's webhook; the embedded API asks for none.
  const requiredQueryStringParameters = '';
  const instancePrefix = `${baseUrl}/orchestrators/{functionName}[/{instanceId}]`;
  return {
    string: JSON.stringify({
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
    }),
  };
}
