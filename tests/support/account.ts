/**
 * The identity every e2e run must hold: each entry of the input ends in
 * exactly one of the account's five outcomes, and none is counted twice.
 */
import type { Report } from '../../local/report';

/**
 * `twoOutcomes`: how many entries the test itself left applied with their message dead-lettered
 * as well (a failure injected after every commit); 0, as in every run, unless it says so.
 */
export function expectAccountAddsUp(
  report: Report,
  { twoOutcomes = 0 }: { twoOutcomes?: number } = {},
): void {
  const { account } = report.stats;
  const { entries, applied, duplicate, parked, buffered, deadLettered } = account;
  expect({ entries, outcomes: applied + duplicate + parked + buffered + deadLettered }).toEqual({
    entries,
    outcomes: entries,
  });
  // Entries still waiting are the report's too.
  expect(buffered).toBe(report.stats.buffered);
  // No entry ended two ways (applied, and its message dead-lettered as well).
  expect(report.stats.entriesWithTwoOutcomes).toBe(twoOutcomes);
}
