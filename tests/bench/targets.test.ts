/**
 * The bench's targets judged on rows made up for the purpose: where each threshold lies, and that
 * the app is measured against its runtime-only twin (its CPU and its speed), not against the
 * runtime's own cost.
 */
import { evaluateTargets, requestUnitTargets } from '../../bench/targets';
import type { BenchRow } from '../../bench/results';
import { convoyRow } from '../support/bench-row';

function judged(rows: BenchRow[], part: string): { pass: boolean; detail: string } {
  const found = evaluateTargets(rows).find((target) => target.target.includes(part));
  if (found === undefined) throw new Error(`no target about ${part}`);
  return found;
}

describe('the bench targets', () => {
  it('hold the convoy at 16 sessions to 0.85 of its twin, whatever the absolute efficiency', () => {
    const at = (ratio: number): boolean =>
      judged(
        [convoyRow({ twin: { messagesPerSecond: 2000, ratio, cpuMicrosPerMessage: 300, rounds: [ratio] } })],
        'twin at 16',
      ).pass;
    expect(at(0.85)).toBe(true);
    expect(at(0.849)).toBe(false);
    const detail = judged([convoyRow({})], 'twin at 16').detail;
    expect(detail).toContain('efficiency 0.25 of 8000 msg/s absolute');
    // Only the row at 16 sessions is judged.
    expect(
      evaluateTargets([convoyRow({ concurrency: 4 })]).some((target) => target.target.includes('twin at 16')),
    ).toBe(false);
  });

  it("give the app 200 µs of CPU per entry at zero latency beyond what its twin's runtime takes", () => {
    const zero = (cpu: number, twinCpu: number): { pass: boolean; detail: string } =>
      judged(
        [
          convoyRow({
            latencyMs: 0,
            efficiency: null,
            idealMessagesPerSecond: null,
            cpuMicrosPerMessage: cpu,
            twin: { messagesPerSecond: 3000, ratio: 0.9, cpuMicrosPerMessage: twinCpu, rounds: [0.9] },
          }),
        ],
        'zero latency',
      );
    expect(zero(500, 300).pass).toBe(true);
    expect(zero(500.1, 300).pass).toBe(false);
    expect(zero(500, 300).detail).toMatch(/^200\.0 µs \(500\.0 less the twin's 300\.0\), so 5000 msg\/s/);
    expect(zero(150, 100).pass).toBe(true);
  });
});

describe('the request-unit target', () => {
  const row = (entriesPerOrder: number, requestUnitsPerEntry: number) => ({
    entriesPerOrder,
    requestUnitsPerEntry,
  });

  it('holds an entry of a 10-entry order to 10 estimated RU', () => {
    const at = (units: number) => requestUnitTargets([row(50, 1), row(10, units)])[0];
    expect(at(10).pass).toBe(true);
    expect(at(10.01).pass).toBe(false);
    expect(at(17.65).detail).toBe('17.65 RU per entry');
  });

  it('judges only the row of 10-entry orders, and nothing without it', () => {
    expect(requestUnitTargets([row(50, 1), row(200, 1)])).toEqual([]);
    expect(requestUnitTargets([row(10, 9), row(50, 30)]).map((target) => target.pass)).toEqual([true]);
  });
});
