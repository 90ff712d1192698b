/**
 * Smoke test of `npm run bench` on a tiny workload: the result has its shape and the convoy is
 * correct. Timing is not asserted: that is what the bench reports, not what a test can hold.
 */
import { BenchUsageError, formatBench, parseBenchArgs, runBench, type BenchResult } from '../../bench/bench';

describe('bench', () => {
  let result: BenchResult;

  beforeAll(async () => {
    result = await runBench({
      orders: 20,
      entriesPerOrder: 5,
      batchSize: 10,
      activeOrders: 8,
      latencyMs: 0,
      sessions: [1, 4],
      competingCalls: 4,
      zeroLatencySessions: 4,
      warmupOrders: 0,
      sessionsTable: false,
      orderLengths: [],
      npmStartOrders: 0,
      coldStartRounds: 0,
      azureModel: false,
    });
  });

  it('runs every design on the same workload', () => {
    expect(result.workload).toMatchObject({ orders: 20, entries: 100, ledgerMessages: 10 });
    expect(result.rows.map((row) => [row.design, row.concurrency])).toEqual([
      ['one consumer', 1],
      ['competing consumers', 4],
      ['convoy', 1],
      ['convoy', 4],
      ['convoy', 4],
    ]);
    for (const row of result.rows) {
      expect(row.messages).toBe(100);
      expect(row.deliveries).toBeGreaterThanOrEqual(100);
      expect(row.ordersChecked).toBe(20);
      expect(row.messagesPerSecond).toBeGreaterThan(0);
      expect(row.latencyMs99).toBeGreaterThanOrEqual(row.latencyMs50);
      expect(row.efficiency).toBeNull();
      expect(row.sendCalls.minimumPerLedgerMessage).toBe(1);
      expect(row.cpuMicrosPerMessage).toBeGreaterThan(0);
      expect(row.storeRoundTrips.storeCounter).toBe(row.storeRoundTrips.total);
    }
  });

  it('finds the convoy correct: in order, each entry once, every order equal to the reference', () => {
    for (const row of result.rows.filter((candidate) => candidate.design === 'convoy')) {
      expect(row).toMatchObject({ orderingViolations: 0, doubleEffects: 0, ordersWrong: 0 });
      expect(row.storeRoundTrips.perFirstDelivery).toBe(1);
      expect(row.sendCalls.perLedgerDelivery).toBe(1);
      expect(row.hostWarnings).toBe(0);
    }
  });

  it('counts what the naive consumer does on every delivery: two round trips', () => {
    for (const row of result.rows.filter((candidate) => candidate.design !== 'convoy')) {
      expect(row.storeRoundTrips.perFirstDelivery).toBe(2);
      expect(row.doubleEffects).toBe(row.deliveries - row.messages);
    }
  });

  it('reports every target with PASS or FAIL, and prints them with the fault level', () => {
    expect(result.targets.map((target) => target.target)).toEqual(
      expect.arrayContaining([
        'convoy: 0 ordering violations at every concurrency',
        "convoy at zero latency: the app's own code >= 5,000 messages/s on one core (<= 200 µs CPU per entry beyond its twin's)",
      ]),
    );
    expect(result.targets.find((target) => target.target.includes('ordering'))?.pass).toBe(true);
    const printed = formatBench(result);
    expect(printed).toContain('duplicate=0.05');
    expect(printed).toMatch(/^(PASS|FAIL) {2}convoy: 0 double effects/m);
  });

  it('waits out the simulated latency: no store call ends early', async () => {
    const timed = await runBench({
      orders: 6,
      entriesPerOrder: 3,
      batchSize: 6,
      activeOrders: 3,
      latencyMs: 1,
      sessions: [2],
      zeroLatencySessions: 0,
      naive: false,
      warmupOrders: 0,
      sessionsTable: false,
      orderLengths: [],
      npmStartOrders: 0,
      coldStartRounds: 0,
      azureModel: false,
    });
    expect(formatBench(timed)).toContain('1 ms simulated (setTimeout)');
    const [row] = timed.rows;
    expect(row).toMatchObject({ messages: 18, orderingViolations: 0, doubleEffects: 0, ordersWrong: 0 });
    expect(row.storeRoundTrips.meanMs).toBeGreaterThanOrEqual(1);
    expect(row.efficiency).toEqual(expect.any(Number));
    // Each delivery waits for its receive and its completion, each of the 6 orders' sessions for an
    // accept; the ideal counts those round trips beside the store's.
    expect(row.brokerRoundTripsPerMessage).toBeGreaterThanOrEqual(2 + 6 / 18);
    const tripsPerMessage = row.storeRoundTrips.perMessage + row.brokerRoundTripsPerMessage;
    expect(row.idealMessagesPerSecond).toBeCloseTo(2 / ((tripsPerMessage * 1) / 1000), 6);
    // Beside it, its runtime-only twin on the same workload; the ratio is the two speeds'.
    expect(row.twin).not.toBeNull();
    expect(row.twin?.messagesPerSecond).toBeGreaterThan(0);
    expect(row.twin?.ratio).toBeCloseTo(row.messagesPerSecond / (row.twin?.messagesPerSecond ?? 1), 9);
    expect(formatBench(timed)).toContain('vs twin');
  });

  it('runs a judged row and its twin in rounds, the twin first in every second round', async () => {
    const lines: string[] = [];
    await runBench(
      {
        orders: 4,
        entriesPerOrder: 2,
        batchSize: 4,
        activeOrders: 2,
        sessions: [],
        zeroLatencySessions: 2,
        naive: false,
        warmupOrders: 0,
        sessionsTable: false,
        orderLengths: [],
        npmStartOrders: 0,
        coldStartRounds: 0,
        azureModel: false,
        twinRounds: 3,
      },
      (line) => lines.push(line),
    );
    const order = lines
      .filter((line) => /round \d of 3|msg\/s in|runtime-only twin/.test(line))
      .map((line) =>
        line.includes('round')
          ? line.replace(/.*\(round (\d) of 3\).*/, 'round $1')
          : line.includes('twin')
            ? 'twin'
            : 'row',
      );
    expect(order).toEqual(['round 1', 'row', 'twin', 'round 2', 'twin', 'row', 'round 3', 'row', 'twin']);
  });

  it('parses its flags and refuses bad ones', () => {
    expect(
      parseBenchArgs(['--latency-ms', '0.5', '--orders', '30', '--sessions', '2,8', '--json', 'out.json']),
    ).toEqual({ options: { latencyMs: 0.5, orders: 30, sessions: [2, 8] }, json: 'out.json' });
    expect(() => parseBenchArgs(['--entries', '1'])).toThrow(BenchUsageError);
    expect(() => parseBenchArgs(['--bogus', '1'])).toThrow(BenchUsageError);
    expect(parseBenchArgs(['--no-twin']).options).toEqual({ twin: false });
    expect(() => parseBenchArgs(['--latency-clock', 'timer'])).toThrow(BenchUsageError);
  });
});
