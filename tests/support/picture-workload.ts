/**
 * A ledger of many orders for the run's picture (`npm start --html`): most orders clean, and spread
 * among them every kind of problem the page lists first, so that a large run has some of each:
 * a gap (entries buffered, the order waiting), an invalid entry (parked by the ledger), a reused
 * transactionId with other content (`digest-mismatch`), an amendment of an unknown line
 * (`rejected`), a slot claimed twice (`sequence-conflict`), an exact repeat (dropped as a duplicate),
 * an unknown sku and a total over the credit limit (sagas compensated); and once each a ledger
 * message sent again under its messageId, a body that is not JSON, and an entry naming no order.
 * Entries of the open orders interleave, as a ledger does, and are cut into batches.
 */
import type { Entry } from '../../src/domain/entry';
import { seededRandom } from '../../local/faults';
import { interleaveOrders } from '../../bench/workload';

export interface PictureWorkloadOptions {
  orders: number;
  seed: number;
  /** Entries per ledger message. */
  batchSize?: number;
  /** Orders whose entries interleave at once. */
  openOrders?: number;
}

export interface PictureWorkload {
  /** The input file's lines (NDJSON). */
  lines: string[];
  /** Stock for every sku the clean orders use. */
  catalog: Record<string, number>;
}

/** The problem each order index gets, when it gets one: every `every`-th order from `offset`. */
const PROBLEM_EVERY: ReadonlyArray<[kind: string, every: number, offset: number]> = [
  ['gap', 97, 1],
  ['invalid', 89, 2],
  ['digest-mismatch', 83, 3],
  ['rejected', 79, 4],
  ['unknown-sku', 71, 5],
  ['over-credit', 67, 6],
  ['repeat', 61, 7],
  ['sequence-conflict', 59, 8],
];

const SKUS = 50;

function problemOf(index: number): string | undefined {
  return PROBLEM_EVERY.find(([, every, offset]) => index % every === offset)?.[0];
}

/** The order's entries in sequence, then whatever is sent after them. */
function orderEntries(orderId: string, index: number, int: (min: number, max: number) => number): unknown[] {
  const problem = problemOf(index);
  const count = int(3, 6);
  const tx = (sequence: number): string => `${orderId}-T${sequence}`;
  const entries: Entry[] = [
    {
      transactionId: tx(1),
      orderId,
      sequence: 1,
      type: 'OrderCreated',
      // One customer per order: the credit limit is per customer.
      data: { customerId: `C-${orderId}`, currency: 'EUR' },
    },
  ];
  for (let sequence = 2; sequence <= count; sequence++) {
    const final = sequence === count ? { final: true as const } : {};
    if (problem === 'rejected' && sequence === count - 1) {
      entries.push({
        transactionId: tx(sequence),
        orderId,
        sequence,
        type: 'TransactionAmended',
        data: { targetTransactionId: `${orderId}-T-unknown`, quantity: 1 },
      });
      continue;
    }
    const sku = problem === 'unknown-sku' && sequence === 2 ? 'SKU-UNKNOWN' : `SKU-${int(1, SKUS)}`;
    const unitPrice = problem === 'over-credit' && sequence === 2 ? 150_000 : int(100, 5000);
    entries.push({
      transactionId: tx(sequence),
      orderId,
      sequence,
      type: 'TransactionAdded',
      ...final,
      data: { sku, quantity: int(1, 3), unitPrice },
    });
  }
  const sent: unknown[] = problem === 'gap' ? entries.filter((entry) => entry.sequence !== 2) : [...entries];
  if (problem === 'invalid') {
    sent.splice(1, 0, {
      transactionId: `${orderId}-T-zero`,
      orderId,
      sequence: 2,
      type: 'TransactionAdded',
      data: { sku: 'SKU-1', quantity: 0, unitPrice: 100 },
    });
  }
  if (problem === 'digest-mismatch')
    sent.push({ ...entries[1], data: { sku: 'SKU-1', quantity: 9, unitPrice: 1 } });
  if (problem === 'repeat') sent.push(entries[0]);
  if (problem === 'sequence-conflict') {
    sent.push({ ...entries[1], transactionId: `${orderId}-T-other` });
  }
  return sent;
}

export function generatePictureWorkload(options: PictureWorkloadOptions): PictureWorkload {
  const { orders, seed } = options;
  const batchSize = options.batchSize ?? 25;
  const openOrders = options.openOrders ?? 40;
  const random = seededRandom(seed);
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const width = String(orders).length;
  const perOrder = Array.from({ length: orders }, (_, index) =>
    orderEntries(`W-${String(index + 1).padStart(width, '0')}`, index, int),
  );

  // Interleaved over a rolling window of open orders, each order's entries in their own order.
  const stream: unknown[] = interleaveOrders<unknown>(perOrder, openOrders, int);
  // An entry naming no order: the ledger parks it invalid.
  stream.splice(Math.floor(stream.length / 3), 0, {
    transactionId: 'T-no-order',
    orderId: 42,
    sequence: 1,
    type: 'OrderCreated',
    data: { customerId: 'C-1', currency: 'EUR' },
  });

  const lines: string[] = [];
  const line = (messageId: string, body: unknown): void => {
    lines.push(JSON.stringify({ messageId, sessionId: 'main', body }));
  };
  for (let i = 0; i * batchSize < stream.length; i++) {
    const batchId = `WB-${String(i + 1).padStart(6, '0')}`;
    line(batchId, { batchId, entries: stream.slice(i * batchSize, (i + 1) * batchSize) });
    // Once: the same ledger message sent again (duplicate detection drops it), and a body that is not JSON.
    if (i === 5) lines.push(lines[lines.length - 2]);
    if (i === 7) line('WB-NOT-JSON', 'this is not JSON {');
  }
  const catalog: Record<string, number> = {};
  for (let sku = 1; sku <= SKUS; sku++) catalog[`SKU-${sku}`] = 1_000_000;
  return { lines, catalog };
}
