/**
 * The downstream services the saga's steps call. Every operation is idempotent on the order: calling
 * it again with the same order returns the first call's effect instead of making a second one.
 * Business refusals throw StepFailedError (permanent); anything that may clear throws TransientError.
 */
import type { OrderLineInput } from '../ports';

export type { OrderLineInput } from '../ports';

export interface Inventory {
  /** Holds every line's quantity of its sku; all or nothing. */
  reserve(orderId: string, lines: readonly OrderLineInput[]): Promise<{ reserved: Record<string, number> }>;
  /** Gives back what the order holds (or took, once committed) of these lines' skus; nothing to give back is fine. */
  release(orderId: string, lines: readonly OrderLineInput[]): Promise<{ released: Record<string, number> }>;
  /** The order is fulfilled: what it holds is taken for good, and its holds leave the stock. */
  commit(orderId: string, lines: readonly OrderLineInput[]): Promise<{ committed: Record<string, number> }>;
}

export interface Payments {
  charge(
    orderId: string,
    customerId: string,
    amount: number,
    currency: string,
  ): Promise<{ chargeId: string; amount: number }>;
  /** Refunds `amount` of the order's charge; the refund is set, not added, so repeating it is safe. */
  refund(orderId: string, amount: number): Promise<{ refunded: number }>;
}

export type Carrier = 'primary' | 'alternate';

export interface Shipping {
  book(
    orderId: string,
    carrier: Carrier,
    lines: readonly OrderLineInput[],
  ): Promise<{ shipmentId: string; carrier: Carrier }>;
  cancel(orderId: string): Promise<{ cancelled: boolean }>;
}

export interface Confirmations {
  send(
    orderId: string,
    customerId: string,
    total: number,
    currency: string,
  ): Promise<{ confirmationId: string }>;
}

export interface Downstream {
  inventory: Inventory;
  payments: Payments;
  shipping: Shipping;
  confirmations: Confirmations;
}
