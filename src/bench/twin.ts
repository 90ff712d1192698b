/**
 * The runtime-only twin of a convoy run: the embedded app of the convoy row itself, built from the
 * same options (`convoyAppOptions`): the same broker, Functions host, durable client binding,
 * telemetry, store and clock, behind the same real ledger processor, with `orderTransactions`
 * registered under its own name, trigger and inputs but with a handler that only waits one store
 * round trip (what the convoy needs per entry) and does nothing else. A convoy row's speed and CPU
 * over its twin's say what the app's own code costs, on whatever the machine is doing meanwhile:
 * both share one JavaScript thread with the runtime, so a noisy neighbour slows both.
 */
import { performance } from 'node:perf_hooks';
import { parseEntryMessage } from '../domain/entry';
import { createEmbeddedApp, type EmbeddedApp, type LedgerInput } from '../embedded/app';
import type { BenchOptions } from './results';
import { convoyAppOptions, type RunSetup, type StoreWait } from './runs';

export interface TwinResult {
  /** Distinct entries handled. */
  entries: number;
  /** First ledger send to the last distinct entry handled. */
  seconds: number;
  messagesPerSecond: number;
  /** Process CPU time (all threads) per distinct entry, first ledger send to drained. */
  cpuMicrosPerMessage: number;
}

export async function runTwin(
  ledger: readonly LedgerInput[],
  options: BenchOptions,
  setup: RunSetup,
  storeWait: StoreWait,
): Promise<TwinResult> {
  const seen = new Set<string>();
  let lastAt = 0;
  // The handler runs only once the app exists (after the first send).
  const app: EmbeddedApp = createEmbeddedApp({
    ...convoyAppOptions(options, setup, storeWait),
    instrument: {
      orderTransactions: (definition) => ({
        ...definition,
        handler: async (body) => {
          const parsed = parseEntryMessage(body);
          if (!parsed.ok) return;
          // One round trip through the same store and clock: a point read of nothing.
          await app.orders.read(parsed.value.orderId, parsed.value.orderId);
          if (!seen.has(parsed.value.transactionId)) {
            seen.add(parsed.value.transactionId);
            lastAt = performance.now();
          }
        },
      }),
    },
  });
  try {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (const message of ledger) await app.sendLedger([message]);
    await app.drain();
    const used = process.cpuUsage(cpu);
    const seconds = (Math.max(lastAt, started) - started) / 1000;
    return {
      entries: seen.size,
      seconds,
      messagesPerSecond: seconds > 0 ? seen.size / seconds : 0,
      cpuMicrosPerMessage: seen.size > 0 ? (used.user + used.system) / seen.size : 0,
    };
  } finally {
    await app.stop();
  }
}
