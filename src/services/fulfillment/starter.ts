import { fulfillmentInstanceId, orderIdInInstanceId } from '../../domain/saga';
import type { FulfillmentStarter, OrchestrationClient } from '../ports';

/** Names the orchestrations and their events are known by, to the client side and the saga alike. */
export const FULFILL_ORDER = 'fulfillOrder';
export const CANCEL_CONFIRMED_ORDER = 'cancelConfirmedOrder';
export const CANCEL_EVENT = 'cancel';
export const REVIEW_EVENT = 'review';

/**
 * `cancelConfirmedOrder`'s instance: `cancel-<orderId>` for a plain order id, else
 * `cancel-sha256-<hex>`, as `fulfillmentInstanceId` names the saga (docs/saga.md, "Instance ids").
 */
export function cancellationInstanceId(orderId: string): string {
  return `cancel-${orderIdInInstanceId(orderId)}`;
}

/**
 * Starts `fulfillOrder` as `fulfillmentInstanceId(orderId)`; the client refuses to start an existing
 * instance.
 */
export function fulfillmentStarter(client: OrchestrationClient): FulfillmentStarter {
  return {
    async start(input) {
      await client.startNew(FULFILL_ORDER, fulfillmentInstanceId(input.orderId), input);
    },
  };
}
