/**
 * The table host.json's session settings are chosen from: orders per second per instance at each
 * `sessionIdleTimeout` x `maxConcurrentSessions`, for orders whose entries arrive in a burst and for
 * orders whose entries trickle in, by the session model (./session-model) in virtual time.
 */
import { textTable } from '../tools/cli/text-table';
import { simulateSessions, type SessionArrivals } from './session-model';

export type Arrival = 'burst' | 'trickle';

export interface SessionTableOptions {
  orders: number;
  entriesPerOrder: number;
  /** One network round trip, to the store or to Service Bus (./runs gives both one latency). */
  roundTripMs: number;
  /** Trickle: ms between two entries of one order; the orders' first entries spread over one gap. */
  trickleGapMs: number;
  idleTimeoutsMs: readonly number[];
  sessions: readonly number[];
}

export const SESSION_TABLE_DEFAULTS: SessionTableOptions = {
  orders: 512,
  entriesPerOrder: 10,
  roundTripMs: 2,
  trickleGapMs: 250,
  idleTimeoutsMs: [0, 100, 500, 1000],
  sessions: [8, 16, 32],
};

/** The table at the bench's round trip and order length (at least 1 ms, so that work costs time). */
export function sessionTableOptions(bench: {
  entriesPerOrder: number;
  latencyMs: number;
}): SessionTableOptions {
  return {
    ...SESSION_TABLE_DEFAULTS,
    entriesPerOrder: bench.entriesPerOrder,
    roundTripMs: Math.max(1, bench.latencyMs),
  };
}

export interface SessionTableRow {
  arrival: Arrival;
  sessionIdleTimeoutMs: number;
  maxConcurrentSessions: number;
  ordersPerSecond: number;
  /** Session accepts per entry: 1 / entries per order when a session is accepted once per order. */
  acceptsPerEntry: number;
  /** Of the time slots held a session (accepting, handling, holding it drained), the share spent holding it drained. */
  heldIdleShare: number;
  /** Arrival to handled, ms, 99th percentile. */
  waitMs99: number;
  seconds: number;
}

export function sessionArrivals(options: SessionTableOptions, arrival: Arrival): SessionArrivals {
  const { orders, entriesPerOrder, trickleGapMs } = options;
  const arrivals = new Map<string, number[]>();
  for (let o = 0; o < orders; o++) {
    const start = arrival === 'burst' ? 0 : (o * trickleGapMs) / orders;
    const gap = arrival === 'burst' ? 0 : trickleGapMs;
    arrivals.set(
      `O-${o}`,
      Array.from({ length: entriesPerOrder }, (_, j) => start + j * gap),
    );
  }
  return arrivals;
}

/**
 * What one entry holds its slot for, in round trips, as the bench's convoy measures it: the receive
 * of its message (prefetchCount 0), its store batch (1.00 per first delivery) and its completion.
 * A session accept is one more, per session (../embedded/functions-host).
 */
export const ROUND_TRIPS_PER_ENTRY = 3;

export function sessionTable(options: SessionTableOptions = SESSION_TABLE_DEFAULTS): SessionTableRow[] {
  const rows: SessionTableRow[] = [];
  for (const arrival of ['burst', 'trickle'] as const) {
    const arrivals = sessionArrivals(options, arrival);
    for (const sessionIdleTimeoutMs of options.idleTimeoutsMs) {
      for (const maxConcurrentSessions of options.sessions) {
        // prefetchCount 0, as the embedded host runs: receive, store batch and completion.
        const run = simulateSessions(arrivals, {
          maxConcurrentSessions,
          sessionIdleTimeoutMs,
          prefetchCount: 0,
          acceptMs: options.roundTripMs,
          receiveMs: options.roundTripMs,
          handlerMs: options.roundTripMs,
          completeMs: options.roundTripMs,
        });
        const slotMs = run.heldIdleMs + run.receivingMs + run.handlingMs + run.accepts * options.roundTripMs;
        rows.push({
          arrival,
          sessionIdleTimeoutMs,
          maxConcurrentSessions,
          ordersPerSecond: run.makespanMs > 0 ? options.orders / (run.makespanMs / 1000) : 0,
          acceptsPerEntry: run.messages > 0 ? run.accepts / run.messages : 0,
          heldIdleShare: slotMs > 0 ? run.heldIdleMs / slotMs : 0,
          waitMs99: run.waitsMs[Math.max(0, Math.ceil(0.99 * run.waitsMs.length) - 1)] ?? 0,
          seconds: run.makespanMs / 1000,
        });
      }
    }
  }
  return rows;
}

export function formatSessionTable(options: SessionTableOptions, rows: readonly SessionTableRow[]): string {
  const header = [
    'arrival',
    'idle ms',
    'sessions',
    'orders/s',
    'accepts/entry',
    'held idle %',
    'p99 wait ms',
    's',
  ];
  const body = rows.map((row) => [
    row.arrival,
    String(row.sessionIdleTimeoutMs),
    String(row.maxConcurrentSessions),
    String(Math.round(row.ordersPerSecond)),
    row.acceptsPerEntry.toFixed(2),
    String(Math.round(row.heldIdleShare * 100)),
    String(Math.round(row.waitMs99)),
    row.seconds.toFixed(2),
  ]);
  return [
    `session settings, one instance, by the session model (virtual time): ${options.orders} orders x ${options.entriesPerOrder} entries;`,
    `an entry holds its slot for ${ROUND_TRIPS_PER_ENTRY} round trips of ${options.roundTripMs} ms (receive, store batch, completion), a session accept for one;`,
    'burst: every entry at once;',
    `trickle: an order's entries ${options.trickleGapMs} ms apart, the orders' first entries spread over one gap`,
    '',
    textTable([header, ...body], Number.POSITIVE_INFINITY, (column) => (column === 0 ? 'left' : 'right')),
    '',
    'idle ms: sessionIdleTimeout (0: closed when drained; Azure requires a positive value). held idle %: of the time a',
    'slot held a session, the share it held one drained. p99 wait: entry arrival to handled. s: first arrival to last',
    'entry handled. Handler CPU time is left out: the numbers are upper bounds.',
  ].join('\n');
}
