/**
 * A deterministic ledger workload for the fault comparisons (docs/cli.md): N orders of K entries
 * interleaved across ledger batches, with exact duplicates, invalid entries, an invalid batch, a gap
 * that never fills and every kind of rejection. With `competing`, it adds a digest-mismatch and a
 * sequence-conflict: entries whose fate depends on which copy arrives first, so not for `reorder`.
 */
import type { Entry } from '../../src/domain/entry';
import { seededRandom } from '../../local/faults';
import type { LedgerInput } from '../../local/app';
import { added, amended, created, deleted, ledger, messageIdOf } from './e2e';

export interface WorkloadOptions {
  seed: number;
  /** At least 9: the first orders each play a part. */
  orders?: number;
  /** At least 5. */
  entriesPerOrder?: number;
  batchSize?: number;
  competing?: boolean;
}

export interface Workload {
  inputs: LedgerInput[];
  /** The order whose sequence 3 never arrives. */
  gapOrder: string;
  /** messageIds of the entries that take their slot and are rejected. */
  rejected: string[];
  /** transactionIds of the entries invalid on their own. */
  invalid: string[];
  /** The competing entries' messageIds, when `competing`. */
  digestMismatch: string | null;
  sequenceConflict: string | null;
}

/** Copies of earlier entries go at least this many batches after the original. */
const LATER = 2;

export function generateWorkload(options: WorkloadOptions): Workload {
  const orders = options.orders ?? 12;
  const k = options.entriesPerOrder ?? 6;
  const batchSize = options.batchSize ?? 8;
  if (orders < 9 || k < 5) throw new Error('generateWorkload needs at least 9 orders of 5 entries');
  const random = seededRandom(options.seed);
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));

  const rejected: Entry[] = [];
  const perOrder: Entry[][] = [];
  for (let o = 0; o < orders; o++) {
    const orderId = `W-${o}`;
    const tx = (sequence: number): string => `${orderId}-T${sequence}`;
    const entries: Entry[] = [created(orderId, tx(1))];
    for (let sequence = 2; sequence <= k; sequence++) {
      const final = sequence === k && o !== 5;
      entries.push(
        sequence === 4
          ? amended(orderId, tx(4), 4, tx(2), int(1, 9), final)
          : added(orderId, tx(sequence), sequence, int(1, 5), int(0, 2000), final),
      );
    }
    if (o === 1) entries[2] = amended(orderId, tx(3), 3, `${orderId}-NOPE`, 2);
    if (o === 3) entries[k - 2] = deleted(orderId, tx(k - 1), k - 1);
    if (o === 4) entries[2] = created(orderId, tx(3), 3);
    if (o === 2) entries.push(added(orderId, tx(k + 1), k + 1, 1, 100));
    if (o === 0) entries.splice(2, 1);
    if (o === 1) rejected.push(entries[2]);
    if (o === 2) rejected.push(entries[k]);
    if (o === 3) rejected.push(entries[k - 1]);
    if (o === 4) rejected.push(entries[2]);
    perOrder.push(entries);
  }

  // Interleave the orders at random, each in its own sequence order.
  const stream: Entry[] = [];
  const next = perOrder.map(() => 0);
  for (;;) {
    const open = perOrder.map((_, o) => o).filter((o) => next[o] < perOrder[o].length);
    if (open.length === 0) break;
    const o = open[int(0, open.length - 1)];
    stream.push(perOrder[o][next[o]]);
    next[o] += 1;
  }
  const batches: unknown[][] = [];
  for (let i = 0; i < stream.length; i += batchSize) batches.push(stream.slice(i, i + batchSize));
  const batchOf = (entry: Entry): number => batches.findIndex((batch) => batch.includes(entry));
  const later = (after: number, item: unknown): void => {
    const at = after + LATER + int(0, 1);
    while (batches.length <= at) batches.push([]);
    batches[at].push(item);
  };

  // Invalid entries take no slot; they sit anywhere, each under its own transactionId.
  const invalid = [
    {
      transactionId: 'W-6-BAD',
      orderId: 'W-6',
      sequence: 2,
      type: 'TransactionAdded',
      data: { sku: 'S', quantity: 0, unitPrice: 1 },
    },
    {
      transactionId: 'W-7-BAD',
      orderId: 'W-7',
      sequence: 1,
      type: 'OrderCreated',
      data: { customerId: 'C', currency: 'eur' },
    },
    {
      transactionId: 'W-8-BAD',
      orderId: 'W-8',
      type: 'TransactionAdded',
      data: { sku: 'S', quantity: 1, unitPrice: 1 },
    },
  ];
  for (const entry of invalid) batches[int(0, batches.length - 1)].push(entry);

  // Exact duplicates: the same content again, some batches later.
  for (const o of [1, 6, 8]) later(batchOf(perOrder[o][1]), perOrder[o][1]);

  let digestMismatch: string | null = null;
  let sequenceConflict: string | null = null;
  if (options.competing === true) {
    const original = perOrder[6][2];
    if (original.type !== 'TransactionAdded') throw new Error('W-6 sequence 3 should add a line');
    const reused: Entry = { ...original, data: { ...original.data, quantity: original.data.quantity + 10 } };
    const rival = added('W-7', 'W-7-RIVAL', 2, 1, 1);
    later(batchOf(original), reused);
    later(batchOf(perOrder[7][1]), rival);
    digestMismatch = messageIdOf(reused);
    sequenceConflict = messageIdOf(rival);
  }

  const inputs = batches.map((entries, i) => ledger(`WB-${String(i).padStart(3, '0')}`, entries));
  // A broken batch, and the first batch sent again under its messageId.
  inputs.splice(int(1, inputs.length - 1), 0, {
    messageId: 'WB-BROKEN',
    sessionId: 'main',
    body: '{"entries": [',
  });
  inputs.push(inputs[0]);

  return {
    inputs,
    gapOrder: 'W-0',
    rejected: rejected.map(messageIdOf),
    invalid: invalid.map((entry) => entry.transactionId),
    digestMismatch,
    sequenceConflict,
  };
}
