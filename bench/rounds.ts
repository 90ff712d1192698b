/**
 * A judged convoy row and its runtime-only twin run in rounds, one after the other, so that both
 * meet the same drift of the machine: row then twin in odd rounds, twin then row in even ones, so
 * that a machine that slows (or speeds up) through the rounds favours neither. A single pair swung
 * from 0.70 to 1.00 of the twin at 16 sessions on this 2-core machine, on the same code within
 * minutes, while the target is 0.85: one pair is noise, the median of several is a measure. The
 * row shown is its median run, except that every correctness count is the worst of all its runs: a
 * violation in any round shows.
 */
import type { BenchRow } from './results';

/** Round 1 runs the row first, round 2 its twin, and so on (ABBA): drift cancels over pairs of rounds. */
export function twinGoesFirst(round: number): boolean {
  return round % 2 === 0;
}

export interface TwinRun {
  messagesPerSecond: number;
  cpuMicrosPerMessage: number;
}

/** The middle value; for an even count, the lower of the two middle ones (a run that happened). */
function medianBy<T>(items: readonly T[], value: (item: T) => number): T {
  if (items.length === 0) throw new Error('no runs to take the median of');
  const sorted = [...items].sort((a, b) => value(a) - value(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** The row of several runs of one setup, beside the twin's runs (as many, or none). */
export function combineRounds(rows: readonly BenchRow[], twins: readonly TwinRun[]): BenchRow {
  const median = medianBy(rows, (row) => row.messagesPerSecond);
  const worst = (count: (row: BenchRow) => number): number => Math.max(...rows.map(count));
  const row: BenchRow = {
    ...median,
    orderingViolations: worst((r) => r.orderingViolations),
    doubleEffects: worst((r) => r.doubleEffects),
    ordersWrong: worst((r) => r.ordersWrong),
    lockExpired: worst((r) => r.lockExpired),
    hostWarnings: worst((r) => r.hostWarnings),
  };
  if (twins.length === 0) return row;
  const twin = medianBy(twins, (run) => run.messagesPerSecond);
  const twinCpu = medianBy(twins, (run) => run.cpuMicrosPerMessage).cpuMicrosPerMessage;
  return {
    ...row,
    // The twin's CPU per entry beside the shown run's own, both medians of their rounds.
    cpuMicrosPerMessage: medianBy(rows, (r) => r.cpuMicrosPerMessage).cpuMicrosPerMessage,
    twin: {
      messagesPerSecond: twin.messagesPerSecond,
      ratio: twin.messagesPerSecond > 0 ? median.messagesPerSecond / twin.messagesPerSecond : 0,
      cpuMicrosPerMessage: twinCpu,
      rounds: rows.map((run, index) =>
        twins[index] !== undefined && twins[index].messagesPerSecond > 0
          ? run.messagesPerSecond / twins[index].messagesPerSecond
          : 0,
      ),
    },
  };
}
