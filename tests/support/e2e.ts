/** Builders and runners shared by the end-to-end suites. */
import { resolve } from 'node:path';
import type { Entry } from '../../src/domain/entry';
import { messageIdOf } from './domain';
import {
  createEmbeddedApp,
  type EmbeddedApp,
  type EmbeddedAppOptions,
  type LedgerInput,
} from '../../local/app';
import type { FunctionsHostStats } from '../../local/functions-host';
import type { QueueStats } from '../../local/broker/broker';
import type { Report } from '../../local/report';
import type { OutageName } from '../../local/faults';
import type { DeliveredMessage, TelemetryProperties } from '../../src/services/ports';
import { expectAccountAddsUp } from './account';

export const SAMPLE_PATH = resolve(__dirname, '..', '..', 'samples', 'ledger.ndjson');

export const quiet = (): void => {};

/**
 * Short locks so that a crashed delivery comes back soon, yet above the pauses of the HTTP durable
 * client under a loaded jest (a lost lock redelivers); the convoy's clock 1000 times faster, so
 * that the handlers' backoff (seconds to minutes) takes milliseconds; no log output.
 */
export const FAST: EmbeddedAppOptions = { lockDurationMs: 200, timeScale: 1000, log: quiet };

export function created(orderId: string, transactionId: string, sequence = 1, final = false): Entry {
  return {
    transactionId,
    orderId,
    sequence,
    type: 'OrderCreated',
    ...(final ? { final: true as const } : {}),
    // Within the customerId bound (100) whatever the orderId.
    data: { customerId: `C-${orderId}`.slice(0, 100), currency: 'EUR' },
  };
}

export function added(
  orderId: string,
  transactionId: string,
  sequence: number,
  quantity = 1,
  unitPrice = 100,
  final = false,
): Entry {
  return {
    transactionId,
    orderId,
    sequence,
    type: 'TransactionAdded',
    ...(final ? { final: true as const } : {}),
    data: { sku: `SKU-${transactionId}`, quantity, unitPrice },
  };
}

/** An amendment of `targetTransactionId`'s line: its new quantity, or the fields it changes. */
export function amended(
  orderId: string,
  transactionId: string,
  sequence: number,
  targetTransactionId: string,
  change: number | { quantity?: number; unitPrice?: number },
  final = false,
): Entry {
  return {
    transactionId,
    orderId,
    sequence,
    type: 'TransactionAmended',
    ...(final ? { final: true as const } : {}),
    data: { targetTransactionId, ...(typeof change === 'number' ? { quantity: change } : change) },
  };
}

export function deleted(orderId: string, transactionId: string, sequence: number): Entry {
  return { transactionId, orderId, sequence, type: 'OrderDeleted', data: { reason: 'changed mind' } };
}

/** The `messageId` an entry travels under on `order-transactions` (docs/messages.md (the ledger message)). */
/** The messageId the ledger processor gives an entry: one definition, in the domain tests' support. */
export { messageIdOf };

export function ledger(batchId: string, entries: readonly unknown[]): LedgerInput {
  return { messageId: batchId, sessionId: 'main', body: { batchId, entries } };
}

/** The message the ledger processor would send for this entry, for sending it straight to the queue. */
export function entryMessageFor(
  entry: Entry,
  sessionId: string = entry.orderId,
  batchId = 'manual',
): {
  messageId: string;
  sessionId: string;
  body: Entry;
  applicationProperties: Record<string, string | number | boolean>;
} {
  return {
    messageId: messageIdOf(entry),
    sessionId,
    body: entry,
    applicationProperties: {
      transactionId: entry.transactionId,
      sequence: entry.sequence,
      final: entry.final === true,
      batchId,
    },
  };
}

/** An entry's message as the consumer receives it on its first delivery. */
export function deliveredEntry(entry: Entry): DeliveredMessage {
  return {
    ...entryMessageFor(entry),
    deliveryCount: 1,
    sequenceNumber: entry.sequence,
    correlationId: undefined,
  };
}

export interface RecordedMetric {
  name: string;
  value: number;
  properties: TelemetryProperties;
}

/** Observes every metric the app records, in the order recorded, without changing what it records. */
export function observeMetrics(app: EmbeddedApp): RecordedMetric[] {
  const seen: RecordedMetric[] = [];
  const record = app.telemetry.metric.bind(app.telemetry);
  app.telemetry.metric = (name, value, properties = {}) => {
    seen.push({ name, value, properties });
    record(name, value, properties);
  };
  return seen;
}

export interface RunResult {
  report: Report;
  host: FunctionsHostStats;
  broker: Record<string, QueueStats>;
  buffered: number;
  submitted: string[];
  /** Calls each outage failed. */
  outages: Record<OutageName, number>;
  /** Transient failures the Service Bus functions retried inside the delivery. */
  retried: number;
}

/** Runs the inputs through a fresh embedded app to the end and stops it. */
export async function runToEnd(
  inputs: readonly LedgerInput[],
  options: EmbeddedAppOptions,
): Promise<RunResult> {
  const app = createEmbeddedApp(options);
  try {
    await app.sendLedger(inputs);
    await app.drain();
    const report = await app.report();
    // Every e2e run holds the account's identity.
    expectAccountAddsUp(report);
    return {
      report,
      host: app.host.stats(),
      broker: app.broker.stats(),
      buffered: app.telemetry.total('entries.buffered'),
      submitted: [...app.submitted],
      outages: Object.fromEntries(app.outages.map((outage) => [outage.name, outage.injected()])) as Record<
        OutageName,
        number
      >,
      retried: app.telemetry.total('handler.retried'),
    };
  } finally {
    await app.stop();
  }
}
