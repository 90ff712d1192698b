/**
 * Built-in downstream services on the document store, with the business rules of CONTRACTS 2:
 * stock per sku from a catalog, a credit limit per charge, two carriers with a capacity each.
 * Stock lives in its own container (partition `/sku`): a reservation spans partitions, so it cannot
 * be one transaction; each sku's hold is keyed by order instead, which makes every write repeatable.
 */
import { PermanentError, TransientError } from '../domain/errors';
import { StepFailedError } from '../domain/saga';
import type { Carrier, Downstream, OrderLineInput } from '../services/fulfillment/ports';
import type { Document, DocumentContainer } from '../services/ports';

export const INVENTORY_CONTAINER = 'inventory';
export const INVENTORY_PARTITION_KEY_PATH = '/sku';
export const DOWNSTREAM_CONTAINER = 'downstream';
export const DOWNSTREAM_PARTITION_KEY_PATH = '/orderId';

export interface DownstreamOptions {
  inventory: DocumentContainer;
  records: DocumentContainer;
  catalog: Readonly<Record<string, number>>;
  creditLimit: number;
  /** Most units each carrier takes in one shipment; over it the carrier refuses for good. */
  carrierCapacity?: Readonly<Record<Carrier, number>>;
  now?: () => number;
}

export const DEFAULT_CARRIER_CAPACITY: Readonly<Record<Carrier, number>> = { primary: 20, alternate: 60 };
const MAX_WRITE_ATTEMPTS = 10;

interface StockDocument extends Document {
  sku: string;
  available: number;
  holds: Record<string, number>;
}

interface ChargeDocument extends Document {
  orderId: string;
  kind: 'charge';
  customerId: string;
  amount: number;
  currency: string;
  refunded: number;
}

interface ShipmentDocument extends Document {
  orderId: string;
  kind: 'shipment';
  carrier: Carrier;
  status: 'booked' | 'cancelled';
}

function quantities(lines: readonly OrderLineInput[]): Map<string, number> {
  const bySku = new Map<string, number>();
  for (const line of lines) bySku.set(line.sku, (bySku.get(line.sku) ?? 0) + line.quantity);
  return new Map([...bySku].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function createBuiltInDownstream(options: DownstreamOptions): Downstream {
  const { inventory, records, catalog, creditLimit } = options;
  const capacity = options.carrierCapacity ?? DEFAULT_CARRIER_CAPACITY;
  const now = options.now ?? Date.now;

  /** The stock of a sku, seeded from the catalog on first use; undefined for an unknown sku. */
  async function stockOf(sku: string): Promise<{ document: StockDocument; etag: string } | undefined> {
    const stored = await inventory.read<StockDocument>(sku, sku);
    if (stored !== undefined) return stored;
    if (!(sku in catalog)) return undefined;
    await inventory.create({ id: sku, sku, available: catalog[sku], holds: {} });
    return inventory.read<StockDocument>(sku, sku);
  }

  /** Read, change, replace with the etag; again when another writer won. */
  async function changeStock(
    sku: string,
    change: (stock: StockDocument) => StockDocument | 'unchanged',
  ): Promise<StockDocument | undefined> {
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const stored = await stockOf(sku);
      if (stored === undefined) return undefined;
      const next = change(stored.document);
      if (next === 'unchanged') return stored.document;
      const result = await inventory.replace(next, { ifMatch: stored.etag });
      if (result.status === 200) return next;
    }
    throw new TransientError(
      'stock-contention',
      `stock of ${sku} kept changing under ${MAX_WRITE_ATTEMPTS} writes`,
    );
  }

  async function release(orderId: string, skus: Iterable<string>): Promise<Record<string, number>> {
    const released: Record<string, number> = {};
    for (const sku of skus) {
      await changeStock(sku, (stock) => {
        const held = stock.holds[orderId];
        if (held === undefined) return 'unchanged';
        released[sku] = held;
        const holds = { ...stock.holds };
        delete holds[orderId];
        return { ...stock, available: stock.available + held, holds };
      });
    }
    return released;
  }

  return {
    inventory: {
      async reserve(orderId, lines) {
        const wanted = quantities(lines);
        const reserved: Record<string, number> = {};
        for (const [sku, quantity] of wanted) {
          let shortfall: string | undefined;
          const stock = await changeStock(sku, (current) => {
            if (current.holds[orderId] !== undefined) return 'unchanged';
            if (current.available < quantity) {
              shortfall = `${sku}: ${quantity} wanted, ${current.available} available`;
              return 'unchanged';
            }
            return {
              ...current,
              available: current.available - quantity,
              holds: { ...current.holds, [orderId]: quantity },
            };
          });
          if (stock === undefined || shortfall !== undefined) {
            // All or nothing: give back what this order already holds before refusing.
            await release(orderId, wanted.keys());
            if (stock === undefined) {
              throw new StepFailedError('reserveInventory', 'unknown-sku', `unknown sku ${sku}`);
            }
            throw new StepFailedError('reserveInventory', 'out-of-stock', `not enough stock of ${shortfall}`);
          }
          reserved[sku] = quantity;
        }
        return { reserved };
      },
      async release(orderId, lines) {
        return { released: await release(orderId, quantities(lines).keys()) };
      },
    },

    payments: {
      async charge(orderId, customerId, amount, currency) {
        if (amount > creditLimit) {
          throw new StepFailedError(
            'chargePayment',
            'over-credit-limit',
            `order total ${amount} is over the credit limit ${creditLimit} of ${customerId}`,
          );
        }
        const id = `charge:${orderId}`;
        const charge: ChargeDocument = {
          id,
          orderId,
          kind: 'charge',
          customerId,
          amount,
          currency,
          refunded: 0,
        };
        const created = await records.create(charge);
        if (created.status === 409) {
          const existing = await records.read<ChargeDocument>(orderId, id);
          if (existing === undefined) throw new TransientError('charge-unreadable', `charge ${id} vanished`);
          return { chargeId: id, amount: existing.document.amount };
        }
        return { chargeId: id, amount };
      },
      async refund(orderId, amount) {
        const id = `charge:${orderId}`;
        for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
          const existing = await records.read<ChargeDocument>(orderId, id);
          if (existing === undefined) return { refunded: 0 };
          const refunded = Math.min(amount, existing.document.amount);
          if (existing.document.refunded === refunded) return { refunded };
          const result = await records.replace(
            { ...existing.document, refunded },
            { ifMatch: existing.etag },
          );
          if (result.status === 200) return { refunded };
        }
        throw new TransientError('charge-contention', `charge of ${orderId} kept changing`);
      },
    },

    shipping: {
      async book(orderId, carrier, lines) {
        const units = lines.reduce((sum, line) => sum + line.quantity, 0);
        if (units > capacity[carrier]) {
          throw new StepFailedError(
            'createShipment',
            'carriers-refused',
            `${carrier} carrier refused ${units} units (takes at most ${capacity[carrier]})`,
          );
        }
        const id = `shipment:${orderId}`;
        const existing = await records.read<ShipmentDocument>(orderId, id);
        if (existing !== undefined && existing.document.status === 'booked') {
          return { shipmentId: id, carrier: existing.document.carrier };
        }
        const shipment: ShipmentDocument = {
          id,
          orderId,
          kind: 'shipment',
          carrier,
          status: 'booked',
          bookedAt: now(),
        };
        const result =
          existing === undefined
            ? await records.create(shipment)
            : await records.replace(shipment, { ifMatch: existing.etag });
        if (result.status === 201 || result.status === 200) return { shipmentId: id, carrier };
        throw new TransientError('shipment-contention', `shipment ${id} changed while booking`);
      },
      async cancel(orderId) {
        const id = `shipment:${orderId}`;
        const existing = await records.read<ShipmentDocument>(orderId, id);
        if (existing === undefined || existing.document.status === 'cancelled')
          return { cancelled: existing !== undefined };
        const result = await records.replace(
          { ...existing.document, status: 'cancelled' },
          { ifMatch: existing.etag },
        );
        if (result.status !== 200)
          throw new TransientError('shipment-contention', `shipment ${id} changed while cancelling`);
        return { cancelled: true };
      },
    },

    confirmations: {
      async send(orderId, customerId, total, currency) {
        const id = `confirmation:${orderId}`;
        const result = await records.create({
          id,
          orderId,
          kind: 'confirmation',
          customerId,
          total,
          currency,
          sentAt: now(),
        });
        if (result.status !== 201 && result.status !== 409) {
          throw new PermanentError('confirmation-failed', `confirmation ${id} could not be stored`);
        }
        return { confirmationId: id };
      },
    },
  };
}
