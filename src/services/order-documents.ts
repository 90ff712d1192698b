/** The documents of one order's partition (`/orderId`) in the `orders` container. */
import { PermanentError } from '../domain/errors';
import {
  linesOf,
  waitingFor,
  type OrderLine,
  type OrderState,
  type TransactionRecord,
} from '../domain/order';
import { sha256Hex } from '../domain/digest';
import { groupBy } from '../domain/group-by';
import type { Document, DocumentContainer, FulfillmentInput, Stored } from './ports';
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

/**
 * The header's id, the same in every order's partition: the partition is the order, so the id need
 * not name it, and no other document of the partition can take it, whatever the order's or its
 * transactions' ids (records are `txn:...`, the saga record `saga:...`; docs/documents.md).
 */
export const ORDER_HEADER_ID = 'order';
export const ORDER_KIND = 'order';

/**
 * The `slot` of the partition's documents that hold no sequence slot. The orders container's unique
 * key is `/slot` (src/adapters/indexing-policy.ts, UNIQUE_KEYS), and Cosmos counts a missing value as
 * null, of which a partition may hold one: so each kind names its own.
 */
export const HEADER_SLOT = 'order';
export const SAGA_SLOT = 'saga';

/**
 * The order's header: `id` = `order`. Its size does not grow with the order's entries.
 *
 * It is a snapshot (docs/documents.md, "The header and the records"): written whenever the order's
 * status, buffer, outbox or gap changes and every SNAPSHOT_INTERVAL slots, not on every entry. Past
 * its `appliedSequence` the transaction records are the truth; `readOrderState` rolls them forward.
 */
export interface OrderDocument extends Document, OrderState {
  kind: 'order';
  slot?: typeof HEADER_SLOT;
  correlationId: string | null;
  outbox: Outbox | null;
}

/**
 * At most this many slots are taken between two writes of the header, so a reader rolls forward at
 * most this many records (one partition query). An order of up to this many entries has its header
 * written only at its OrderCreated and its final entry.
 */
export const SNAPSHOT_INTERVAL = 16;

/**
 * While the order waits on a missing entry (`waitingFor`), this document holds that entry's slot,
 * so that a writer who has not seen the buffer cannot take the slot with a record alone: its record
 * is refused (409 on the unique key), it reads the order again, and the change that fills the gap
 * releases the buffer. Written, moved and deleted in the same batch as the header.
 */
export const ORDER_GAP_ID = 'gap';
export const GAP_KIND = 'gap';

export interface GapDocument extends Document {
  kind: 'gap';
  orderId: string;
  slot: number;
}

export function gapDocument(orderId: string, slot: number): GapDocument {
  return { id: ORDER_GAP_ID, kind: GAP_KIND, orderId, slot };
}

/** The slot the order's gap document holds for this state: the missing entry's, else none. */
export function gapSlotOf(state: OrderState | undefined): number | null {
  return state === undefined ? null : waitingFor(state);
}

/**
 * One transaction the order has seen, for ever (no ttl): its idempotency record and, for an applied
 * TransactionAdded, its line. Created in the same transactional batch as the header write that takes
 * its slot or buffers it, so a second delivery of the entry fails that batch on the record's id (409).
 */
export interface TransactionDocument extends Document, TransactionRecord {
  kind: 'transaction';
  orderId: string;
  /** Its sequence: the orders container's unique key, so one slot of an order has one record. */
  slot: number;
  /**
   * The order's line count and total once this record's slot was taken, on a record written without
   * the header: rolling forward past the header takes them from the last such record.
   */
  after?: OrderTotals;
}

export interface OrderTotals {
  lineCount: number;
  total: number;
}

export const TRANSACTION_KIND = 'transaction';

/**
 * A document read by id in an order's partition, checked to be of the kind its id stands for. Ids
 * of different kinds cannot collide (ORDER_HEADER_ID, transactionRecordId), so another kind there
 * means the store holds documents this version does not write: an order header under its orderId
 * (docs/documents.md, "Upgrading"). That is an error, never a record read as something it is not.
 */
async function readKind<T extends Document & { kind: string }>(
  orders: DocumentContainer,
  orderId: string,
  id: string,
  kind: T['kind'],
): Promise<Stored<T> | undefined> {
  const stored = await orders.read<T>(orderId, id);
  if (stored === undefined || stored.document.kind === kind) return stored;
  throw new PermanentError(
    'unexpected-document',
    `document ${JSON.stringify(id)} of order ${JSON.stringify(orderId)} is of kind ${JSON.stringify(stored.document.kind)}, not ${kind}: the store holds a document this version does not write there (docs/documents.md, "Upgrading")`,
  );
}

/** The order's header, by a point read; undefined when the order has none. */
export function readOrderHeader(
  orders: DocumentContainer,
  orderId: string,
): Promise<Stored<OrderDocument> | undefined> {
  return readKind<OrderDocument>(orders, orderId, ORDER_HEADER_ID, ORDER_KIND);
}

/**
 * The order as it stands: what every reader outside the consumer (the orders API, operations,
 * reports) asks for. The consumer keeps its own view through the session's cache
 * (src/services/convoy/order-store.ts).
 */
export async function readOrderState(
  orders: DocumentContainer,
  orderId: string,
): Promise<OrderDocument | undefined> {
  return (await readRolledForward(orders, orderId))?.document;
}

/**
 * Every order of the container as it stands, for a report over all of them: two cross-partition
 * queries, the headers and the records, each header rolled forward over its own.
 */
export async function readOrderStates(orders: DocumentContainer): Promise<OrderDocument[]> {
  const headers = await orders.query<OrderDocument>({ where: { kind: ORDER_KIND } });
  const records = groupBy(
    (await orders.query<TransactionDocument>({ where: { kind: TRANSACTION_KIND } })).map(
      ({ document }) => document,
    ),
    (record) => record.orderId,
  );
  return headers.map(({ document }) => rolledForward(document, records.get(document.orderId) ?? []));
}

/** The order's record of this transaction as stored, by a point read; undefined when none is. */
export function readTransactionDocument(
  orders: DocumentContainer,
  orderId: string,
  transactionId: string,
): Promise<Stored<TransactionDocument> | undefined> {
  return readKind<TransactionDocument>(orders, orderId, transactionRecordId(transactionId), TRANSACTION_KIND);
}

/**
 * `txn:<transactionId>`. A transactionId may hold `/ \ ? #`, which Cosmos DB refuses in an item id
 * (document-rules): such a record is named by the transactionId's SHA-256 instead (64 hex digits:
 * never two transactions under one id), as is one that starts with `sha256:`, which such a name
 * could be mistaken for. A transactionId is at most 100 bytes (MAX_ID_BYTES), so an id stays
 * well within Cosmos's 255 characters. No record id is ORDER_HEADER_ID or a saga record's `saga:...`.
 */
export function transactionRecordId(transactionId: string): string {
  if (!/[/\\?#]/.test(transactionId) && !transactionId.startsWith('sha256:')) return `txn:${transactionId}`;
  return `txn:sha256:${sha256Hex(transactionId)}`;
}

export function transactionDocument(
  orderId: string,
  record: TransactionRecord,
  after?: OrderTotals,
): TransactionDocument {
  return {
    id: transactionRecordId(record.transactionId),
    kind: 'transaction',
    orderId,
    slot: record.sequence,
    ...record,
    ...(after === undefined ? {} : { after: { lineCount: after.lineCount, total: after.total } }),
  };
}

/**
 * The order as its records say past the header's snapshot: the slots taken after the header's
 * `appliedSequence`, consecutively, and the totals of the last of them. Records of buffered entries
 * and anything after a missing slot are not taken slots.
 */
export function rolledForward(header: OrderDocument, records: readonly TransactionDocument[]): OrderDocument {
  const bySlot = new Map(records.map((record) => [record.sequence, record]));
  let last: TransactionDocument | undefined;
  for (
    let record = bySlot.get(header.appliedSequence + 1);
    record !== undefined && record.outcome !== 'buffered';
    record = bySlot.get(record.sequence + 1)
  ) {
    last = record;
  }
  if (last === undefined) return header;
  if (last.after === undefined) {
    throw new PermanentError(
      'missing-totals',
      `record ${JSON.stringify(last.id)} of order ${JSON.stringify(header.orderId)} is past its header's snapshot but carries no totals (docs/documents.md)`,
    );
  }
  return {
    ...header,
    appliedSequence: last.sequence,
    lineCount: last.after.lineCount,
    total: last.after.total,
  };
}

/** The order's stored header and the records past its snapshot (one query in its partition). */
export async function readRolledForward(
  orders: DocumentContainer,
  orderId: string,
): Promise<Stored<OrderDocument> | undefined> {
  const stored = await readOrderHeader(orders, orderId);
  if (stored === undefined) return undefined;
  const past = await orders.query<TransactionDocument>({
    partitionKey: orderId,
    where: { kind: TRANSACTION_KIND },
    above: { slot: stored.document.appliedSequence },
  });
  return {
    document: rolledForward(
      stored.document,
      past.map(({ document }) => document),
    ),
    etag: stored.etag,
  };
}

/** The record as the domain knows it: the stored fields without the store's. */
export function transactionRecordOf(document: TransactionDocument): TransactionRecord {
  const { transactionId, digest, sequence, outcome, line } = document;
  return line === undefined
    ? { transactionId, digest, sequence, outcome }
    : { transactionId, digest, sequence, outcome, line };
}

/** The order's record of this transaction, by a point read; undefined when none is stored. */
export async function readTransactionRecord(
  orders: DocumentContainer,
  orderId: string,
  transactionId: string,
): Promise<TransactionRecord | undefined> {
  const stored = await readTransactionDocument(orders, orderId, transactionId);
  return stored === undefined ? undefined : transactionRecordOf(stored.document);
}

/** The order's records of these transactions, by point reads; absent ones are not stored. */
export async function readRecords(
  orders: DocumentContainer,
  orderId: string,
  transactionIds: Iterable<string>,
): Promise<Map<string, TransactionRecord>> {
  const found = new Map<string, TransactionRecord>();
  await Promise.all(
    [...new Set(transactionIds)].map(async (transactionId) => {
      const record = await readTransactionRecord(orders, orderId, transactionId);
      if (record !== undefined) found.set(transactionId, record);
    }),
  );
  return found;
}

/** Every transaction document of the order: one query in its partition. */
async function readTransactionDocuments(
  orders: DocumentContainer,
  orderId: string,
): Promise<TransactionDocument[]> {
  const stored = await orders.query<TransactionDocument>({
    partitionKey: orderId,
    where: { kind: TRANSACTION_KIND },
  });
  return stored.map(({ document }) => document);
}

/** Every transaction record of the order: one query in its partition. */
export async function readTransactionRecords(
  orders: DocumentContainer,
  orderId: string,
): Promise<TransactionRecord[]> {
  return (await readTransactionDocuments(orders, orderId)).map(transactionRecordOf);
}

/**
 * The order as it stands and every transaction record of it, for a view that shows both: the
 * header by a point read, then one query of the partition's records, which also roll it forward.
 */
export async function readOrderAndRecords(
  orders: DocumentContainer,
  orderId: string,
): Promise<{ state: OrderDocument | undefined; records: TransactionRecord[] }> {
  const header = await readOrderHeader(orders, orderId);
  const documents = await readTransactionDocuments(orders, orderId);
  return {
    state: header === undefined ? undefined : rolledForward(header.document, documents),
    records: documents.map(transactionRecordOf),
  };
}

/** The order's lines, in sequence order, from its transaction records. */
export async function readOrderLines(orders: DocumentContainer, orderId: string): Promise<OrderLine[]> {
  return linesOf(await readTransactionRecords(orders, orderId));
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
    correlationId,
  };
}
