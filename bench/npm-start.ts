/**
 * The bench's `npm start` row: the embedded runtime's own overhead, measured on
 * a child process started exactly as `npm start` starts it (package.json `scripts.start`: its node
 * flags included) on a generated ledger of `npmStartOrders` orders x 10 entries. The child reports
 * its own peak RSS, CPU and event-loop idle time through a preload (./npm-start-probe) when it exits.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchTarget } from './results';
import { generateBenchWorkload } from './workload';
import type { ProbeReport } from './npm-start-probe';
import { repositoryRoot } from './repo-root';

export const NPM_START_ENTRIES_PER_ORDER = 10;
/** Targets: peak RSS under 1 GiB (on the default 20,000 orders x 10 entries), and wall time over the child's CPU time. */
export const NPM_START_MAX_RSS_BYTES = 1024 ** 3;
export const NPM_START_MAX_WALL_OVER_CPU = 1.5;

export interface NpmStartRow {
  orders: number;
  entries: number;
  /** The node flags of package.json's start script. */
  nodeFlags: string[];
  exitCode: number | null;
  wallSeconds: number;
  cpuSeconds: number;
  peakRssBytes: number;
  /** Share of the child's wall time its event loop waited with nothing to run (timers, holds). */
  eventLoopIdle: number;
}

/** `node FLAGS... SCRIPT` of package.json's start script, as npm would run it. */
export function startCommand(root: string): { flags: string[]; script: string } {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  const words = (pkg.scripts?.start ?? '').trim().split(/\s+/);
  const script = words.at(-1);
  if (words[0] !== 'node' || script === undefined || words.length < 2) {
    throw new Error(`package.json scripts.start is not "node [flags] script": ${pkg.scripts?.start ?? ''}`);
  }
  return { flags: words.slice(1, -1), script };
}

export async function runNpmStartRow(
  orders: number,
  seed: number,
  progress: (line: string) => void,
): Promise<NpmStartRow> {
  const root = repositoryRoot();
  const { flags, script } = startCommand(root);
  const probe = join(__dirname, 'npm-start-probe.js');
  if (!existsSync(probe)) throw new Error(`the npm start row runs from the build: ${probe} is missing`);
  const dir = mkdtempSync(join(tmpdir(), 'bench-npm-start-'));
  try {
    const workload = generateBenchWorkload({
      orders,
      entriesPerOrder: NPM_START_ENTRIES_PER_ORDER,
      batchSize: 100,
      activeOrders: 200,
      seed,
    });
    const input = join(dir, 'ledger.ndjson');
    writeFileSync(input, workload.ledger.map((message) => `${JSON.stringify(message)}\n`).join(''));
    const skus = new Set(workload.entries.flatMap((entry) => ('sku' in entry.data ? [entry.data.sku] : [])));
    const catalog = join(dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify(Object.fromEntries([...skus].map((sku) => [sku, 1_000_000_000]))));
    const probeFile = join(dir, 'probe.json');
    progress(
      `npm start on ${orders} orders x ${NPM_START_ENTRIES_PER_ORDER} entries, node ${flags.join(' ')} ...`,
    );
    const started = process.hrtime.bigint();
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [...flags, '--require', probe, join(root, script), '--input', input, '--catalog', catalog, '--quiet'],
        {
          cwd: root,
          env: { ...process.env, BENCH_NPM_START_PROBE: probeFile },
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
      child.on('error', reject);
      child.on('exit', (code) => resolve(code));
    });
    const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const report = JSON.parse(readFileSync(probeFile, 'utf8')) as ProbeReport;
    return {
      orders,
      entries: workload.entries.length,
      nodeFlags: flags,
      exitCode,
      wallSeconds,
      cpuSeconds: report.cpuSeconds,
      peakRssBytes: report.peakRssBytes,
      eventLoopIdle: report.eventLoopIdle,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function npmStartTargets(row: NpmStartRow | null): BenchTarget[] {
  if (row === null) return [];
  const ratio = row.wallSeconds / row.cpuSeconds;
  const size = `${row.orders} orders x ${NPM_START_ENTRIES_PER_ORDER}`;
  return [
    {
      target: `npm start on ${size}: exits 0, peak RSS under 1 GiB`,
      pass: row.exitCode === 0 && row.peakRssBytes < NPM_START_MAX_RSS_BYTES,
      detail: `exit ${row.exitCode}, peak RSS ${Math.round(row.peakRssBytes / 2 ** 20)} MiB`,
    },
    {
      target: `npm start on ${size}: wall time at most ${NPM_START_MAX_WALL_OVER_CPU}x its CPU time`,
      pass: ratio <= NPM_START_MAX_WALL_OVER_CPU,
      detail:
        `${row.wallSeconds.toFixed(1)} s wall, ${row.cpuSeconds.toFixed(1)} s CPU (${ratio.toFixed(2)}x); ` +
        `event loop idle ${Math.round(row.eventLoopIdle * 100)} % of wall (the rest over 1x is the machine's other load)`,
    },
  ];
}
