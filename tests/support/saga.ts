/** Builders shared by the saga tests: a store with the built-in downstream, orders, and a counting wrapper. */
import {
  createBuiltInDownstream,
  DOWNSTREAM_CONTAINER,
  DOWNSTREAM_PARTITION_KEY_PATH,
  INVENTORY_CONTAINER,
  INVENTORY_PARTITION_KEY_PATH,
} from '../../src/adapters/downstream';
import { createEmbeddedStore, type EmbeddedStore } from '../../local/store/document-store';
import { createRecordingTelemetry, type RecordedTelemetry } from '../../local/recording-telemetry';
import type { OrderStatus, TransactionRecord } from '../../src/domain/order';
import type { Carrier, Downstream, OrderLineInput } from '../../src/services/fulfillment/downstream-ports';
import {
  ORDER_HEADER_ID,
  ORDERS_CONTAINER,
  ORDERS_PARTITION_KEY_PATH,
  transactionDocument,
  type OrderDocument,
} from '../../src/services/order-documents';
import type { Document, DocumentContainer, FulfillmentInput } from '../../src/services/ports';
import type { SagaDeps } from '../../src/services/fulfillment/saga-activities';

export const NOW = Date.parse('2024-05-01T12:00:00.000Z');
export const NOW_ISO = new Date(NOW).toISOString();

export const CATALOG: Readonly<Record<string, number>> = { 'SKU-A': 10, 'SKU-B': 5, 'SKU-C': 3 };
export const CREDIT_LIMIT = 1000;

/** The stock document of a sku, as the built-in inventory keeps it. */
export interface StockDocument extends Document {
  sku: string;
  available: number;
  holds: Record<string, number>;
  returned?: Record<string, number>;
}

export interface World {
  store: EmbeddedStore;
  inventory: DocumentContainer;
  records: DocumentContainer;
  orders: DocumentContainer;
  downstream: Downstream;
  telemetry: RecordedTelemetry;
}

export interface WorldOptions {
  latencyMs?: number;
  catalog?: Readonly<Record<string, number>>;
  creditLimit?: number;
  carrierCapacity?: Readonly<Record<Carrier, number>>;
}

export function world(options: WorldOptions = {}): World {
  const store = createEmbeddedStore({ latencyMs: options.latencyMs ?? 0, now: () => NOW });
  const inventory = store.container(INVENTORY_CONTAINER, INVENTORY_PARTITION_KEY_PATH);
  const records = store.container(DOWNSTREAM_CONTAINER, DOWNSTREAM_PARTITION_KEY_PATH);
  const orders = store.container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH);
  const downstream = createBuiltInDownstream({
    inventory,
    records,
    catalog: options.catalog ?? CATALOG,
    creditLimit: options.creditLimit ?? CREDIT_LIMIT,
    carrierCapacity: options.carrierCapacity,
    now: () => NOW,
  });
  return { store, inventory, records, orders, downstream, telemetry: createRecordingTelemetry() };
}

export function sagaDeps(w: World, downstream: Downstream = w.downstream): SagaDeps {
  return { orders: w.orders, downstream, telemetry: w.telemetry, now: () => NOW };
}

let transactionCounter = 0;

export function line(sku: string, quantity: number, unitPrice = 10): OrderLineInput {
  transactionCounter += 1;
  return { transactionId: `T-${transactionCounter}`, sku, quantity, unitPrice };
}

/** The saga's input for an order of these lines; `linesIn` stores the lines where the saga reads them. */
export function fulfillmentInput(orderId: string, lines: OrderLineInput[]): FulfillmentInput {
  return {
    orderId,
    customerId: 'C-1',
    currency: 'EUR',
    total: lines.reduce((sum, l) => sum + l.quantity * l.unitPrice, 0),
    correlationId: `corr-${orderId}`,
  };
}

/** The order's lines stored as its transaction records (sequences 2 on), and the saga's input for it. */
export async function linesIn(
  w: { orders: DocumentContainer },
  orderId: string,
  lines: OrderLineInput[],
): Promise<FulfillmentInput> {
  await storeRecords(w.orders, orderId, lines);
  return fulfillmentInput(orderId, lines);
}

async function storeRecords(
  orders: DocumentContainer,
  orderId: string,
  lines: readonly OrderLineInput[],
): Promise<void> {
  for (const [index, { transactionId, sku, quantity, unitPrice }] of lines.entries()) {
    const record: TransactionRecord = {
      transactionId,
      digest: 'd'.repeat(64),
      sequence: index + 2,
      outcome: 'applied',
      line: { sku, quantity, unitPrice },
    };
    expect((await orders.create(transactionDocument(orderId, record))).status).toBe(201);
  }
}

/** An order's header as the consumer stores it; `storeOrderDocuments` stores it with its records. */
export function orderDocument(
  orderId: string,
  status: OrderStatus,
  lines: OrderLineInput[],
  extra: Partial<OrderDocument> = {},
): OrderDocument {
  return {
    id: ORDER_HEADER_ID,
    orderId,
    kind: 'order',
    status,
    customerId: 'C-1',
    currency: 'EUR',
    lineCount: lines.length,
    total: lines.reduce((sum, l) => sum + l.quantity * l.unitPrice, 0),
    appliedSequence: lines.length + 1,
    finalSequence: status === 'submitted' ? lines.length + 1 : null,
    buffered: [],
    correlationId: `corr-${orderId}`,
    outbox: null,
    ...extra,
  };
}

/** The order's header and a transaction record per line (sequences 2 on), as the consumer leaves them. */
export async function storeOrderDocuments(
  orders: DocumentContainer,
  header: OrderDocument,
  lines: readonly OrderLineInput[],
): Promise<void> {
  expect((await orders.create(header)).status).toBe(201);
  await storeRecords(orders, header.orderId, lines);
}

export async function stockOf(w: World, sku: string): Promise<StockDocument | undefined> {
  return (await w.inventory.read<StockDocument>(sku, sku))?.document;
}

export async function recordsOfKind(w: World, kind: string): Promise<Document[]> {
  return (await w.records.query({ where: { kind } })).map((stored) => stored.document);
}

export type DownstreamCall =
  | 'inventory.reserve'
  | 'inventory.release'
  | 'inventory.commit'
  | 'payments.charge'
  | 'payments.refund'
  | 'shipping.book'
  | 'shipping.cancel'
  | 'confirmations.send';

export interface CountingDownstream {
  downstream: Downstream;
  /** Every call in order, e.g. `shipping.book:primary`. */
  log: string[];
  count(call: DownstreamCall): number;
}

/**
 * Wraps a Downstream, counting every call. `fault` runs before each call with the call's number
 * (1 for the first) and may throw to make that call fail without reaching the real service.
 */
export function counting(
  inner: Downstream,
  fault: (call: DownstreamCall, attempt: number) => void = () => {},
): CountingDownstream {
  const log: string[] = [];
  const counts = new Map<DownstreamCall, number>();
  const hit = (call: DownstreamCall, detail?: string): void => {
    const attempt = (counts.get(call) ?? 0) + 1;
    counts.set(call, attempt);
    log.push(detail === undefined ? call : `${call}:${detail}`);
    fault(call, attempt);
  };
  const downstream: Downstream = {
    inventory: {
      async reserve(orderId, lines) {
        hit('inventory.reserve');
        return inner.inventory.reserve(orderId, lines);
      },
      async release(orderId, lines) {
        hit('inventory.release');
        return inner.inventory.release(orderId, lines);
      },
      async commit(orderId, lines) {
        hit('inventory.commit');
        return inner.inventory.commit(orderId, lines);
      },
    },
    payments: {
      async charge(orderId, customerId, amount, currency) {
        hit('payments.charge');
        return inner.payments.charge(orderId, customerId, amount, currency);
      },
      async refund(orderId, amount) {
        hit('payments.refund', String(amount));
        return inner.payments.refund(orderId, amount);
      },
    },
    shipping: {
      async book(orderId, carrier, lines) {
        hit('shipping.book', carrier);
        return inner.shipping.book(orderId, carrier, lines);
      },
      async cancel(orderId) {
        hit('shipping.cancel');
        return inner.shipping.cancel(orderId);
      },
    },
    confirmations: {
      async send(orderId, customerId, total, currency) {
        hit('confirmations.send');
        return inner.confirmations.send(orderId, customerId, total, currency);
      },
    },
  };
  return { downstream, log, count: (call) => counts.get(call) ?? 0 };
}
