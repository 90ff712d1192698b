/** The documents of one order's partition (`/orderId`) in the `orders` container. */
import { PermanentError } from '../domain/errors';
import type { OrderState } from '../domain/order';
import type { Document, FulfillmentInput } from './ports';
import type { ParkRequest } from './convoy/parking';

export const ORDERS_CONTAINER = 'orders';
export const ORDERS_PARTITION_KEY_PATH = '/orderId';

/**
 * Effects of the write that stored this document, carried out after it commits. Should the
 * process die before they are done, the redelivered message finds them here and does them again;
 * both effects are idempotent (the parked queue detects duplicates, a saga starts once).
 */
export interface Outbox {
  messageId: string;
  parks: ParkRequest[];
  startFulfillment: FulfillmentInput | null;
}

export interface OrderDocument extends Document, OrderState {
  kind: 'order';
  correlationId: string | null;
  outbox: Outbox | null;
}

/** The dedup marker written in the same transactional batch as the order change. */
export interface InboxMarker extends Document {
  kind: 'inbox';
  orderId: string;
  consumer: string;
  messageId: string;
  transactionId: string;
  digest: string;
  outcome: string;
}

export function inboxMarkerId(consumer: string, messageId: string): string {
  return `inbox:${consumer}:${messageId}`;
}

/** What `fulfillOrder` starts with. Only an order whose OrderCreated was applied has one: a customer
 * and a currency are never made up, their absence is an error. */
export function fulfillmentInputOf(state: OrderState, correlationId: string | null): FulfillmentInput {
  if (state.customerId === null || state.currency === null) {
    throw new PermanentError(
      'order-not-created',
      `order ${state.orderId} has no ${state.customerId === null ? 'customerId' : 'currency'}: its OrderCreated was not applied, so it has nothing to fulfill`,
    );
  }
  return {
    orderId: state.orderId,
    customerId: state.customerId,
    currency: state.currency,
    total: state.total,
    lines: state.lines.map((line) => ({ ...line })),
    correlationId,
  };
}
