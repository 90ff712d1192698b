import { fulfilmentInstanceId } from '../../domain/saga';
import type { FulfilmentStarter, OrchestrationClient } from '../ports';

/** Names the orchestrations and their events are known by, to the client side and the saga alike. */
export const FULFIL_ORDER = 'fulfillOrder';
export const CANCEL_CONFIRMED_ORDER = 'cancelConfirmedOrder';
export const CANCEL_EVENT = 'cancel';
export const REVIEW_EVENT = 'review';

export function cancellationInstanceId(orderId: string): string {
  return `cancel-${orderId}`;
}

/** Starts `fulfillOrder` as `fulfil-<orderId>`; the client refuses to start an existing instance. */
export function fulfilmentStarter(client: OrchestrationClient): FulfilmentStarter {
  return {
    async start(input) {
      await client.startNew(FULFIL_ORDER, fulfilmentInstanceId(input.orderId), input);
    },
  };
}
