import { fulfilmentInstanceId } from '../domain/saga';
import type { FulfilmentStarter, OrchestrationClient } from './ports';

export const FULFIL_ORDER = 'fulfillOrder';

/** Starts `fulfillOrder` as `fulfil-<orderId>`; the client refuses to start an existing instance. */
export function fulfilmentStarter(client: OrchestrationClient): FulfilmentStarter {
  return {
    async start(input) {
      await client.startNew(FULFIL_ORDER, fulfilmentInstanceId(input.orderId), input);
    },
  };
}
