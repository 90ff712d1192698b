/**
 * Sequential convoy and idempotent consumer, end to end (docs/messages.md): ledger batches through the
 * embedded broker and Functions host, the real function definitions, the embedded document store.
 */
import { HANDLER_BACKOFF, type Backoff } from '../../src/services/backoff';
import { scaledClock } from '../../local/outages';
import { randomUUID } from 'node:crypto';
import { InvocationContext } from '@azure/functions';
import { createEmbeddedStore } from '../../local/store/document-store';
import { createRecordingTelemetry } from '../../local/recording-telemetry';
import { TransientError } from '../../src/domain/errors';
import type { Entry } from '../../src/domain/entry';
import { ledgerProcessor } from '../../src/functions/ledger-processor';
import { orderTransactions } from '../../src/functions/order-transactions';
import {
  createEmbeddedBroker,
  MAX_DELIVERY_COUNT_EXCEEDED,
  type EmbeddedBroker,
} from '../../local/broker/broker';
import { createEmbeddedApp, type EmbeddedApp } from '../../local/app';
import { createFunctionsHost, type FunctionsHost } from '../../local/functions-host';
import { registerAndCapture } from '../../local/worker/register';
import type { Report, ReportOrder } from '../../local/report';
import { createOrderCache } from '../../src/services/convoy/order-cache';
import {
  ORDER_HEADER_ID,
  ORDERS_CONTAINER,
  ORDERS_PARTITION_KEY_PATH,
  readOrderLines,
  readTransactionRecords,
  type TransactionDocument,
  type OrderDocument,
} from '../../src/services/order-documents';
import type {
  Document,
  DocumentContainer,
  FulfillmentInput,
  FulfillmentStarter,
  MessageSender,
  OutgoingMessage,
} from '../../src/services/ports';
import { QUEUE } from '../../src/services/queues';
import {
  added,
  amended,
  created,
  deleted,
  entryMessageFor,
  ledger,
  messageIdOf,
  observeMetrics,
  quiet,
  type RecordedMetric,
} from '../support/e2e';
import { parkIdFor } from '../../src/services/convoy/parking';
import { expectAccountAddsUp } from '../support/account';

function orderOf(report: Report, orderId: string): ReportOrder {
  const order = report.orders.find((candidate) => candidate.orderId === orderId);
  if (order === undefined) throw new Error(`order ${orderId} is not in the report`);
  return order;
}

const lineIds = (order: ReportOrder): string[] => order.lines.map((line) => line.transactionId);

describe('sequential convoy: per-order FIFO with sessions in parallel', () => {
  const ORDERS = 24;
  const ENTRIES = 8;
  let app: EmbeddedApp;
  let metrics: RecordedMetric[];
  let report: Report;

  beforeAll(async () => {
    app = createEmbeddedApp({
      maxConcurrentSessions: 8,
      storeLatencyMs: 1,
      lockDurationMs: 200,
      timeScale: 1000,
      log: quiet,
    });
    metrics = observeMetrics(app);
    // Round robin over the orders, sequence by sequence, cut into batches of 10: every batch
    // interleaves several orders and every order spreads over many batches.
    const stream: Entry[] = [];
    for (let sequence = 1; sequence <= ENTRIES; sequence++) {
      for (let o = 0; o < ORDERS; o++) {
        const orderId = `O-${o}`;
        const transactionId = `T-${o}-${sequence}`;
        stream.push(
          sequence === 1
            ? created(orderId, transactionId)
            : added(orderId, transactionId, sequence, sequence, 10 * o + 1, sequence === ENTRIES),
        );
      }
    }
    const batches = [];
    for (let i = 0; i * 10 < stream.length; i++) {
      batches.push(ledger(`B-${i}`, stream.slice(i * 10, i * 10 + 10)));
    }
    await app.sendLedger(batches);
    await app.drain();
    report = await app.report();
    expectAccountAddsUp(report);
  });

  afterAll(async () => {
    await app.stop();
  });

  it('overlaps sessions of different orders', () => {
    const stats = app.host.stats();
    expect(stats.maxConcurrentSessions).toBeGreaterThan(1);
    expect(stats.byFunction.orderTransactions.maxConcurrentSessions).toBeGreaterThan(1);
    expect(stats.byFunction.orderTransactions.maxConcurrentSessions).toBeLessThanOrEqual(8);
  });

  it('delivers each order in sequence order: every entry applied on arrival, none buffered', () => {
    const applied = metrics.filter((metric) => metric.name === 'entries.applied');
    expect(metrics.filter((metric) => metric.name === 'entries.buffered')).toEqual([]);
    expect(applied.every((metric) => metric.value === 1)).toBe(true);
    for (let o = 0; o < ORDERS; o++) {
      const sequences = applied
        .filter((metric) => metric.properties.orderId === `O-${o}`)
        .map((metric) => metric.properties.sequence);
      expect(sequences).toEqual(Array.from({ length: ENTRIES }, (_, i) => i + 1));
    }
  });

  it('interleaves the orders in time: applications of different orders alternate', () => {
    const orderIds = metrics
      .filter((metric) => metric.name === 'entries.applied')
      .map((metric) => metric.properties.orderId);
    let switches = 0;
    for (let i = 1; i < orderIds.length; i++) if (orderIds[i] !== orderIds[i - 1]) switches += 1;
    // Serving one order to its end before the next would switch ORDERS - 1 times.
    expect(switches).toBeGreaterThan(ORDERS);
  });

  it('ends with every order complete, its lines in sequence order', () => {
    expect(report.orders).toHaveLength(ORDERS);
    for (let o = 0; o < ORDERS; o++) {
      const order = orderOf(report, `O-${o}`);
      expect(order.status).toBe('submitted');
      expect(order.appliedSequence).toBe(ENTRIES);
      expect(order.waitingFor).toBeNull();
      expect(lineIds(order)).toEqual(Array.from({ length: ENTRIES - 1 }, (_, i) => `T-${o}-${i + 2}`));
    }
    expect(report.parked).toEqual([]);
    expect(report.deadLettered).toEqual([]);
    expect(report.stats.applied).toBe(ORDERS * ENTRIES);
    expect(new Set(app.submitted).size).toBe(ORDERS);
  });
});

describe('idempotent consumer: two consumers racing on copies of one message', () => {
  interface Consumer {
    outcomes: string[];
    deliver(message: ReturnType<typeof entryMessageFor>): Promise<void>;
    applied(): number;
  }

  let orders: DocumentContainer;
  let started: FulfillmentInput[];
  let sent: OutgoingMessage[];

  beforeEach(() => {
    orders = createEmbeddedStore({ latencyMs: 2 }).container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH, {
      defaultTtlSeconds: -1,
    });
    started = [];
    sent = [];
  });

  /** One consumer process: its own order cache, so it believes it owns every order it has seen. */
  function consumer(): Consumer {
    const telemetry = createRecordingTelemetry();
    const sender: MessageSender = {
      async send(_queue, messages) {
        sent.push(...messages);
      },
    };
    const fulfillment: FulfillmentStarter = {
      async start(input) {
        started.push(input);
      },
    };
    const cache = createOrderCache();
    const definition = orderTransactions(() => ({
      orders,
      sender,
      telemetry,
      cache,
      fulfillment,
    }));
    const outcomes: string[] = [];
    return {
      outcomes,
      applied: () => telemetry.total('entries.applied'),
      async deliver(message) {
        const context = new InvocationContext({
          functionName: definition.name,
          invocationId: randomUUID(),
          triggerMetadata: {
            messageId: message.messageId,
            sessionId: message.sessionId,
            deliveryCount: 1,
            sequenceNumber: 1,
            enqueuedTimeUtc: new Date().toISOString(),
            applicationProperties: message.applicationProperties,
          },
        });
        const tracedBefore = telemetry.traces.length;
        await definition.handler(message.body, context);
        for (const { message: text } of telemetry.traces.slice(tracedBefore)) {
          if (text.startsWith('order transaction ')) outcomes.push(text.slice('order transaction '.length));
        }
      },
    };
  }

  async function transactionRecords(orderId: string, transactionId: string): Promise<Document[]> {
    const records = await orders.query<TransactionDocument>({
      partitionKey: orderId,
      where: { kind: 'transaction' },
    });
    return records
      .map((stored) => stored.document)
      .filter((record) => record.transactionId === transactionId);
  }

  it('the creating entry: one applied, one duplicate, one order, one transaction record', async () => {
    const [a, b] = [consumer(), consumer()];
    const message = entryMessageFor(created('O-R', 'T-R1'));

    await Promise.all([a.deliver(message), b.deliver(message)]);

    expect([...a.outcomes, ...b.outcomes].sort()).toEqual(['applied', 'duplicate']);
    expect(a.applied() + b.applied()).toBe(1);
    const stored = await orders.read<OrderDocument>('O-R', ORDER_HEADER_ID);
    expect(stored?.document).toMatchObject({ status: 'open', appliedSequence: 1, customerId: 'C-O-R' });
    expect((await readTransactionRecords(orders, 'O-R')).map((record) => record.transactionId)).toEqual([
      'T-R1',
    ]);
    expect(await transactionRecords('O-R', 'T-R1')).toHaveLength(1);
    expect(sent).toEqual([]);
  });

  it('a later entry, both caches holding the order: applied once, the order submitted once', async () => {
    const [a, b] = [consumer(), consumer()];
    const first = entryMessageFor(created('O-S', 'T-S1'));
    await a.deliver(first);
    // The same message again through the other consumer: a duplicate that leaves the order in its cache.
    await b.deliver(first);
    expect([...a.outcomes, ...b.outcomes]).toEqual(['applied', 'duplicate']);

    const line = entryMessageFor(added('O-S', 'T-S2', 2, 3, 250, true));
    await Promise.all([a.deliver(line), b.deliver(line)]);

    expect([...a.outcomes.slice(1), ...b.outcomes.slice(1)].sort()).toEqual(['applied', 'duplicate']);
    expect(a.applied() + b.applied()).toBe(2);
    const stored = await orders.read<OrderDocument>('O-S', ORDER_HEADER_ID);
    expect(stored?.document).toMatchObject({ status: 'submitted', appliedSequence: 2, total: 750 });
    expect(await readOrderLines(orders, 'O-S')).toEqual([
      { transactionId: 'T-S2', sku: 'SKU-T-S2', quantity: 3, unitPrice: 250 },
    ]);
    expect(await transactionRecords('O-S', 'T-S2')).toHaveLength(1);
    // The winner starts the saga; the loser (a duplicate) redoes the stored outbox, which keeps a saga
    // start alone, so it asks exactly once more: the instance id makes that a no-op. Only this order.
    expect(started.length).toBe(2);
    expect(new Set(started.map((input) => `${input.orderId}:${input.total}`))).toEqual(new Set(['O-S:750']));
  });
});

describe('each outcome of docs/messages.md (the order of checks), end to end', () => {
  const a1 = created('O-A', 'T-A1');
  const a2 = added('O-A', 'T-A2', 2, 2, 1250);
  const a3 = added('O-A', 'T-A3', 3, 1, 999, true);
  const b1 = created('O-B', 'T-B1');
  const b2 = added('O-B', 'T-B2', 2, 1, 100);
  const b2x = added('O-B', 'T-B2', 2, 5, 100);
  const b3 = added('O-B', 'T-B3', 3, 1, 100, true);
  const c1 = created('O-C', 'T-C1');
  const c2 = added('O-C', 'T-C2', 2, 1, 100);
  const c2x = added('O-C', 'T-C2X', 2, 7, 100);
  const d1 = created('O-D', 'T-D1');
  const d2 = added('O-D', 'T-D2', 2, 1, 200);
  const d3 = added('O-D', 'T-D3', 3, 1, 300, true);
  const e1 = created('O-E', 'T-E1');
  const e2 = amended('O-E', 'T-E2', 2, 'T-NOPE', 3);
  const e3 = added('O-E', 'T-E3', 3, 1, 100, true);
  const f1 = created('O-F', 'T-F1');
  const f2 = created('O-F', 'T-F2', 2, true);
  const g1 = created('O-G', 'T-G1');
  const g2 = added('O-G', 'T-G2', 2, 1, 100, true);
  const g3 = added('O-G', 'T-G3', 3, 1, 100);
  const h1 = created('O-H', 'T-H1');
  const h2 = deleted('O-H', 'T-H2', 2);
  const h3 = added('O-H', 'T-H3', 3, 1, 100);
  const i1 = added('O-I', 'T-I1', 1, 1, 100);
  const j1 = created('O-J', 'T-J1');
  const j2 = added('O-J', 'T-J2', 2, 1, 100);
  const j3 = amended('O-J', 'T-J3', 3, 'T-NOPE', 1);
  const misrouted = added('O-N', 'T-M1', 1, 1, 100);
  const p1 = created('O-P', 'T-P1');
  const p2 = added('O-P', 'T-P2', 2, 1, 100, true);
  const q1 = created('O-Q', 'T-Q1');
  const q2 = added('O-Q', 'T-Q2', 2, 1, 100);
  const q3 = added('O-Q', 'T-Q3', 3, 1, 100, true);
  const invalidEntry = {
    transactionId: 'T-BAD1',
    orderId: 'O-A',
    sequence: 4,
    type: 'TransactionAdded',
    data: { sku: 'SKU-X', quantity: 0, unitPrice: 1 },
  };
  const poisonBody = '{"transactionId": "T-P9", "orderId": "O-P", ';
  const replayId = 'replay:T-A2';

  let app: EmbeddedApp;
  let metrics: RecordedMetric[];
  let before: Report;
  let after: Report;

  beforeAll(async () => {
    app = createEmbeddedApp({ lockDurationMs: 50, storeLatencyMs: 1, timeScale: 1000, log: quiet });
    metrics = observeMetrics(app);
    await app.sendLedger([
      ledger('B-1', [a1, b1, c1, d1, e1, f1, g1, h1, i1, j1, a2, b2, c2, d3, j3, j2]),
      ledger('B-2', [a3, invalidEntry, e2, e3, f2, g2, b3, g3, h2, h3]),
      ledger('B-3', [a2, b2x, c2x]),
      { messageId: 'B-BROKEN', sessionId: 'main', body: 'this is not JSON {' },
      { messageId: 'B-NOARRAY', sessionId: 'main', body: { batchId: 'B-NOARRAY', entries: 'x' } },
    ]);
    await app.broker.send(QUEUE.orderTransactions, [entryMessageFor(misrouted, 'O-M')]);
    await app.broker.send(QUEUE.orderTransactions, [
      entryMessageFor(p1),
      {
        messageId: 'P-POISON',
        sessionId: 'O-P',
        body: poisonBody,
        applicationProperties: { batchId: 'manual' },
      },
      entryMessageFor(p2),
    ]);
    await app.broker.send(QUEUE.orderTransactions, [
      entryMessageFor(q1),
      entryMessageFor(q3),
      entryMessageFor(q2),
    ]);
    await app.drain();
    before = await app.report();
    expectAccountAddsUp(before);

    await app.sendLedger([ledger('B-4', [d2])]);
    // A copy of an applied entry under another messageId: past the broker's duplicate detection.
    await app.broker.send(QUEUE.orderTransactions, [{ ...entryMessageFor(a2), messageId: replayId }]);
    await app.drain();
    after = await app.report();
    expectAccountAddsUp(after);
  });

  afterAll(async () => {
    await app.stop();
  });

  it('parks exactly the messages that can never succeed, each once, with its reason', () => {
    const parked = after.parked.map(({ queue, messageId, sessionId, transactionId, reason }) => ({
      queue,
      messageId,
      sessionId,
      transactionId,
      reason,
    }));
    const onOrders = (entry: Entry, reason: string, sessionId = entry.orderId) => ({
      queue: QUEUE.orderTransactions,
      messageId: messageIdOf(entry),
      sessionId,
      transactionId: entry.transactionId,
      reason,
    });
    const expected = [
      {
        queue: QUEUE.ledger,
        messageId: parkIdFor('invalid', invalidEntry),
        sessionId: 'main',
        transactionId: 'T-BAD1',
        reason: 'invalid',
      },
      {
        queue: QUEUE.ledger,
        messageId: 'B-BROKEN',
        sessionId: 'main',
        transactionId: null,
        reason: 'invalid',
      },
      {
        queue: QUEUE.ledger,
        messageId: 'B-NOARRAY',
        sessionId: 'main',
        transactionId: null,
        reason: 'invalid',
      },
      onOrders(b2x, 'digest-mismatch'),
      onOrders(c2x, 'sequence-conflict'),
      onOrders(e2, 'rejected'),
      onOrders(f2, 'rejected'),
      onOrders(g3, 'rejected'),
      onOrders(h3, 'rejected'),
      onOrders(i1, 'rejected'),
      onOrders(j3, 'rejected'),
      onOrders(misrouted, 'misrouted', 'O-M'),
      {
        queue: QUEUE.orderTransactions,
        messageId: 'P-POISON',
        sessionId: 'O-P',
        transactionId: null,
        reason: 'invalid',
      },
    ];
    const key = (p: { queue: string; messageId: string }): string => `${p.queue} ${p.messageId}`;
    expect([...parked].sort((x, y) => key(x).localeCompare(key(y)))).toEqual(
      [...expected].sort((x, y) => key(x).localeCompare(key(y))),
    );
    expect(after.stats.parked).toBe(expected.length);
    expect(after.deadLettered).toEqual([]);
  });

  it('applied: entries take their slots in order and the final one submits the order', () => {
    const order = orderOf(after, 'O-A');
    expect(order).toMatchObject({
      status: 'submitted',
      appliedSequence: 3,
      total: 2 * 1250 + 999,
      waitingFor: null,
    });
    expect(lineIds(order)).toEqual(['T-A2', 'T-A3']);
  });

  it('invalid entry in a valid batch: parked on its own, naming the field, the batch goes on', () => {
    const parked = after.parked.find((p) => p.messageId === parkIdFor('invalid', invalidEntry));
    expect(parked?.description).toMatch(/entries\[1\]\.data\.quantity/);
    // The rest of B-2 went on: a3, e3, g2, b3 were applied.
    expect(orderOf(after, 'O-A').appliedSequence).toBe(3);
    expect(orderOf(after, 'O-B').status).toBe('submitted');
  });

  it('invalid whole batch: parked whole under the ledger messageId, saying why', () => {
    expect(after.parked.find((p) => p.messageId === 'B-BROKEN')?.description).toMatch(/JSON/);
    expect(after.parked.find((p) => p.messageId === 'B-NOARRAY')?.description).toMatch(/entries/);
  });

  it('duplicate: an exact copy has no effect and is counted', () => {
    // The copy in B-3 has the same messageId: dropped by the broker's duplicate detection.
    expect(app.broker.stats()[QUEUE.orderTransactions].duplicatesDetected).toBe(1);
    // The copy under another messageId reaches the consumer, which finds the transaction applied.
    expect(
      metrics.filter((m) => m.name === 'entries.duplicate' && m.properties.messageId === replayId),
    ).toHaveLength(1);
    expect(after.stats.duplicates).toBe(2);
    expect(orderOf(after, 'O-A').lines).toEqual([
      { transactionId: 'T-A2', sku: 'SKU-T-A2', quantity: 2, unitPrice: 1250 },
      { transactionId: 'T-A3', sku: 'SKU-T-A3', quantity: 1, unitPrice: 999 },
    ]);
    // B-4's d2 applied itself and the d3 it released; the replay applied nothing.
    expect(after.stats.applied).toBe(before.stats.applied + 2);
  });

  it('digest-mismatch: the reused transactionId is parked with an alert and changes nothing', () => {
    expect(orderOf(after, 'O-B').lines.map((line) => line.quantity)).toEqual([1, 1]);
    expect(after.parked.find((p) => p.reason === 'digest-mismatch')?.description).toMatch(/T-B2/);
    expect(
      app.telemetry.events.filter(
        (event) => event.name === 'Alert.DigestMismatch' && event.properties.transactionId === 'T-B2',
      ),
    ).toHaveLength(1);
  });

  it('sequence-conflict: a second transaction for a taken slot is parked, the slot keeps its first', () => {
    expect(orderOf(after, 'O-C')).toMatchObject({ status: 'open', appliedSequence: 2 });
    expect(orderOf(after, 'O-C').lines.map((line) => [line.transactionId, line.quantity])).toEqual([
      ['T-C2', 1],
    ]);
  });

  it('buffered: waits for the gap, reported as waitingFor, then applied in order when it fills', () => {
    expect(orderOf(before, 'O-D')).toMatchObject({
      status: 'open',
      appliedSequence: 1,
      waitingFor: 2,
      lines: [],
    });
    expect(before.stats.buffered).toBe(1);
    expect(orderOf(after, 'O-D')).toMatchObject({
      status: 'submitted',
      appliedSequence: 3,
      waitingFor: null,
    });
    expect(lineIds(orderOf(after, 'O-D'))).toEqual(['T-D2', 'T-D3']);
  });

  it('an out-of-order arrival is buffered and applied when the gap fills', () => {
    const buffered = metrics.filter((m) => m.name === 'entries.buffered' && m.properties.orderId === 'O-Q');
    expect(buffered.map((m) => [m.properties.messageId, m.properties.waitingFor])).toEqual([
      [messageIdOf(q3), 2],
    ]);
    const applied = metrics.filter((m) => m.name === 'entries.applied' && m.properties.orderId === 'O-Q');
    expect(applied.map((m) => [m.properties.messageId, m.value])).toEqual([
      [messageIdOf(q1), 1],
      [messageIdOf(q2), 2],
    ]);
    expect(orderOf(after, 'O-Q')).toMatchObject({
      status: 'submitted',
      appliedSequence: 3,
      waitingFor: null,
    });
    expect(lineIds(orderOf(after, 'O-Q'))).toEqual(['T-Q2', 'T-Q3']);
  });

  it('rejected: parked, the slot taken, later entries go on; a rejected final never submits', () => {
    expect(orderOf(after, 'O-E')).toMatchObject({ status: 'submitted', appliedSequence: 3 });
    expect(lineIds(orderOf(after, 'O-E'))).toEqual(['T-E3']);
    expect(orderOf(after, 'O-F')).toMatchObject({ status: 'open', appliedSequence: 2 });
    expect(orderOf(after, 'O-G')).toMatchObject({ status: 'submitted', appliedSequence: 3 });
    expect(lineIds(orderOf(after, 'O-G'))).toEqual(['T-G2']);
    expect(orderOf(after, 'O-H')).toMatchObject({ status: 'deleted', appliedSequence: 3, lines: [] });
    expect(orderOf(after, 'O-I').lines).toEqual([]);
    // Rejected when the buffer released it: the slot is taken all the same.
    expect(orderOf(after, 'O-J')).toMatchObject({ status: 'open', appliedSequence: 3 });
    expect(lineIds(orderOf(after, 'O-J'))).toEqual(['T-J2']);
    const description = (entry: Entry): string =>
      after.parked.find((p) => p.messageId === messageIdOf(entry))?.description ?? '';
    expect(description(e2)).toMatch(/T-NOPE/);
    expect(description(f2)).toMatch(/sequence 1/);
    expect(description(g3)).toMatch(/final/);
    expect(description(h3)).toMatch(/deleted/);
    expect(description(i1)).toMatch(/does not exist/);
    expect(new Set(app.submitted)).toEqual(new Set(['O-A', 'O-B', 'O-D', 'O-E', 'O-G', 'O-P', 'O-Q']));
  });

  it('misrouted: an entry in another order’s session is parked and touches neither order', () => {
    expect(after.parked.find((p) => p.reason === 'misrouted')?.description).toMatch(/O-N/);
    expect(after.orders.map((order) => order.orderId)).not.toContain('O-N');
    expect(after.orders.map((order) => order.orderId)).not.toContain('O-M');
  });

  it('a poison message in the middle of a session is parked and the rest of its session goes on', () => {
    expect(after.parked.find((p) => p.messageId === 'P-POISON')?.description).toMatch(/JSON/);
    expect(orderOf(after, 'O-P')).toMatchObject({ status: 'submitted', appliedSequence: 2 });
    expect(lineIds(orderOf(after, 'O-P'))).toEqual(['T-P2']);
  });

  it('parked messages keep body, messageId and application properties, with parkReason and parkDescription', () => {
    const peeked = app.broker.peek(QUEUE.parked);
    const byId = (messageId: string) => {
      const message = peeked.find((candidate) => candidate.messageId === messageId);
      if (message === undefined) throw new Error(`${messageId} is not parked`);
      return message;
    };
    const park = (reason: string, fromQueue: string, sessionId: string) => ({
      parkReason: reason,
      parkDescription: expect.any(String),
      parkedFromQueue: fromQueue,
      parkedFromSessionId: sessionId,
    });

    const m = byId(messageIdOf(misrouted));
    expect(m.body).toEqual(misrouted);
    expect(m.applicationProperties).toEqual({
      ...entryMessageFor(misrouted).applicationProperties,
      ...park('misrouted', QUEUE.orderTransactions, 'O-M'),
    });

    const poison = byId('P-POISON');
    expect(poison.body).toBe(poisonBody);
    expect(poison.applicationProperties).toEqual({
      batchId: 'manual',
      ...park('invalid', QUEUE.orderTransactions, 'O-P'),
    });

    for (const [entry, reason, batchId] of [
      [b2x, 'digest-mismatch', 'B-3'],
      [c2x, 'sequence-conflict', 'B-3'],
      [e2, 'rejected', 'B-2'],
      [g3, 'rejected', 'B-2'],
    ] as const) {
      const message = byId(messageIdOf(entry));
      expect(message.body).toEqual(entry);
      expect(message.applicationProperties).toEqual({
        ...entryMessageFor(entry, entry.orderId, batchId).applicationProperties,
        ...park(reason, QUEUE.orderTransactions, entry.orderId),
      });
    }

    const invalid = byId(parkIdFor('invalid', invalidEntry));
    expect(invalid.body).toEqual(invalidEntry);
    expect(invalid.applicationProperties).toMatchObject({
      batchId: 'B-2',
      transactionId: 'T-BAD1',
      ...park('invalid', QUEUE.ledger, 'main'),
    });
    expect(byId('B-BROKEN').body).toBe('this is not JSON {');
  });

  // Known gap: a buffered entry keeps only its entry, not its message's application properties, so
  // when the buffer releases it and it is rejected, the parked copy lacks `batchId`. Flip to `it`
  // once buffered entries carry their properties.
  it('a rejection released from the buffer keeps its application properties', () => {
    const message = app.broker
      .peek(QUEUE.parked)
      .find((candidate) => candidate.messageId === messageIdOf(j3));
    expect(message?.body).toEqual(j3);
    expect(message?.applicationProperties).toMatchObject(
      entryMessageFor(j3, 'O-J', 'B-1').applicationProperties,
    );
  });
});

describe('transient failures in the real pipeline', () => {
  const MAX_DELIVERY_COUNT = 3;
  /** The handlers' backoff, 1000 times faster: each delivery's 3 minutes take 180 ms. */
  const FAST_BACKOFF: Backoff = { policy: HANDLER_BACKOFF, sleep: scaledClock(1000).sleep };
  let broker: EmbeddedBroker;
  let host: FunctionsHost;
  let orders: DocumentContainer;
  let submitted: string[];

  afterEach(async () => {
    await host.stop();
    broker.close();
  });

  /**
   * The pieces `createEmbeddedApp` puts together, with the consumer's store, sender and fulfillment
   * replaced where a test says so.
   */
  function startPipeline(replace: {
    orders?: (orders: DocumentContainer) => DocumentContainer;
    sender?: (broker: EmbeddedBroker) => MessageSender;
    fulfillment?: (fulfillment: FulfillmentStarter) => FulfillmentStarter;
  }): void {
    broker = createEmbeddedBroker();
    const queueOptions = {
      lockDurationMs: 30,
      maxDeliveryCount: MAX_DELIVERY_COUNT,
      duplicateDetection: true,
    };
    broker.createQueue(QUEUE.ledger, { requiresSession: true, ...queueOptions });
    broker.createQueue(QUEUE.orderTransactions, { requiresSession: true, ...queueOptions });
    broker.createQueue(QUEUE.parked, { requiresSession: false, ...queueOptions });
    orders = createEmbeddedStore().container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH, {
      defaultTtlSeconds: -1,
    });
    submitted = [];
    const recording: FulfillmentStarter = {
      async start(input) {
        submitted.push(input.orderId);
      },
    };
    const telemetry = createRecordingTelemetry();
    const cache = createOrderCache();
    const consumerOrders = replace.orders?.(orders) ?? orders;
    const consumerSender = replace.sender?.(broker) ?? broker;
    const fulfillment = replace.fulfillment?.(recording) ?? recording;
    host = createFunctionsHost({
      broker,
      functions: registerAndCapture({
        serviceBus: [
          ledgerProcessor({ sender: broker, telemetry }, FAST_BACKOFF),
          orderTransactions(
            () => ({
              orders: consumerOrders,
              sender: consumerSender,
              telemetry,
              cache,
              fulfillment,
            }),
            FAST_BACKOFF,
          ),
        ],
      }),
      // The fulfillment here is recorded, not started: its durable client input is bound to null.
      bindInput: () => ({}),
      maxConcurrentSessions: 4,
      log: quiet,
    });
    host.start();
  }

  /** Every transactional batch for one order fails with a retryable error. */
  function failingFor(container: DocumentContainer, orderId: string): DocumentContainer {
    return {
      name: container.name,
      partitionKeyPath: container.partitionKeyPath,
      create: (document) => container.create(document),
      read: (partitionKey, id) => container.read(partitionKey, id),
      replace: (document, options) => container.replace(document, options),
      upsert: (document, options) => container.upsert(document, options),
      delete: (partitionKey, id, options) => container.delete(partitionKey, id, options),
      query: (spec) => container.query(spec),
      async batch(partitionKey, operations) {
        if (partitionKey === orderId)
          throw new TransientError('store-throttled', `${orderId} is throttled for ever`);
        return container.batch(partitionKey, operations);
      },
    };
  }

  it('one that never clears ends dead-lettered after maxDeliveryCount; other orders go on', async () => {
    startPipeline({ orders: (container) => failingFor(container, 'O-STUCK') });
    const stuck = [created('O-STUCK', 'T-X1'), added('O-STUCK', 'T-X2', 2, 1, 100, true)];
    const healthy = [
      created('O-OK1', 'T-K1'),
      added('O-OK1', 'T-K2', 2, 1, 100, true),
      created('O-OK2', 'T-L1'),
      added('O-OK2', 'T-L2', 2, 2, 100, true),
    ];
    await broker.send(QUEUE.ledger, [
      ledger('B-1', [stuck[0], healthy[0], healthy[2], stuck[1], healthy[1]]),
    ]);
    await broker.send(QUEUE.ledger, [ledger('B-2', [healthy[3]])]);
    await host.whenIdle();

    const dead = broker.deadLetters(QUEUE.orderTransactions);
    expect(dead.map((message) => message.messageId)).toEqual(stuck.map(messageIdOf));
    for (const [index, message] of dead.entries()) {
      expect(message).toMatchObject({
        sessionId: 'O-STUCK',
        deadLetterReason: MAX_DELIVERY_COUNT_EXCEEDED,
        deliveryCount: MAX_DELIVERY_COUNT,
        body: stuck[index],
        applicationProperties: entryMessageFor(stuck[index], 'O-STUCK', 'B-1').applicationProperties,
      });
    }
    expect(broker.deadLetters(QUEUE.ledger)).toEqual([]);
    expect(broker.peek(QUEUE.parked)).toEqual([]);

    expect(await orders.read('O-STUCK', ORDER_HEADER_ID)).toBeUndefined();
    for (const orderId of ['O-OK1', 'O-OK2']) {
      const stored = await orders.read<OrderDocument>(orderId, ORDER_HEADER_ID);
      expect(stored?.document).toMatchObject({ status: 'submitted', appliedSequence: 2 });
    }
    expect(new Set(submitted)).toEqual(new Set(['O-OK1', 'O-OK2']));
    expect(host.stats().byFunction.orderTransactions.failed).toBe(2 * MAX_DELIVERY_COUNT);
  });

  it('one between the commit and its effects: the next attempt, a duplicate, carries the effects out', async () => {
    let parkFailures = 1;
    let startFailures = 1;
    startPipeline({
      sender: (target) => ({
        async send(queue, messages) {
          if (queue === QUEUE.parked && parkFailures-- > 0)
            throw new TransientError('send-failed', 'parked is busy');
          await target.send(queue, messages);
        },
      }),
      fulfillment: (recording) => ({
        async start(input) {
          if (startFailures-- > 0) throw new TransientError('start-failed', 'the task hub is busy');
          await recording.start(input);
        },
      }),
    });
    const rejectedEntry = amended('O-W', 'T-W2', 2, 'T-NOPE', 1);
    await broker.send(QUEUE.ledger, [
      ledger('B-1', [created('O-W', 'T-W1'), rejectedEntry, added('O-W', 'T-W3', 3, 2, 50, true)]),
    ]);
    await host.whenIdle();

    expect(parkFailures).toBeLessThan(0);
    expect(startFailures).toBeLessThan(0);
    expect(
      broker
        .peek(QUEUE.parked)
        .map((message) => [message.messageId, message.applicationProperties.parkReason]),
    ).toEqual([[messageIdOf(rejectedEntry), 'rejected']]);
    expect(submitted).toEqual(['O-W']);
    const stored = await orders.read<OrderDocument>('O-W', ORDER_HEADER_ID);
    expect(stored?.document).toMatchObject({ status: 'submitted', appliedSequence: 3, total: 100 });
    expect(broker.deadLetters(QUEUE.orderTransactions)).toEqual([]);
    // Both were tried again inside their delivery, after a backoff: no message went back.
    expect(host.stats().byFunction.orderTransactions.failed).toBe(0);
  });
});
