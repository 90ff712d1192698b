import { runTwin } from '../../bench/twin';
import { generateBenchWorkload } from '../../bench/workload';
import { BENCH_DEFAULTS } from '../../bench/results';

describe('the runtime-only twin', () => {
  it('takes every entry of the ledger through the real ledger processor and the session host, duplicates counted once', async () => {
    const workload = generateBenchWorkload({
      orders: 8,
      entriesPerOrder: 4,
      batchSize: 8,
      activeOrders: 4,
      seed: 3,
    });
    const twin = await runTwin(
      workload,
      { ...BENCH_DEFAULTS, seed: 3, duplicate: 0.3 },
      { design: 'convoy', concurrency: 4, latencyMs: 0 },
    );
    expect(twin.entries).toBe(workload.entries.length);
    expect(twin.messagesPerSecond).toBeGreaterThan(0);
    expect(twin.cpuMicrosPerMessage).toBeGreaterThan(0);
  });
});
