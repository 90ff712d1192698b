/**
 * The identity every e2e run must hold: each entry of the input ends in exactly one of the
 * account's outcomes, and none is counted twice.
 */
import type { Report } from '../../local/report';

/**
 * `deadLetteredAfterOutcome`: how many entries the test itself left dead-lettered after their
 * outcome had committed (a failure injected after every commit); 0, as in every run, unless it
 * says so. Such an entry counts once, by its outcome, and the report notes its dead letter.
 */
export function expectAccountAddsUp(
  report: Report,
  { deadLetteredAfterOutcome = 0 }: { deadLetteredAfterOutcome?: number } = {},
): void {
  const { account } = report.stats;
  const { entries, applied, duplicate, parked, buffered, deadLettered, droppedByDuplicateDetection } =
    account;
  expect({
    entries,
    outcomes: applied + duplicate + parked + buffered + deadLettered + droppedByDuplicateDetection,
  }).toEqual({ entries, outcomes: entries });
  // Entries still waiting are the report's too.
  expect(buffered).toBe(report.stats.buffered);
  // A noted dead letter is one of the dead-letter queue's, of an entry counted by another outcome.
  expect(report.stats.deadLetteredAfterOutcome).toBe(deadLetteredAfterOutcome);
  expect(deadLetteredAfterOutcome).toBeLessThanOrEqual(
    report.deadLettered.filter((message) => message.queue === 'order-transactions').length,
  );
}
