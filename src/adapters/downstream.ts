/**
 * Built-in downstream services on the document store, with the business rules of docs/saga.md:
 * stock per sku from a catalog, a credit limit per charge, two carriers with a capacity each.
 * Stock lives in its own container (partition `/sku`): a reservation spans partitions, so it cannot
 * be one transaction; each sku's hold is keyed by order instead, which makes every write repeatable.
 * A hold lasts only while its order's saga runs: once the order is fulfilled, `commit` moves what it
 * took into the order's own reservation document (partition `/orderId`) and the hold leaves the
 * stock document, so a sku's document holds the orders in flight, not every order ever placed.
 */
import { compareText } from '../domain/compare';
import { PermanentError, TransientError } from '../domain/errors';
import { StepFailedError } from '../domain/saga';
import type { Carrier, Downstream, OrderLineInput } from '../services/fulfillment/downstream-ports';
import { updateDocument, type Change } from '../services/optimistic-update';
import type { Document, DocumentContainer, Stored } from '../services/ports';
import { ownValue, setOwn } from '../domain/own-properties';
import { createHash } from 'node:crypto';
import { isValidDocumentId } from './document-rules';

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

interface StockDocument extends Document {
  sku: string;
  available: number;
  /** What each order in flight holds. */
  holds: Record<string, number>;
  /** Stock of a committed order given back, until its reservation document says so (then removed). */
  returned?: Record<string, number>;
}

/** What a fulfilled order took of each sku, once its holds left the stock documents. */
interface ReservationDocument extends Document {
  orderId: string;
  kind: 'reservation';
  taken: Record<string, number>;
  /** The skus whose stock a later cancel gave back. */
  givenBack: Record<string, number>;
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

/**
 * A sku's stock document id: the sku, unless Cosmos DB would refuse it as an id (over 255
 * characters, or `/ \\ ? #`), then its SHA-256; the partition key stays the sku itself.
 */
function stockId(sku: string): string {
  return isValidDocumentId(sku) ? sku : `sku-sha256:${createHash('sha256').update(sku).digest('hex')}`;
}

function quantities(lines: readonly OrderLineInput[]): Map<string, number> {
  const bySku = new Map<string, number>();
  for (const line of lines) bySku.set(line.sku, (bySku.get(line.sku) ?? 0) + line.quantity);
  return new Map([...bySku].sort(([a], [b]) => compareText(a, b)));
}

export function createBuiltInDownstream(options: DownstreamOptions): Downstream {
  const { inventory, records, catalog, creditLimit } = options;
  const capacity = options.carrierCapacity ?? DEFAULT_CARRIER_CAPACITY;
  const now = options.now ?? Date.now;

  /** The stock of a sku, seeded from the catalog on first use; undefined for an unknown sku. */
  async function stockOf(sku: string): Promise<Stored<StockDocument> | undefined> {
    const stored = await inventory.read<StockDocument>(sku, stockId(sku));
    if (stored !== undefined) return stored;
    const seeded = ownValue(catalog, sku);
    if (seeded === undefined) return undefined;
    await inventory.create({ id: stockId(sku), sku, available: seeded, holds: {} });
    return inventory.read<StockDocument>(sku, stockId(sku));
  }

  /** Changes a sku's stock on its etag; `unknown-sku` when the catalog has no such sku. */
  function changeStock<R>(
    sku: string,
    change: (stock: StockDocument) => Change<StockDocument, R>,
  ): Promise<R | 'unknown-sku'> {
    return updateDocument<StockDocument, R | 'unknown-sku'>(
      inventory,
      () => stockOf(sku),
      (stored) =>
        stored === undefined ? { next: undefined, result: 'unknown-sku' } : change(stored.document),
      { code: 'stock-contention', subject: `stock of ${sku}` },
    );
  }

  const reservationId = (orderId: string): string => `reservation:${orderId}`;
  const readReservation = (orderId: string) =>
    records.read<ReservationDocument>(orderId, reservationId(orderId));

  function changeReservation<R>(
    orderId: string,
    change: (reservation: ReservationDocument) => Change<ReservationDocument, R>,
  ): Promise<R> {
    return updateDocument<ReservationDocument, R>(
      records,
      () => readReservation(orderId),
      (stored) =>
        change(
          stored?.document ?? {
            id: reservationId(orderId),
            orderId,
            kind: 'reservation',
            taken: {},
            givenBack: {},
          },
        ),
      { code: 'reservation-contention', subject: `reservation of ${orderId}` },
    );
  }

  const without = (entries: Record<string, number> | undefined, key: string): Record<string, number> =>
    Object.fromEntries(Object.entries(entries ?? {}).filter(([k]) => k !== key));
  const entryOf = (entries: Record<string, number> | undefined, key: string): number | undefined =>
    entries === undefined ? undefined : ownValue(entries, key);

  /**
   * Gives back what the order holds, or what it took once committed. A committed sku is given back
   * in three repeatable writes: the stock (marked `returned`), the reservation (`givenBack`), then
   * the mark is removed; a retry that finds the mark or `givenBack` does not give it back twice.
   */
  async function release(orderId: string, skus: Iterable<string>): Promise<Record<string, number>> {
    const released: Record<string, number> = {};
    const reservation = (await readReservation(orderId))?.document;
    for (const sku of skus) {
      const taken = entryOf(reservation?.taken, sku);
      const alreadyGivenBack = entryOf(reservation?.givenBack, sku) !== undefined;
      const outcome = await changeStock<{ quantity: number; marked: boolean } | null>(sku, (stock) => {
        const returned = entryOf(stock.returned, orderId);
        if (returned !== undefined) return { next: undefined, result: { quantity: returned, marked: true } };
        const held = entryOf(stock.holds, orderId);
        if (held !== undefined) {
          // A commit cut short lists the sku as taken too: then it is marked, as a committed sku is.
          const marked = taken !== undefined && !alreadyGivenBack;
          const next: StockDocument = {
            ...stock,
            available: stock.available + held,
            holds: without(stock.holds, orderId),
            ...(marked ? { returned: { ...(stock.returned ?? {}), [orderId]: held } } : {}),
          };
          return { next, result: { quantity: held, marked } };
        }
        if (taken === undefined || alreadyGivenBack) return { next: undefined, result: null };
        const next: StockDocument = {
          ...stock,
          available: stock.available + taken,
          returned: { ...(stock.returned ?? {}), [orderId]: taken },
        };
        return { next, result: { quantity: taken, marked: true } };
      });
      if (outcome === null || outcome === 'unknown-sku') continue;
      setOwn(released, sku, outcome.quantity);
      if (!outcome.marked) continue;
      await changeReservation(orderId, (current) =>
        entryOf(current.givenBack, sku) !== undefined
          ? { next: undefined, result: undefined }
          : {
              next: { ...current, givenBack: { ...current.givenBack, [sku]: outcome.quantity } },
              result: undefined,
            },
      );
      await changeStock(sku, (stock) =>
        entryOf(stock.returned, orderId) === undefined
          ? { next: undefined, result: undefined }
          : { next: { ...stock, returned: without(stock.returned, orderId) }, result: undefined },
      );
    }
    return released;
  }

  /** The order is fulfilled: what it holds is recorded as taken, then its holds leave the stock. */
  async function commit(orderId: string, skus: Iterable<string>): Promise<Record<string, number>> {
    const committed: Record<string, number> = {};
    for (const sku of skus) {
      const stored = await stockOf(sku);
      const held = entryOf(stored?.document.holds, orderId);
      if (held === undefined) continue;
      await changeReservation(orderId, (current) =>
        entryOf(current.taken, sku) === held
          ? { next: undefined, result: undefined }
          : { next: { ...current, taken: { ...current.taken, [sku]: held } }, result: undefined },
      );
      await changeStock(sku, (stock) =>
        entryOf(stock.holds, orderId) === undefined
          ? { next: undefined, result: undefined }
          : { next: { ...stock, holds: without(stock.holds, orderId) }, result: undefined },
      );
      setOwn(committed, sku, held);
    }
    return committed;
  }

  return {
    inventory: {
      async reserve(orderId, lines) {
        const wanted = quantities(lines);
        const reserved: Record<string, number> = {};
        // A reservation already committed (the order was fulfilled) is not made again.
        const committed = (await readReservation(orderId))?.document.taken ?? {};
        for (const [sku, quantity] of wanted) {
          if (entryOf(committed, sku) !== undefined) {
            setOwn(reserved, sku, quantity);
            continue;
          }
          const held = await changeStock<'held' | { shortfall: string }>(sku, (current) => {
            if (entryOf(current.holds, orderId) !== undefined) return { next: undefined, result: 'held' };
            if (current.available < quantity) {
              return {
                next: undefined,
                result: { shortfall: `${sku}: ${quantity} wanted, ${current.available} available` },
              };
            }
            const next: StockDocument = {
              ...current,
              available: current.available - quantity,
              holds: { ...current.holds, [orderId]: quantity },
            };
            return { next, result: 'held' };
          });
          if (held !== 'held') {
            // All or nothing: give back what this order already holds before refusing.
            await release(orderId, wanted.keys());
            if (held === 'unknown-sku') {
              throw new StepFailedError('reserveInventory', 'unknown-sku', `unknown sku ${sku}`);
            }
            throw new StepFailedError(
              'reserveInventory',
              'out-of-stock',
              `not enough stock of ${held.shortfall}`,
            );
          }
          setOwn(reserved, sku, quantity);
        }
        return { reserved };
      },
      async release(orderId, lines) {
        return { released: await release(orderId, quantities(lines).keys()) };
      },
      async commit(orderId, lines) {
        return { committed: await commit(orderId, quantities(lines).keys()) };
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
        return updateDocument<ChargeDocument, { refunded: number }>(
          records,
          () => records.read<ChargeDocument>(orderId, id),
          (existing) => {
            if (existing === undefined) return { next: undefined, result: { refunded: 0 } };
            const refunded = Math.min(amount, existing.document.amount);
            if (existing.document.refunded === refunded) return { next: undefined, result: { refunded } };
            return { next: { ...existing.document, refunded }, result: { refunded } };
          },
          { code: 'charge-contention', subject: `charge of ${orderId}` },
        );
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
        return updateDocument<ShipmentDocument, { shipmentId: string; carrier: Carrier }>(
          records,
          () => records.read<ShipmentDocument>(orderId, id),
          (existing) => {
            if (existing !== undefined && existing.document.status === 'booked') {
              return { next: undefined, result: { shipmentId: id, carrier: existing.document.carrier } };
            }
            const shipment: ShipmentDocument = {
              id,
              orderId,
              kind: 'shipment',
              carrier,
              status: 'booked',
              bookedAt: now(),
            };
            return { next: shipment, result: { shipmentId: id, carrier } };
          },
          { code: 'shipment-contention', subject: `shipment ${id}` },
        );
      },
      async cancel(orderId) {
        const id = `shipment:${orderId}`;
        return updateDocument<ShipmentDocument, { cancelled: boolean }>(
          records,
          () => records.read<ShipmentDocument>(orderId, id),
          (existing) => {
            if (existing === undefined) return { next: undefined, result: { cancelled: false } };
            if (existing.document.status === 'cancelled')
              return { next: undefined, result: { cancelled: true } };
            return { next: { ...existing.document, status: 'cancelled' }, result: { cancelled: true } };
          },
          { code: 'shipment-contention', subject: `shipment ${id}` },
        );
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
