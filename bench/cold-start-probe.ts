/**
 * Run by the bench's cold-start row (./cold-start) as a fresh `node` process: loads an Azure entry
 * point as the Node worker loads it (the stand-in `@azure/functions-core` installed first, as the
 * worker installs its own), then any further files named (chunks a bundle loads later: cost moved
 * behind the first invocation still counts), lets what the load deferred run for a settle window,
 * and prints one JSON line (ColdStartProbeReport). It exits at once: an exporter's timers or
 * retries never run, and no network wait is in the numbers, which are CPU time.
 *
 *   node dist/bench/cold-start-probe.js SETTLE_MS ENTRY [FILE...]
 */
import { performance } from 'node:perf_hooks';
import { installCoreModule, registeredFunctions } from '../local/worker/core';

export interface ColdStartProbeReport {
  /** process.cpuUsage (user + system) of the synchronous load, ms. */
  loadCpuMs: number;
  /** The same from the load's start to the end of the settle window: what the load deferred included. */
  settledCpuMs: number;
  loadWallMs: number;
  /** CommonJS modules the load compiled (require.cache entries it added). */
  modules: number;
  /** Functions the entry registered with the stand-in worker. */
  registered: number;
}

function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

function main(args: readonly string[]): void {
  const [settle, entry, ...later] = args;
  const settleMs = Number(settle);
  if (entry === undefined || !Number.isFinite(settleMs) || settleMs < 0) {
    throw new Error('usage: cold-start-probe SETTLE_MS ENTRY [FILE...]');
  }
  installCoreModule();
  const before = new Set(Object.keys(require.cache));
  const start = process.cpuUsage();
  const wallStart = performance.now();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  for (const file of [entry, ...later]) require(file);
  const load = process.cpuUsage(start);
  const loadWallMs = performance.now() - wallStart;
  const modules = Object.keys(require.cache).filter((key) => !before.has(key)).length;
  setTimeout(() => {
    const report: ColdStartProbeReport = {
      loadCpuMs: cpuMs(load),
      settledCpuMs: cpuMs(process.cpuUsage(start)),
      loadWallMs,
      modules,
      registered: registeredFunctions().length,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.exit(0);
  }, settleMs);
}

if (require.main === module) main(process.argv.slice(2));
