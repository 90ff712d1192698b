/** A judged row and its twin run in rounds (bench/rounds.ts): medians for speed, the worst for correctness. */
import { combineRounds, twinGoesFirst } from '../../bench/rounds';
import type { BenchRow } from '../../bench/results';
import { convoyRow } from '../support/bench-row';

/** One run at this speed: its seconds, p50 and CPU per entry follow from it, so the chosen run shows. */
function run(messagesPerSecond: number, change: Partial<BenchRow> = {}): BenchRow {
  return convoyRow({
    seconds: 100 / messagesPerSecond,
    messagesPerSecond,
    latencyMs50: messagesPerSecond,
    efficiency: messagesPerSecond / 8000,
    twin: null,
    cpuMicrosPerMessage: 1e6 / messagesPerSecond,
    ...change,
  });
}

describe('combineRounds', () => {
  test('shows the median run, the twin of the medians, and each round against the twin of its round', () => {
    const row = combineRounds(
      [run(2000), run(3000), run(2500)],
      [
        { messagesPerSecond: 2500, cpuMicrosPerMessage: 300 },
        { messagesPerSecond: 4000, cpuMicrosPerMessage: 250 },
        { messagesPerSecond: 2500, cpuMicrosPerMessage: 280 },
      ],
    );
    expect(row.messagesPerSecond).toBe(2500);
    expect(row.latencyMs50).toBe(2500);
    expect(row.cpuMicrosPerMessage).toBe(400);
    expect(row.twin).toEqual({
      messagesPerSecond: 2500,
      ratio: 1,
      cpuMicrosPerMessage: 280,
      rounds: [0.8, 0.75, 1],
    });
  });

  test('of an even number of runs, the lower middle one: a run that happened', () => {
    expect(combineRounds([run(4000), run(1000), run(3000), run(2000)], []).messagesPerSecond).toBe(2000);
  });

  test('counts every correctness failure of any round, whichever run is shown', () => {
    const row = combineRounds(
      [
        run(2000, { orderingViolations: 3 }),
        run(2500),
        run(3000, { doubleEffects: 1, ordersWrong: 2, lockExpired: 4, hostWarnings: 5 }),
      ],
      [],
    );
    expect(row).toMatchObject({
      messagesPerSecond: 2500,
      orderingViolations: 3,
      doubleEffects: 1,
      ordersWrong: 2,
      lockExpired: 4,
      hostWarnings: 5,
      twin: null,
    });
  });

  test('one run and its twin are the row as it was', () => {
    const row = combineRounds([run(2000)], [{ messagesPerSecond: 2500, cpuMicrosPerMessage: 300 }]);
    expect(row).toEqual({
      ...run(2000),
      twin: { messagesPerSecond: 2500, ratio: 0.8, cpuMicrosPerMessage: 300, rounds: [0.8] },
    });
  });
});

test('alternates which of the two runs of a round goes first: row, twin, twin, row, row, twin', () => {
  expect([1, 2, 3, 4, 5, 6].map(twinGoesFirst)).toEqual([false, true, false, true, false, true]);
});
