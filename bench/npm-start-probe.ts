/**
 * Preloaded (`--require`) into the `npm start` child of the bench's npm-start row: when the child
 * exits, writes its peak RSS, CPU time and event-loop idle share to the file the bench names in
 * BENCH_NPM_START_PROBE. Does nothing when that variable is unset.
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export interface ProbeReport {
  peakRssBytes: number;
  cpuSeconds: number;
  eventLoopIdle: number;
}

const file = process.env.BENCH_NPM_START_PROBE;
if (file !== undefined && file !== '') {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    const loop = performance.eventLoopUtilization();
    const report: ProbeReport = {
      // maxRSS is in kilobytes (getrusage ru_maxrss).
      peakRssBytes: usage.maxRSS * 1024,
      cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
      eventLoopIdle: loop.idle / (loop.idle + loop.active),
    };
    writeFileSync(file, JSON.stringify(report));
  });
}
