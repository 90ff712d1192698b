/**
 * Progress while `npm start` runs, against the input's entry count: on a terminal one line
 * rewritten in place (done, percent, ETA, order sessions against their maximum); when the output
 * is piped or redirected, a plain line every few seconds.
 */
import type { EmbeddedApp } from '../app';
import { QUEUE } from '../../src/services/queues';

export const LIVE_INTERVAL_MS = 100;
export const PIPED_INTERVAL_MS = 5000;

export interface ProgressSnapshot {
  /** Entries that reached an outcome: applied, duplicate or parked. */
  done: number;
  orderSessions: number;
  parked: number;
}

function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

export function progressLine(
  snapshot: ProgressSnapshot,
  totalEntries: number,
  maxSessions: number,
  elapsedMs: number,
): string {
  const done = Math.min(snapshot.done, totalEntries);
  const percent = totalEntries === 0 ? 100 : (100 * done) / totalEntries;
  let eta: string;
  if (done >= totalEntries) eta = 'entries done, finishing sagas';
  else if (done === 0) eta = 'ETA -';
  else eta = `ETA ${seconds((elapsedMs * (totalEntries - done)) / done)}`;
  return (
    `entries ${done}/${totalEntries} (${percent.toFixed(1)}%)  ${eta}  elapsed ${seconds(elapsedMs)}  ` +
    `order sessions ${Math.min(snapshot.orderSessions, maxSessions)}/${maxSessions}  parked ${snapshot.parked}`
  );
}

export function snapshotOf(app: EmbeddedApp): ProgressSnapshot {
  const parked = app.broker.stats()[QUEUE.parked]?.sent ?? 0;
  return {
    // Duplicates include broker redeliveries, so this can run ahead; the line caps it at the total.
    done: app.telemetry.total('entries.applied') + app.telemetry.total('entries.duplicate') + parked,
    orderSessions: app.host.stats().byFunction.orderTransactions?.activeSessions ?? 0,
    parked,
  };
}

export interface Progress {
  stop(): void;
}

export function startProgress(
  read: () => ProgressSnapshot,
  settings: {
    totalEntries: number;
    maxSessions: number;
    mode: 'live' | 'lines' | 'off';
    write: (text: string) => void;
    now?: () => number;
  },
): Progress {
  if (settings.mode === 'off') return { stop: () => undefined };
  const now = settings.now ?? Date.now;
  const started = now();
  const line = (): string =>
    progressLine(read(), settings.totalEntries, settings.maxSessions, now() - started);
  const live = settings.mode === 'live';
  const timer = setInterval(
    () => settings.write(live ? `\r${line()}\x1b[K` : `progress: ${line()}\n`),
    live ? LIVE_INTERVAL_MS : PIPED_INTERVAL_MS,
  );
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      if (live) settings.write(`\r${line()}\x1b[K\n`);
    },
  };
}
