/**
 * What `npm start` prints at the end: the orders (every one for a small run; for a large one the
 * counts by status and the first that need attention), the parked messages by reason, and the
 * account of the input's entries, with where the full report is.
 */
import { compareText } from '../../src/domain/compare';
import type { Report, ReportOrder, ReportStats } from '../report';
import { MAX_CELL_WIDTH, textTable } from '../../tools/cli/text-table';

/** Up to this many orders, each gets a row; above, the summary shows counts and the first to look at. */
export const FULL_TABLE_MAX_ORDERS = 20;
export const ATTENTION_SHOWN = 10;

export interface SummaryContext {
  input: string;
  ledgerMessages: number;
  /** Entries in the ledger messages that had an `entries` array. */
  entries: number;
  seconds: number;
  reportPath?: string;
  htmlPath?: string;
}

const natural = new Intl.Collator('en', { numeric: true, sensitivity: 'variant' });

/** O-2 before O-10: ids compared as a person reads them, ties broken by code unit order. */
export function naturalCompare(a: string, b: string): number {
  return natural.compare(a, b) || compareText(a, b);
}

/** Why an order needs a person's look, or undefined when it ended as it should. */
export function attentionReason(order: ReportOrder): string | undefined {
  if (order.saga?.status === 'needs-attention') return `saga needs attention: ${order.saga.reason ?? ''}`;
  if (order.waitingFor !== null) return `waiting for sequence ${order.waitingFor}`;
  if (order.status === 'pending') return 'pending: its OrderCreated was never applied';
  if (order.status === 'open') return 'open: no final entry applied yet';
  if (order.saga?.status === 'compensated') return `compensated: ${order.saga.reason ?? ''}`;
  return undefined;
}

const ATTENTION_RANK = ['saga needs', 'waiting', 'pending', 'open', 'compensated'];
const rank = (reason: string): number => ATTENTION_RANK.findIndex((start) => reason.startsWith(start));

function orderRows(orders: readonly ReportOrder[]): string[][] {
  return [
    ['order', 'status', 'lines', 'total (minor units)', 'last seq', 'waiting for', 'saga', 'reason'],
    ...orders.map((order) => [
      order.orderId,
      order.status,
      String(order.lines.length),
      order.currency === null ? String(order.total) : `${order.total} ${order.currency}`,
      String(order.appliedSequence),
      order.waitingFor === null ? '-' : String(order.waitingFor),
      order.saga?.status ?? '-',
      order.saga?.reason ?? '',
    ]),
  ];
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => naturalCompare(a, b));
}

/** The per-entry account; entries dropped by duplicate detection, and dead letters of entries that had their outcome, only when there are any. */
function accountLines(stats: Partial<Pick<ReportStats, 'account' | 'deadLetteredAfterOutcome'>>): string[] {
  const { account, deadLetteredAfterOutcome = 0 } = stats;
  if (account === undefined) return [];
  const dropped = account.droppedByDuplicateDetection;
  const lines = [
    `entries ${account.entries}: applied ${account.applied}, duplicate ${account.duplicate}, ` +
      `parked ${account.parked}, buffered ${account.buffered}, dead-lettered ${account.deadLettered}` +
      (dropped > 0 ? `, dropped by duplicate detection ${dropped}` : ''),
  ];
  if (deadLetteredAfterOutcome > 0) {
    lines.push(
      `dead-lettered after their outcome: ${deadLetteredAfterOutcome} entries, counted once by that outcome ` +
        '(their dead letters are redundant)',
    );
  }
  return lines;
}

export function summary(report: Report, context: SummaryContext): string {
  const orders = [...report.orders].sort((a, b) => naturalCompare(a.orderId, b.orderId));
  const out: string[] = [
    `ran ${context.ledgerMessages} ledger messages holding ${context.entries} entries from ${context.input} ` +
      `in ${context.seconds.toFixed(2)} s`,
    '',
  ];
  if (orders.length <= FULL_TABLE_MAX_ORDERS) {
    out.push(orders.length === 0 ? 'no orders' : textTable(orderRows(orders), MAX_CELL_WIDTH));
  } else {
    out.push(
      textTable(
        [
          ['orders by status', 'count'],
          ...countBy(orders, (order) => order.status).map(([status, n]) => [status, String(n)]),
        ],
        MAX_CELL_WIDTH,
      ),
      '',
      textTable(
        [
          ['sagas by status', 'count'],
          ...countBy(orders, (order) => order.saga?.status ?? 'not started').map(([status, n]) => [
            status,
            String(n),
          ]),
        ],
        MAX_CELL_WIDTH,
      ),
    );
    const attention = orders
      .map((order) => ({ order, reason: attentionReason(order) }))
      .filter((item): item is { order: ReportOrder; reason: string } => item.reason !== undefined)
      .sort((a, b) => rank(a.reason) - rank(b.reason) || naturalCompare(a.order.orderId, b.order.orderId));
    out.push('');
    if (attention.length === 0) out.push(`all ${orders.length} orders ended as they should`);
    else {
      out.push(
        `${attention.length} of ${orders.length} orders need attention; the first ${Math.min(ATTENTION_SHOWN, attention.length)}:`,
        textTable(
          [
            ['order', 'why'],
            ...attention.slice(0, ATTENTION_SHOWN).map(({ order, reason }) => [order.orderId, reason]),
          ],
          MAX_CELL_WIDTH * 2,
        ),
      );
    }
  }
  out.push('');
  const parkedByReason = countBy(report.parked, (parked) => parked.reason);
  out.push(
    parkedByReason.length === 0
      ? 'nothing parked'
      : textTable([['parked reason', 'count'], ...parkedByReason.map(([reason, n]) => [reason, String(n)])]),
  );
  const s = report.stats;
  out.push(
    '',
    ...accountLines(s),
    `broker messages ${s.messages} (ledger and forwarded entries), applied ${s.applied}, ` +
      `duplicates ${s.duplicates}, parked ${s.parked}, dead-lettered ${s.deadLettered}, buffered ${s.buffered}`,
  );
  const { duplicate, digestMismatch } = s.recordConflicts;
  if (duplicate + digestMismatch > 0) {
    // The Idempotent Consumer's last word: no cache knew the entry, the store's unique id did.
    out.push(
      `records the store already held (409): ${duplicate} delivered again (duplicate), ` +
        `${digestMismatch} transactionId reused (digest-mismatch)`,
    );
  }
  if (context.reportPath !== undefined) out.push(`full report: ${context.reportPath}`);
  else if (orders.length > FULL_TABLE_MAX_ORDERS) out.push('for every order: --report FILE');
  if (context.htmlPath !== undefined) out.push(`picture of the run: ${context.htmlPath}`);
  return out.join('\n');
}
