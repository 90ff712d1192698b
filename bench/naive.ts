/**
 * BASELINE FOR THE BENCH ONLY, WRONG ON PURPOSE: the naive designs the convoy is measured against.
 * Entries go to `order-transactions` created WITHOUT sessions and are taken by competing calls
 * (one call: "one consumer for everything"). Each call reads the order, applies the entry and
 * writes the order back with no etag and no inbox, so the last writer wins: entries of one order
 * race each other, a redelivered entry is applied again, and a write can erase another's.
 * It runs on the same embedded broker, store and Functions host, behind the real ledger processor.
 * Never wire this into the app.
 */
import { createEmbeddedStore, type EmbeddedStore } from '../local/store/document-store';
import { createRecordingTelemetry, type RecordedTelemetry } from '../local/recording-telemetry';
import { parseEntryMessage, type Entry } from '../src/domain/entry';
import type { OrderLine, OrderStatus } from '../src/domain/order';
import type { ServiceBusQueueFunction } from '../src/functions/definition';
import { ledgerProcessor, SERVICE_BUS_CONNECTION } from '../src/functions/ledger-processor';
import { QUEUE } from '../src/services/queues';
import type { Document, DocumentContainer } from '../src/services/ports';
import { createEmbeddedBroker, type EmbeddedBroker } from '../local/broker/broker';
import { createAppQueues, sendLedger, type LedgerInput } from '../local/app-queues';
import { faultRandom } from '../local/faults';
import { createFunctionsHost, type FunctionsHost, type HostLog } from '../local/functions-host';
import { registerAndCapture } from '../local/worker/register';

export const NAIVE_CONTAINER = 'naive-orders';

/** The order as the naive consumer keeps it: no transaction records, no etag checks. */
export interface NaiveOrder extends Document {
  orderId: string;
  status: OrderStatus;
  customerId: string | null;
  currency: string | null;
  lines: OrderLine[];
  total: number;
  /** Sequences applied, in the order this document saw them; the bench reads it, the consumer does not care. */
  applied: number[];
}

/** What one naive call did, for the bench to count. */
export interface NaiveApplication {
  orderId: string;
  transactionId: string;
  sequence: number;
  /** Whether the order the call read already had the entry's predecessor (always true at sequence 1). */
  predecessorApplied: boolean;
  roundTrips: number;
}

function emptyOrder(orderId: string): NaiveOrder {
  return {
    id: orderId,
    orderId,
    status: 'pending',
    customerId: null,
    currency: null,
    lines: [],
    total: 0,
    applied: [],
  };
}

/** Applies an entry to whatever state was read: no sequence check, no duplicate check. */
export function applyNaively(read: NaiveOrder | undefined, entry: Entry): NaiveOrder {
  const order: NaiveOrder = read
    ? { ...read, lines: [...read.lines], applied: [...read.applied, entry.sequence] }
    : { ...emptyOrder(entry.orderId), applied: [entry.sequence] };
  switch (entry.type) {
    case 'OrderCreated':
      if (order.status === 'pending') order.status = 'open';
      order.customerId = entry.data.customerId;
      order.currency = entry.data.currency;
      break;
    case 'TransactionAdded':
      order.lines.push({ transactionId: entry.transactionId, ...entry.data });
      break;
    case 'TransactionAmended': {
      const { targetTransactionId, quantity, unitPrice } = entry.data;
      order.lines = order.lines.map((line) =>
        line.transactionId === targetTransactionId
          ? { ...line, quantity: quantity ?? line.quantity, unitPrice: unitPrice ?? line.unitPrice }
          : line,
      );
      break;
    }
    case 'OrderDeleted':
      order.status = 'deleted';
      break;
  }
  if (entry.final === true && order.status !== 'deleted') order.status = 'submitted';
  order.total = order.lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0);
  return order;
}

/** The naive consumer: read, apply, write back unconditionally. Two round trips per delivery. */
export function naiveOrderTransactions(
  orders: DocumentContainer,
  onApplied: (application: NaiveApplication) => void,
): ServiceBusQueueFunction {
  return {
    name: 'naiveOrderTransactions',
    queueName: QUEUE.orderTransactions,
    connection: SERVICE_BUS_CONNECTION,
    isSessionsEnabled: false,
    handler: async (body) => {
      const parsed = parseEntryMessage(body);
      // The bench sends valid entries only; a baseline needs no parking.
      if (!parsed.ok) return;
      const entry = parsed.value;
      const read = await orders.read<NaiveOrder>(entry.orderId, entry.orderId);
      const order = applyNaively(read?.document, entry);
      await orders.upsert(order);
      onApplied({
        orderId: entry.orderId,
        transactionId: entry.transactionId,
        sequence: entry.sequence,
        predecessorApplied:
          entry.sequence === 1 || (read?.document.applied.includes(entry.sequence - 1) ?? false),
        roundTrips: 2,
      });
    },
  };
}

export interface NaivePipelineOptions {
  seed: number;
  /** The broker's `duplicate` fault, drawn from the seed exactly as the embedded app draws it. */
  duplicate: number;
  /** Competing calls on `order-transactions`; 1 is "one consumer for everything". */
  maxConcurrentCalls: number;
  storeLatencyMs: number;
  /** As the embedded app's `brokerLatencyMs`: what each receive, settlement and accept waits. */
  brokerLatencyMs?: number;
  lockDurationMs: number;
  sessionIdleTimeoutMs?: number;
  /** Wraps the naive orders container, e.g. to count its calls. */
  wrapOrders?: (orders: DocumentContainer) => DocumentContainer;
  onApplied: (application: NaiveApplication) => void;
  log?: HostLog;
}

export interface NaivePipeline {
  broker: EmbeddedBroker;
  store: EmbeddedStore;
  orders: DocumentContainer;
  host: FunctionsHost;
  telemetry: RecordedTelemetry;
  sendLedger(messages: readonly LedgerInput[]): Promise<void>;
  drain(): Promise<void>;
  stop(): Promise<void>;
}

/** The real ledger processor in front of the naive consumer, on the embedded broker, store and host. */
export function createNaivePipeline(options: NaivePipelineOptions): NaivePipeline {
  const queueOptions = { lockDurationMs: options.lockDurationMs };
  const broker = createEmbeddedBroker({
    random: faultRandom(options.seed, 'duplicate'),
    faults: { duplicate: options.duplicate },
  });
  // The naive designs consume order-transactions without sessions: competing consumers.
  createAppQueues(broker, queueOptions, { [QUEUE.orderTransactions]: { requiresSession: false } });

  const store = createEmbeddedStore({ latencyMs: options.storeLatencyMs });
  const orders = store.container(NAIVE_CONTAINER, '/orderId');
  const telemetry = createRecordingTelemetry();
  const host = createFunctionsHost({
    broker,
    functions: registerAndCapture({
      serviceBus: [
        ledgerProcessor({ sender: broker, telemetry }),
        naiveOrderTransactions(options.wrapOrders?.(orders) ?? orders, options.onApplied),
      ],
    }),
    // The ledger is one session: one pump serves it.
    maxConcurrentSessions: 1,
    maxConcurrentCalls: options.maxConcurrentCalls,
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs,
    log: options.log,
    brokerLatencyMs: options.brokerLatencyMs,
  });
  host.start();

  return {
    broker,
    store,
    orders,
    host,
    telemetry,
    sendLedger: (messages) => sendLedger(broker, messages),
    drain: () => host.whenIdle(),
    async stop() {
      await host.stop();
      broker.close();
    },
  };
}
