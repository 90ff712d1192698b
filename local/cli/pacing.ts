/**
 * `npm start` feeds its input file to the ledger as the app takes it, as a producer reading a file
 * would, rather than all of it at the start: every entry sent ahead of the consumers waits in the
 * embedded broker, which here lives in the app's own process (on Azure, Service Bus holds a backlog,
 * not the Function app). Sent all at once, 20,000 orders x 10 entries held some 200,000 messages at
 * a time. The next ledger message goes out once no ledger message waits, the entries waiting or
 * locked on order-transactions (its active message count) and the orchestrations not yet purged are
 * under their limits. Nothing else changes: the same messages, in the same order.
 */
import type { EmbeddedApp } from '../app';
import { QUEUE } from '../../src/services/queues';

export interface Backlog {
  /** Ledger messages waiting or locked (the ledger queue's active message count). */
  ledgerMessages: number;
  /** Entries waiting or locked on order-transactions (its active message count). */
  entries: number;
  /** Orchestrations started and not yet purged. */
  sagas: number;
}

export const PACING_LIMITS = {
  /** Enough to keep every session busy: 5,000 entries are some 500 orders' worth. */
  entries: 5_000,
  sagas: 2_000,
} as const;

export type PacingLimits = { entries: number; sagas: number };

export function backlogOf(app: Pick<EmbeddedApp, 'broker' | 'durable'>): Backlog {
  const durable = app.durable.stats();
  return {
    ledgerMessages: app.broker.activeMessageCount(QUEUE.ledger),
    entries: app.broker.activeMessageCount(QUEUE.orderTransactions),
    sagas: durable.instancesStarted - durable.instancesPurged,
  };
}

/** Room for the next ledger message: no ledger message waiting, entries and sagas under their limits. */
export function hasRoom(backlog: Backlog, limits: PacingLimits = PACING_LIMITS): boolean {
  return backlog.ledgerMessages === 0 && backlog.entries < limits.entries && backlog.sagas < limits.sagas;
}

/** Waits, a few milliseconds at a time, until there is room. */
export async function waitForRoom(
  read: () => Backlog,
  limits: PacingLimits = PACING_LIMITS,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<void> {
  while (!hasRoom(read(), limits)) await sleep(5);
}
