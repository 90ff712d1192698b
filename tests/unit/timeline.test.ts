/** The run's timeline (local/timeline.ts): the load it samples while `watch` runs. */
import { createTimelineRecorder, LOAD_INTERVAL_MS, MAX_LOAD_SAMPLES, type Load } from '../../local/timeline';

describe('the timeline load samples', () => {
  // The fake timers move Date.now with them.
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  const load = (orderSessions: number): Load => ({
    orderSessions,
    entriesWaiting: 2 * orderSessions,
    ledgerWaiting: 0,
    sagasInFlight: 0,
  });

  const advance = (ms: number): void => jest.advanceTimersByTime(ms);

  it('samples at once, every interval, and once more when stopped, then no more', () => {
    const timeline = createTimelineRecorder(Date.now);
    let sessions = 0;
    const watching = timeline.watch(() => load(sessions++));
    advance(3 * LOAD_INTERVAL_MS);
    watching.stop();
    advance(5 * LOAD_INTERVAL_MS);
    expect(timeline.samples.map((sample) => sample.at)).toEqual([
      0,
      LOAD_INTERVAL_MS,
      2 * LOAD_INTERVAL_MS,
      3 * LOAD_INTERVAL_MS,
      3 * LOAD_INTERVAL_MS,
    ]);
    expect(timeline.samples.map((sample) => sample.orderSessions)).toEqual([0, 1, 2, 3, 4]);
    expect(timeline.samples[1].entriesWaiting).toBe(2);
  });

  it(`keeps at most ${MAX_LOAD_SAMPLES} samples over a long run, evenly spread, the newest kept`, () => {
    const timeline = createTimelineRecorder(Date.now);
    const watching = timeline.watch(() => load(1));
    const runMs = 5 * MAX_LOAD_SAMPLES * LOAD_INTERVAL_MS;
    advance(runMs);
    const times = timeline.samples.map((sample) => sample.at);
    expect(times.length).toBeLessThan(MAX_LOAD_SAMPLES);
    expect(times.length).toBeGreaterThanOrEqual(MAX_LOAD_SAMPLES / 2);
    // Spread over the whole run, none far from the next.
    expect(times[0]).toBeLessThan(runMs / 100);
    expect(runMs - times[times.length - 1]).toBeLessThanOrEqual(8 * LOAD_INTERVAL_MS);
    const gaps = times.slice(1).map((at, i) => at - times[i]);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(8 * LOAD_INTERVAL_MS);
    watching.stop();
  });
});
