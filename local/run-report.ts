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
  readTransactionRecord,
  readTransactionRecords,
  type OrderDocument,
} from '../src/services/order-documents';
import { readSagaRecord } from '../src/services/fulfillment/saga-record';
import { buildAccount, heldIds, ordersWithEffectsPending, type AccountInput } from './entry-account';
import { buildReport, reportOrder, reportParked, type Report, type ReportOrder } from './report';

export interface RunReportParts {
  broker: EmbeddedBroker;
  orders: DocumentContainer;
  telemetry: RecordedTelemetry;
  /** The input's ledger messages, read once for the account. */
  inputs: Iterable<AccountInput>;
}

/**
 * Every order as the report shows it, without its lines and saga yet, and the orders whose outbox
 * still holds effects: the parsed documents (some 1 KB each) go as soon as these are made.
 */
async function reportHeaders(
  orders: DocumentContainer,
): Promise<{ reportOrders: ReportOrder[]; effectsPending: Set<string> }> {
  const documents = (await orders.query<OrderDocument>({ where: { kind: 'order' } })).map(
    (stored) => stored.document,
  );
  return {
    reportOrders: documents.map((document) => reportOrder(document, [], null)),
    effectsPending: ordersWithEffectsPending(documents),
  };
}

function sagaOf(record: Awaited<ReturnType<typeof readSagaRecord>>): ReportOrder['saga'] {
  return record === undefined ? null : { status: record.status, reason: record.reason };
}

export async function buildRunReport(parts: RunReportParts): Promise<Report> {
  const { broker, orders, telemetry } = parts;
  const { reportOrders, effectsPending } = await reportHeaders(orders);
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
  const parkedMessages = broker.peek(QUEUE.parked);
  const parked = parkedMessages.map(reportParked);
  const { account, twoOutcomes, ledgerMessages, ledgerMessageIds } = await buildAccount({
    inputs: parts.inputs,
    recordOf: (orderId, transactionId) => readTransactionRecord(orders, orderId, transactionId),
    effectsPending,
    parkedIds: heldIds(parkedMessages),
    deadLetteredEntryIds: heldIds(broker.deadLetters(QUEUE.orderTransactions)),
    deadLetteredLedgerIds: new Set(
      deadLettered.filter((m) => m.queue === QUEUE.ledger).map((m) => m.messageId),
    ),
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
      entriesWithTwoOutcomes: twoOutcomes,
    },
  });
}
