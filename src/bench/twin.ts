/**
 * The runtime-only twin of a convoy run: the same embedded broker, Functions host, store and clock,
 * behind the same real ledger processor, with an `order-transactions` handler that only waits one
 * store round trip (what the convoy needs per entry) and does nothing else. A convoy row's speed
 * over its twin's says what the app's own code costs, on whatever the machine is doing meanwhile:
 * both share one JavaScript thread with the runtime, so a noisy neighbour slows both.
 */
import { performance } from 'node:perf_hooks';
import { createEmbeddedStore, type RoundTripWait } from '../adapters/embedded/document-store';
import { createRecordingTelemetry } from '../adapters/telemetry';
import { parseEntryMessage } from '../domain/entry';
import type { ServiceBusQueueFunction } from '../functions/definition';
import { ledgerProcessor, SERVICE_BUS_CONNECTION } from '../functions/ledger-processor';
import { QUEUE } from '../services/queues';
import { createEmbeddedBroker } from '../embedded/broker/broker';
import { createAppQueues, sendLedger, type LedgerInput } from '../embedded/queues';
import { faultRandom } from '../embedded/faults';
import { createFunctionsHost, type HostLog } from '../embedded/functions-host';
import { registerAndCapture } from '../embedded/worker/register';

export interface TwinOptions {
  seed: number;
  duplicate: number;
  maxConcurrentSessions: number;
  storeLatencyMs: number;
  storeWait?: RoundTripWait;
  lockDurationMs: number;
  sessionIdleTimeoutMs: number;
  log?: HostLog;
}

export interface TwinResult {
  /** Distinct entries handled. */
  entries: number;
  /** First ledger send to the last distinct entry handled. */
  seconds: number;
  messagesPerSecond: number;
}

export async function runTwin(ledger: readonly LedgerInput[], options: TwinOptions): Promise<TwinResult> {
  const broker = createEmbeddedBroker({
    random: faultRandom(options.seed, 'duplicate'),
    faults: { duplicate: options.duplicate },
  });
  createAppQueues(broker, { lockDurationMs: options.lockDurationMs });
  const store = createEmbeddedStore({ latencyMs: options.storeLatencyMs, wait: options.storeWait });
  const orders = store.container('twin-orders', '/orderId');
  const seen = new Set<string>();
  let lastAt = 0;
  const waitOnly: ServiceBusQueueFunction = {
    name: 'twinOrderTransactions',
    queueName: QUEUE.orderTransactions,
    connection: SERVICE_BUS_CONNECTION,
    isSessionsEnabled: true,
    handler: async (body) => {
      const parsed = parseEntryMessage(body);
      if (!parsed.ok) return;
      // One round trip through the same store and clock: a point read of nothing.
      await orders.read(parsed.value.orderId, parsed.value.orderId);
      if (!seen.has(parsed.value.transactionId)) {
        seen.add(parsed.value.transactionId);
        lastAt = performance.now();
      }
    },
  };
  const host = createFunctionsHost({
    broker,
    functions: registerAndCapture({
      serviceBus: [ledgerProcessor({ sender: broker, telemetry: createRecordingTelemetry() }), waitOnly],
    }),
    maxConcurrentSessions: options.maxConcurrentSessions,
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs,
    log: options.log,
  });
  host.start();
  try {
    const started = performance.now();
    await sendLedger(broker, ledger);
    await host.whenIdle();
    const seconds = (Math.max(lastAt, started) - started) / 1000;
    return { entries: seen.size, seconds, messagesPerSecond: seconds > 0 ? seen.size / seconds : 0 };
  } finally {
    await host.stop();
    broker.close();
  }
}
