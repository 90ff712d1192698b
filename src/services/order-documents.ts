/** The documents of one order's partition (`/orderId`) in the `orders` container. */
import { PermanentError } from '../domain/errors';
import type { OrderState } from '../domain/order';
import { entryMessageId, sha256Hex } from '../domain/digest';
import type { Document, FulfillmentInput } from './ports';
import type { ParkRequest } from './convoy/parking';

export const ORDERS_CONTAINER = 'orders';
export const ORDERS_PARTITION_KEY_PATH = '/orderId';

/**
 * Effects of the order's writes not yet known done: the parks of rejected entries and the saga
 * start. A write adds its own to those still pending, never drops one; the consumer does them after
 * the write commits and removes them, by a second write, once done. So an effect whose dependency
 * is down stays here through later writes, redeliveries and dead-lettering, and the next delivery on
 * the order (a later entry, a redelivery, an operator's replay) does it. Both effects are
 * idempotent: a park keeps its messageId (the parked queue detects duplicates), a saga starts once.
 */
export interface Outbox {
  parks: ParkRequest[];
  startFulfillment: FulfillmentInput | null;
}

const parkKey = (park: ParkRequest): string => park.transactionId ?? park.messageId;

/** What is pending after a write that adds `added` to what was pending before it. */
export function outboxAfter(pending: Outbox | null, added: Outbox): Outbox | null {
  const known = new Set((pending?.parks ?? []).map(parkKey));
  const parks = [...(pending?.parks ?? []), ...added.parks.filter((park) => !known.has(parkKey(park)))];
  const startFulfillment = added.startFulfillment ?? pending?.startFulfillment ?? null;
  return parks.length > 0 || startFulfillment !== null ? { parks, startFulfillment } : null;
}

/** What is left pending once the effects in `done` are done. */
export function outboxWithout(pending: Outbox | null, done: Outbox): Outbox | null {
  if (pending === null) return null;
  const finished = new Set(done.parks.map(parkKey));
  const parks = pending.parks.filter((park) => !finished.has(parkKey(park)));
  const startFulfillment =
    done.startFulfillment !== null && pending.startFulfillment?.orderId === done.startFulfillment.orderId
      ? null
      : pending.startFulfillment;
  return parks.length > 0 || startFulfillment !== null ? { parks, startFulfillment } : null;
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

/**
 * The marker is keyed on the entry's business identity, its transactionId and digest (both from the
 * body), not on the messageId it travelled under: a replay or a late re-send under a fresh messageId
 * is still the same entry. For an entry the ledger processor sent, the key is its messageId
 * (docs/messages.md (the ledger message)), so markers written before this keying still match.
 */
/**
 * A transactionId may hold `/ \ ? #`, which Cosmos DB refuses in an item id (document-rules): such a
 * marker is named by the transactionId's SHA-256 instead, so every id the contract allows works.
 */
export function inboxMarkerId(consumer: string, transactionId: string, digest: string): string {
  const readable = `inbox:${consumer}:${entryMessageId(transactionId, digest)}`;
  if (!/[/\\?#]/.test(readable)) return readable;
  return `inbox:${consumer}:sha256:${sha256Hex(transactionId).slice(0, 32)}:${digest.slice(0, 16)}`;
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
