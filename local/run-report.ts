/**
 * The run report of docs/cli.md, assembled at the end of a run from what the embedded store and
 * broker hold (./report shapes it, ./account accounts for the input). It reads one order at a time,
 * so that a large run never holds all its documents parsed at once.
 */
import type { EmbeddedBroker } from './broker/broker';
import { linesOf } from '../src/domain/order';
import type { DocumentContainer } from '../src/services/ports';
import type { RecordedTelemetry } from './recording-telemetry';
import { QUEUE } from '../src/services/queues';
import {
  readOrderStates,
  readTransactionRecord,
  readTransactionRecords,
  type Outbox,
} from '../src/services/order-documents';
import { readSagaRecord } from '../src/services/fulfillment/saga-record';
import {
  buildAccount,
  heldIds,
  owedEffects,
  type AccountInput,
  type AccountSources,
  type OwedEffects,
} from './entry-account';
import { droppedLedgerMessages } from './app-queues';
import type { RecordConflicts } from './record-conflicts';
import { buildReport, reportOrder, reportParked, type Report, type ReportOrder } from './report';

export interface RunReportParts {
  broker: EmbeddedBroker;
  orders: DocumentContainer;
  telemetry: RecordedTelemetry;
  /** The input's ledger messages, read once for the account, in the order `sendLedger` sent them. */
  inputs: Iterable<AccountInput>;
  /** The store's refusals of the consumer's records that exist (./record-conflicts.ts). */
  recordConflicts?: RecordConflicts;
}

/**
 * Every order as the report shows it, without its lines and saga yet, and the outboxes that list
 * effects: the parsed documents (some 1 KB each) go as soon as these are made.
 */
async function reportHeaders(
  orders: DocumentContainer,
): Promise<{ reportOrders: ReportOrder[]; outboxes: Map<string, Outbox> }> {
  const documents = await readOrderStates(orders);
  const outboxes = new Map<string, Outbox>();
  for (const document of documents)
    if (document.outbox !== null) outboxes.set(document.orderId, document.outbox);
  return { reportOrders: documents.map((document) => reportOrder(document, [], null)), outboxes };
}

function sagaOf(record: Awaited<ReturnType<typeof readSagaRecord>>): ReportOrder['saga'] {
  return record === undefined ? null : { status: record.status, reason: record.reason };
}

/**
 * The account's sources that the broker holds and the orders' outboxes owe, read the same way by the
 * report and by the run's picture (local/cli/run-picture.ts).
 */
export function heldAndOwed(
  broker: EmbeddedBroker,
  outboxes: Iterable<readonly [orderId: string, outbox: Outbox | null]>,
  sagaStarted: ReadonlySet<string>,
): Omit<AccountSources, 'inputs' | 'recordOf'> {
  const parkedIds = heldIds(broker.peek(QUEUE.parked));
  const owed = new Map<string, OwedEffects>();
  for (const [orderId, outbox] of outboxes) {
    const effects = owedEffects(outbox, parkedIds, sagaStarted.has(orderId));
    if (effects !== undefined) owed.set(orderId, effects);
  }
  return {
    droppedLedgerMessages: droppedLedgerMessages(broker),
    owedEffects: owed,
    parkedIds,
    deadLetteredEntryIds: heldIds(broker.deadLetters(QUEUE.orderTransactions)),
    deadLetteredLedgerIds: new Set(broker.deadLetters(QUEUE.ledger).map((message) => message.messageId)),
  };
}

export async function buildRunReport(parts: RunReportParts): Promise<Report> {
  const { broker, orders, telemetry } = parts;
  const { reportOrders, outboxes } = await reportHeaders(orders);
  // One order at a time: its records and saga record are read, reported and let go, so that a
  // large run never holds every transaction record at once.
  for (const order of reportOrders) {
    order.lines = linesOf(await readTransactionRecords(orders, order.orderId));
    order.saga = sagaOf(await readSagaRecord(orders, order.orderId));
  }
  const stats = broker.stats();
  const deadLettered = broker.queueNames().flatMap((queue) =>
    broker.deadLetters(queue).map((message) => ({
      queue,
      messageId: message.messageId,
      sessionId: message.sessionId ?? null,
      reason: message.deadLetterReason,
      description: message.deadLetterErrorDescription,
      deliveryCount: message.deliveryCount,
    })),
  );
  const parked = broker.peek(QUEUE.parked).map(reportParked);
  const sagaStarted = new Set(
    reportOrders.filter((order) => order.saga !== null).map((order) => order.orderId),
  );
  const { account, deadLetteredAfterOutcome, ledgerMessages, ledgerMessageIds } = await buildAccount({
    inputs: parts.inputs,
    recordOf: (orderId, transactionId) => readTransactionRecord(orders, orderId, transactionId),
    ...heldAndOwed(broker, outboxes, sagaStarted),
  });
  return buildReport({
    orders: reportOrders,
    parked,
    deadLettered,
    stats: {
      messages: stats[QUEUE.ledger].sent + stats[QUEUE.orderTransactions].sent,
      applied: telemetry.total('entries.applied'),
      duplicates:
        telemetry.total('entries.duplicate') +
        stats[QUEUE.ledger].duplicatesDetected +
        stats[QUEUE.orderTransactions].duplicatesDetected,
      parked: parked.length,
      deadLettered: deadLettered.length,
      buffered: account.buffered,
      ledgerMessages,
      ledgerMessagesParkedWhole: new Set(
        parked
          .filter((m) => m.queue === QUEUE.ledger && ledgerMessageIds.has(m.messageId))
          .map((m) => m.messageId),
      ).size,
      redeliveries: Object.values(stats).reduce(
        (sum, queue) => sum + queue.abandoned + queue.lockExpired + queue.redeliveredByFault,
        0,
      ),
      account,
      deadLetteredAfterOutcome,
      recordConflicts: parts.recordConflicts ?? { duplicate: 0, digestMismatch: 0 },
      ...(telemetry.measured === undefined
        ? {}
        : { telemetry: await telemetry.measured.stats(account.entries) }),
    },
  });
}
