/**
 * The runtime-only twin of a convoy run: the embedded app of the convoy row itself, built from the
 * same options (`convoyAppOptions`): the same broker, Functions host, durable client binding,
 * telemetry, store and clock, behind the same real ledger processor, with `orderTransactions`
 * registered under its own name, trigger and inputs but with a handler that only waits one store
 * round trip (what the convoy needs per entry) and does nothing else. A convoy row's speed and CPU
 * over its twin's say what the app's own code costs, on whatever the machine is doing meanwhile:
 * both share one JavaScript thread with the runtime, so a noisy neighbour slows both.
 *
 * The twin is measured by the same instruments as its row (./recorder): its round trip goes through
 * the counting container, its telemetry through the observing one, and each entry it handles is
 * recorded as applied, so what the row costs beyond it is the app's, not the bench's own counting.
 */
import { performance } from 'node:perf_hooks';
import { parseEntryMessage } from '../src/domain/entry';
import { createEmbeddedApp, type EmbeddedApp } from '../local/app';
import type { DocumentContainer } from '../src/services/ports';
import type { BenchOptions } from './results';
import { convoyAppOptions, type RunSetup } from './runs';
import { countingContainer, createRecorder, observingTelemetry } from './recorder';
import type { BenchWorkload } from './workload';

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
  workload: BenchWorkload,
  options: BenchOptions,
  setup: RunSetup,
): Promise<TwinResult> {
  const recorder = createRecorder(workload);
  let orders: DocumentContainer | undefined;
  // The handler runs only once the app exists (after the first send).
  const app: EmbeddedApp = createEmbeddedApp({
    ...convoyAppOptions(options, setup),
    instrument: {
      telemetry: (telemetry) => observingTelemetry(telemetry, recorder),
      orderTransactions: (definition) => ({
        ...definition,
        handler: async (body) => {
          const parsed = parseEntryMessage(body);
          if (!parsed.ok) return;
          const { orderId, sequence } = parsed.value;
          // One round trip through the same store and clock: a point read of nothing.
          orders ??= countingContainer(app.orders, recorder);
          await orders.read(orderId, orderId);
          // Entries of one order come in sequence, one session at a time: the first delivery of
          // each is applied, in order, as the row's would be.
          if (recorder.applications(orderId, sequence) === 0) {
            recorder.applied(orderId, sequence, undefined, performance.now());
            recorder.outcome(orderId, 'first');
          } else {
            recorder.outcome(orderId, 'duplicate');
          }
        },
      }),
    },
  });
  try {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (const message of workload.ledger) await app.sendLedger([message]);
    await app.drain();
    const used = process.cpuUsage(cpu);
    const entries = recorder.result().messages;
    const seconds = (Math.max(recorder.lastAppliedAt(), started) - started) / 1000;
    return {
      entries,
      seconds,
      messagesPerSecond: seconds > 0 ? entries / seconds : 0,
      cpuMicrosPerMessage: entries > 0 ? (used.user + used.system) / entries : 0,
    };
  } finally {
    await app.stop();
  }
}
