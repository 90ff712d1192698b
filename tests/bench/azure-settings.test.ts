/**
 * host.json's session settings at Azure's round trips: read from host.json as the extension reads
 * them, compared with the settings they replaced on one burst, and judged against the 1.5x target
 * (PASS and FAIL on made-up comparisons: the target's threshold, not a timing).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AZURE_LATENCIES,
  compareHostSettings,
  formatHostSettings,
  hostJsonSessionSettings,
  hostSettingsTargets,
  instanceRate,
  PREVIOUS_SETTINGS,
  shippedSessionSettings,
  type HostSettingsComparison,
} from '../../bench/azure-settings';
import { BENCH_USAGE, formatBench, parseBenchArgs, runBench } from '../../bench/bench';

const hostJson = (serviceBus: object): string =>
  JSON.stringify({ version: '2.0', extensions: { serviceBus } });

describe("host.json's session settings on Azure", () => {
  it('reads prefetchCount, sessionIdleTimeout and maxConcurrentSessions, with the extension defaults where unset', () => {
    expect(
      hostJsonSessionSettings(
        hostJson({ prefetchCount: 3, sessionIdleTimeout: '00:00:00.250', maxConcurrentSessions: 12 }),
      ),
    ).toEqual({ prefetchCount: 3, sessionIdleTimeoutMs: 250, maxConcurrentSessions: 12 });
    expect(hostJsonSessionSettings(hostJson({ sessionIdleTimeout: '00:00:01' }))).toEqual({
      prefetchCount: 0,
      sessionIdleTimeoutMs: 1000,
      maxConcurrentSessions: 8,
    });
    // Unset, the idle timeout is the try timeout: every drained session held for a minute.
    expect(() => hostJsonSessionSettings(hostJson({}))).toThrow(/sessionIdleTimeout/);
  });

  it("reads the repository's host.json", () => {
    const text = readFileSync(join(__dirname, '..', '..', 'host.json'), 'utf8');
    expect(shippedSessionSettings()).toEqual(hostJsonSessionSettings(text));
  });

  it('carries more orders per second with prefetch, with a shorter hold and with more sessions, never less', () => {
    const rate = (prefetchCount: number, sessionIdleTimeoutMs: number, maxConcurrentSessions: number) =>
      instanceRate({ prefetchCount, sessionIdleTimeoutMs, maxConcurrentSessions }).ordersPerSecond;
    expect(rate(2, 100, 32)).toBeGreaterThan(rate(0, 100, 32));
    expect(rate(2, 50, 32)).toBeGreaterThan(rate(2, 100, 32));
    expect(rate(2, 50, 64)).toBeGreaterThan(rate(2, 50, 32));
    // A burst of 10-entry orders: sessions / (accept + first push + 10 x (batch + completion) + hold).
    const { serviceBusMs, sessionAcceptMs, cosmosBatchMs } = AZURE_LATENCIES;
    const perOrderMs = sessionAcceptMs + serviceBusMs + 10 * (cosmosBatchMs + serviceBusMs) + 50;
    expect(rate(2, 50, 32)).toBeCloseTo((32 * 1000) / perOrderMs, -1);
  });

  it('puts shipped and previous side by side, each with its orders per second, in one object', () => {
    const comparison = compareHostSettings({
      prefetchCount: 2,
      sessionIdleTimeoutMs: 50,
      maxConcurrentSessions: 32,
    });
    expect(comparison.previous).toMatchObject({ ...PREVIOUS_SETTINGS, arrival: 'burst' });
    expect(comparison.shipped).toMatchObject({ prefetchCount: 2, sessionIdleTimeoutMs: 50 });
    expect(comparison.ratio).toBeCloseTo(
      comparison.shipped.ordersPerSecond / comparison.previous.ordersPerSecond,
      9,
    );
    const json = JSON.parse(JSON.stringify(comparison)) as {
      shipped: { ordersPerSecond: number };
      previous: { ordersPerSecond: number };
    };
    expect(json.shipped.ordersPerSecond).toBeGreaterThan(0);
    expect(json.previous.ordersPerSecond).toBeGreaterThan(0);
    expect(comparison.candidates.filter((rate) => rate.arrival === 'trickle')).toHaveLength(
      comparison.candidates.length / 2,
    );
    expect(formatHostSettings(comparison)).toMatch(/^shipped\s+burst\s+2\s+50\s+32\s+\d+/m);
  });

  it('passes at 1.5x the previous settings and fails below', () => {
    const comparison = compareHostSettings(PREVIOUS_SETTINGS);
    const at = (ratio: number): boolean => {
      const made: HostSettingsComparison = {
        ...comparison,
        shipped: { ...comparison.shipped, ordersPerSecond: comparison.previous.ordersPerSecond * ratio },
        ratio,
      };
      return hostSettingsTargets(made)[0].pass;
    };
    expect(at(1.5)).toBe(true);
    expect(at(1.49)).toBe(false);
    expect(hostSettingsTargets(comparison)[0].pass).toBe(false);
    expect(hostSettingsTargets(null)).toEqual([]);
  });
});

describe('--only model', () => {
  it('is chosen with --only model, skipped with --no-model, and the cold-start row sized with --cold-start-rounds', () => {
    expect(parseBenchArgs(['--only', 'model']).options).toEqual({ only: 'model' });
    expect(parseBenchArgs(['--no-model', '--cold-start-rounds', '0']).options).toEqual({
      azureModel: false,
      coldStartRounds: 0,
    });
    expect(() => parseBenchArgs(['--only', 'azure'])).toThrow(/--only must be .*model/);
    expect(BENCH_USAGE).toMatch(/--cold-start-rounds N\s+.*\(default: 5\)/);
  });

  it("runs host.json's comparison and the deployment's ceilings alone, with their targets", async () => {
    const result = await runBench(
      { only: 'model', orderLengthEntries: 200, warmupOrders: 0 },
      () => undefined,
    );
    expect(result.rows).toEqual([]);
    expect(result.coldStart).toBeNull();
    expect(result.hostSettings?.shipped.ordersPerSecond).toBeGreaterThan(0);
    expect(result.hostSettings?.previous.ordersPerSecond).toBeGreaterThan(0);
    expect(result.deployment?.rows[0].maxInstances).toBeGreaterThanOrEqual(1);
    expect(result.targets.map((target) => target.target.split(':')[0])).toEqual([
      'host.json on Azure',
      'deployment',
    ]);
    const printed = formatBench(result);
    expect(printed).toContain('host.json on Azure, one instance');
    expect(printed).toContain('deployment ceilings');
  }, 60_000);
});
