/**
 * The bench's ledger: orders of K valid entries (created, lines added, some amended, the last one
 * final), interleaved at random over a rolling window of open orders and cut into ledger batches,
 * with the expected end state of every order computed by the domain itself.
 */
import type { Entry } from '../src/domain/entry';
import { entryDigest, entryMessageId } from '../src/domain/digest';
import { decide, linesOf, type OrderState, type TransactionRecord } from '../src/domain/order';
import { entryMessage } from '../src/domain/sequential-convoy';
import { countBatches, STANDARD_TIER_MAX_BATCH_BYTES } from '../local/broker/broker';
import type { LedgerInput } from '../local/app';
import { seededRandom } from '../local/faults';

export interface BenchWorkloadOptions {
  orders: number;
  /** Entries per order, at least 2. */
  entriesPerOrder: number;
  /** Entries per ledger message. */
  batchSize: number;
  /** Orders open at once in the ledger: an order's entries spread over about this many orders' worth of stream. */
  activeOrders: number;
  seed: number;
}

export interface BenchWorkload {
  options: BenchWorkloadOptions;
  ledger: LedgerInput[];
  /** Every entry, in ledger order. */
  entries: Entry[];
  /** The batch each entry travels in, by transactionId. */
  batchOf: Map<string, string>;
  /** Each order's transactionIds, by sequence - 1. */
  transactionIds: Map<string, string[]>;
  /**
   * Each order's state after its entries are applied once, in sequence, by the domain's `decide`,
   * as JSON: 2,000 strings rather than some 70,000 objects that every major collection during the
   * measured runs would have to mark.
   */
  reference: Map<string, string>;
  /** Least `order-transactions` send calls the batch size limit allows for each ledger message, summed. */
  minimumSendCalls: number;
}

function orderEntries(orderId: string, k: number, int: (min: number, max: number) => number): Entry[] {
  const tx = (sequence: number): string => `${orderId}-T${sequence}`;
  const entries: Entry[] = [
    {
      transactionId: tx(1),
      orderId,
      sequence: 1,
      type: 'OrderCreated',
      data: { customerId: `C-${int(1, 500)}`, currency: 'EUR' },
    },
  ];
  for (let sequence = 2; sequence <= k; sequence++) {
    const final = sequence === k ? { final: true as const } : {};
    // Every fourth entry amends the line added just before it.
    if (sequence % 4 === 0) {
      entries.push({
        transactionId: tx(sequence),
        orderId,
        sequence,
        type: 'TransactionAmended',
        ...final,
        data: { targetTransactionId: tx(sequence - 1), quantity: int(1, 9) },
      });
    } else {
      entries.push({
        transactionId: tx(sequence),
        orderId,
        sequence,
        type: 'TransactionAdded',
        ...final,
        data: { sku: `SKU-${int(1, 200)}`, quantity: int(1, 5), unitPrice: int(100, 5000) },
      });
    }
  }
  return entries;
}

/**
 * The orders' entries as a ledger carries them: interleaved over a rolling window of `openOrders`
 * orders, each order's entries in their own order; `int` draws the next order from the window.
 */
export function interleaveOrders<T>(
  perOrder: readonly (readonly T[])[],
  openOrders: number,
  int: (min: number, max: number) => number,
): T[] {
  const stream: T[] = [];
  const open: Array<{ order: number; next: number }> = [];
  let opened = 0;
  while (open.length < openOrders && opened < perOrder.length) open.push({ order: opened++, next: 0 });
  while (open.length > 0) {
    const at = int(0, open.length - 1);
    const slot = open[at];
    stream.push(perOrder[slot.order][slot.next]);
    slot.next += 1;
    if (slot.next === perOrder[slot.order].length) {
      if (opened < perOrder.length) open[at] = { order: opened++, next: 0 };
      else open.splice(at, 1);
    }
  }
  return stream;
}

export function generateBenchWorkload(options: BenchWorkloadOptions): BenchWorkload {
  const { orders, entriesPerOrder: k, batchSize, activeOrders, seed } = options;
  if (orders < 1 || k < 2 || batchSize < 1 || activeOrders < 1) {
    throw new Error('the bench needs at least 1 order of 2 entries, batches of 1 and 1 open order');
  }
  const random = seededRandom(seed);
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const width = String(orders - 1).length;
  const perOrder = Array.from({ length: orders }, (_, o) =>
    orderEntries(`O-${String(o).padStart(width, '0')}`, k, int),
  );

  const entries = interleaveOrders(perOrder, activeOrders, int);

  const ledger: LedgerInput[] = [];
  const batchOf = new Map<string, string>();
  let minimumSendCalls = 0;
  for (let i = 0; i * batchSize < entries.length; i++) {
    const batchId = `BB-${String(i).padStart(6, '0')}`;
    const batch = entries.slice(i * batchSize, (i + 1) * batchSize);
    for (const entry of batch) batchOf.set(entry.transactionId, batchId);
    // The ledger processor's correlationId defaults to the batch's messageId, which is its batchId.
    minimumSendCalls += countBatches(
      batch.map((entry) => entryMessage(entry, batchId, batchId)),
      STANDARD_TIER_MAX_BATCH_BYTES,
    );
    ledger.push({ messageId: batchId, sessionId: 'main', body: { batchId, entries: batch } });
  }

  const transactionIds = new Map<string, string[]>();
  const reference = new Map<string, string>();
  for (const order of perOrder) {
    let state: OrderState | undefined;
    // The order's transaction records, as the store would hold them: the domain may be given them all.
    const records = new Map<string, TransactionRecord>();
    for (const entry of order) {
      let ids = transactionIds.get(entry.orderId);
      if (ids === undefined) {
        ids = [];
        transactionIds.set(entry.orderId, ids);
      }
      ids[entry.sequence - 1] = entry.transactionId;
      const decision = decide(
        state,
        {
          messageId: entryMessageId(entry.transactionId, entryDigest(entry)),
          sessionId: entry.orderId,
          body: entry,
        },
        records,
      );
      if (decision.kind !== 'change' || decision.outcome !== 'applied') {
        throw new Error(`bench workload: ${entry.transactionId} is not applied by the domain`);
      }
      state = decision.state;
      for (const record of [decision.created, ...decision.changed])
        if (record !== null) records.set(record.transactionId, record);
    }
    if (state !== undefined)
      reference.set(order[0].orderId, JSON.stringify({ ...state, lines: linesOf(records.values()) }));
  }

  return { options, ledger, entries, batchOf, transactionIds, reference, minimumSendCalls };
}
