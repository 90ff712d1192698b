/**
 * What a replay predicts, refuses and sends (src/services/operations/replay.ts), on fakes of the
 * broker's operations and on the embedded store, with no app running: every prediction text, every
 * refusal and its reason, exactly. tests/ops/replay.test.ts runs the same paths end to end.
 */
import { createEmbeddedStore } from '../../local/store/document-store';
import { entryDigest, entryMessageId } from '../../src/domain/digest';
import { describeProblems, validateEntry, type Entry } from '../../src/domain/entry';
import { TransientError } from '../../src/domain/errors';
import { createOrderCache } from '../../src/services/convoy/order-cache';
import { applyEntry } from '../../src/services/idempotent-consumer';
import type { ParkRequest } from '../../src/services/convoy/parking';
import { parkedAsRead } from '../support/parked';
import type {
  DeadLetteredMessage,
  MessageOperations,
  OperableQueue,
  ParkedMessage,
  QueueInfo,
} from '../../src/services/operations/message-operations-port';
import {
  inspect,
  predictReplay,
  replayDeadLettered,
  replayParked,
  type ReplayDeps,
} from '../../src/services/operations/replay';
import {
  ORDER_HEADER_ID,
  ORDERS_CONTAINER,
  ORDERS_PARTITION_KEY_PATH,
  type OrderDocument,
} from '../../src/services/order-documents';
import type { DocumentContainer, OutgoingMessage } from '../../src/services/ports';

const NOW = Date.parse('2026-12-01T12:00:00.000Z');
const MINUTE = 60_000;

const created = (transactionId: string, sequence = 1, orderId = 'O-1'): Entry => ({
  transactionId,
  orderId,
  sequence,
  type: 'OrderCreated',
  data: { customerId: 'C-1', currency: 'EUR' },
});
const added = (transactionId: string, sequence: number, final = false, orderId = 'O-1'): Entry => ({
  transactionId,
  orderId,
  sequence,
  type: 'TransactionAdded',
  ...(final ? { final: true as const } : {}),
  data: { sku: `SKU-${transactionId}`, quantity: 1, unitPrice: 100 },
});
const idOf = (entry: Entry): string => entryMessageId(entry.transactionId, entryDigest(entry));

const ordersContainer = (): DocumentContainer =>
  createEmbeddedStore().container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH);

/** The consumer takes `entries`, each once, in its own session; parks go to `parks` unless `failParks`. */
async function consume(
  orders: DocumentContainer,
  entries: readonly Entry[],
  options: { failParks?: boolean } = {},
): Promise<OutgoingMessage[]> {
  const parks: OutgoingMessage[] = [];
  const ignore = (): void => {};
  const deps = {
    orders,
    sender: {
      send: async (_queue: string, messages: readonly OutgoingMessage[]) => {
        if (options.failParks === true) throw new TransientError('broker-unavailable', 'test: no parks');
        parks.push(...messages);
      },
    },
    fulfillment: { start: async () => undefined },
    telemetry: { trace: ignore, event: ignore, metric: ignore },
    cache: createOrderCache(),
  };
  for (const entry of entries) {
    await applyEntry(deps, {
      messageId: idOf(entry),
      sessionId: entry.orderId,
      body: entry,
      deliveryCount: 1,
      sequenceNumber: entry.sequence,
      correlationId: undefined,
      applicationProperties: { transactionId: entry.transactionId, sequence: entry.sequence },
    }).catch((error: unknown) => {
      if (!(error instanceof TransientError)) throw error;
    });
  }
  return parks;
}

/** A parked message as `park` writes it and the operations read it back. */
function parked(request: Partial<ParkRequest> & Pick<ParkRequest, 'fromQueue' | 'messageId'>): ParkedMessage {
  return parkedAsRead(
    {
      sessionId: undefined,
      body: {},
      transactionId: null,
      reason: 'invalid',
      description: 'test',
      ...request,
    },
    NOW - 5 * MINUTE,
  );
}

/** An entry parked by the consumer, as it parks one. */
const parkedEntry = (entry: Entry, reason: ParkRequest['reason'], sessionId = entry.orderId): ParkedMessage =>
  parked({
    fromQueue: 'order-transactions',
    messageId: idOf(entry),
    sessionId,
    body: entry,
    transactionId: entry.transactionId,
    applicationProperties: { transactionId: entry.transactionId },
    reason,
    description: `test: ${reason}`,
  });

function dead(
  queue: OperableQueue,
  messageId: string,
  body: unknown,
  sessionId: string | null,
): DeadLetteredMessage {
  return {
    kind: 'dead-lettered',
    queue,
    messageId,
    sessionId,
    body,
    correlationId: null,
    subject: null,
    applicationProperties: {},
    sequenceNumber: '12',
    enqueuedTimeUtc: NOW - 5 * MINUTE,
    deliveryCount: 10,
    deadLetterReason: 'MaxDeliveryCountExceeded',
    deadLetterDescription: null,
  };
}

interface FakeOperations extends MessageOperations {
  sent: Array<ParkedMessage | DeadLetteredMessage>;
  infoAsked: OperableQueue[];
}

/** The broker's operations over fixed held messages; `gone` ids have left meanwhile (delivered: false). */
function fakeOperations(
  held: ReadonlyArray<ParkedMessage | DeadLetteredMessage>,
  windows: Partial<Record<OperableQueue, number>> = {},
  gone: readonly string[] = [],
): FakeOperations {
  const sent: Array<ParkedMessage | DeadLetteredMessage> = [];
  const infoAsked: OperableQueue[] = [];
  const deliver = async (message: ParkedMessage | DeadLetteredMessage) => {
    if (gone.includes(message.messageId)) return { delivered: false as const };
    sent.push(message);
    return {
      delivered: true as const,
      queue: 'ledger' as const,
      sessionId: null,
      messageId: `sent-${message.messageId}`,
    };
  };
  const unused = (): never => {
    throw new Error('not used by replay');
  };
  return {
    sent,
    infoAsked,
    listParked: unused,
    listDeadLettered: unused,
    discardParked: unused,
    discardDeadLettered: unused,
    backlog: unused,
    findParked: async (messageId) =>
      held.find(
        (message): message is ParkedMessage => message.kind === 'parked' && message.messageId === messageId,
      ),
    findDeadLettered: async (queue, messageId) =>
      held.find(
        (message): message is DeadLetteredMessage =>
          message.kind === 'dead-lettered' && message.queue === queue && message.messageId === messageId,
      ),
    replayParked: deliver,
    replayDeadLettered: deliver,
    queueInfo: async (queue): Promise<QueueInfo> => {
      infoAsked.push(queue);
      return { requiresSession: queue !== 'parked', duplicateDetectionWindowMs: windows[queue] ?? null };
    },
  };
}

const depsOf = (operations: MessageOperations, orders = ordersContainer(), now = NOW): ReplayDeps => ({
  operations,
  orders,
  now: () => now,
});

describe('the prediction for the ledger', () => {
  const ledgerBatch = (body: unknown): DeadLetteredMessage => dead('ledger', 'B-1', body, 'main');
  const predict = (held: ParkedMessage | DeadLetteredMessage, body: unknown) =>
    predictReplay(ordersContainer(), held, 'ledger', { messageId: held.messageId, sessionId: 'main', body });

  it('a ledger entry parked on its own is checked at its index in its batch', async () => {
    const broken = { transactionId: 'T-x', orderId: 'O-1', sequence: 2, type: 'TransactionAdded', data: {} };
    const entry = parked({
      fromQueue: 'ledger',
      messageId: 'B-9#3',
      sessionId: 'main',
      body: broken,
      applicationProperties: { batchId: 'B-9', entryIndex: 3 },
    });
    const problems = validateEntry(broken, 'entries[3]');
    expect(problems.ok).toBe(false);
    const described = describeProblems(problems.ok ? [] : problems.problems);
    expect(described).toContain('entries[3].data.sku');
    await expect(predict(entry, { batchId: 'B-9', entries: [broken] })).resolves.toEqual({
      outcome: 'parked',
      reason: 'invalid',
      description: described,
    });

    const valid = { ...entry, body: created('T-V1') };
    await expect(predict(valid, { batchId: 'B-9', entries: [created('T-V1')] })).resolves.toEqual({
      outcome: 'forwarded',
      description: 'entry T-V1 of batch B-9 forwarded to order-transactions in session O-1',
    });
  });

  it('a batch that is no batch is parked whole, with its problems', async () => {
    await expect(predict(ledgerBatch('x'), { entries: [] })).resolves.toEqual({
      outcome: 'parked',
      reason: 'invalid',
      description: 'batchId must be a non-empty string, got nothing',
    });
  });

  it('a batch whose entries are all invalid is parked whole, their problems joined', async () => {
    const body = { batchId: 'B-1', entries: [{ a: 1 }, created('T-1', 0)] };
    const first = validateEntry({ a: 1 }, 'entries[0]');
    const second = validateEntry(created('T-1', 0), 'entries[1]');
    if (first.ok || second.ok) throw new Error('both entries must be invalid');
    await expect(predict(ledgerBatch(body), body)).resolves.toEqual({
      outcome: 'parked',
      reason: 'invalid',
      description: `${describeProblems(first.problems)}; ${describeProblems(second.problems)}`,
    });
  });

  it('a batch forwards its valid entries and parks the others, counted', async () => {
    const mixed = { batchId: 'B-1', entries: [created('T-1'), { a: 1 }, added('T-2', 2)] };
    await expect(predict(ledgerBatch(mixed), mixed)).resolves.toEqual({
      outcome: 'forwarded',
      description: 'batch B-1: 2 entries forwarded to order-transactions, 1 parked as invalid',
    });
    const valid = { batchId: 'B-1', entries: [created('T-1')] };
    await expect(predict(ledgerBatch(valid), valid)).resolves.toEqual({
      outcome: 'forwarded',
      description: 'batch B-1: 1 entries forwarded to order-transactions',
    });
    const empty = { batchId: 'B-1', entries: [] };
    await expect(predict(ledgerBatch(empty), empty)).resolves.toEqual({
      outcome: 'forwarded',
      description: 'batch B-1: 0 entries forwarded to order-transactions',
    });
  });
});

describe('the prediction for order-transactions', () => {
  const predict = (orders: DocumentContainer, entry: unknown, sessionId = 'O-1') =>
    predictReplay(orders, dead('order-transactions', 'm', entry, sessionId), 'order-transactions', {
      messageId: 'replay-d12:m',
      sessionId,
      body: entry,
    });

  it('parks what the admission parks: an invalid body, a wrong session', async () => {
    const orders = ordersContainer();
    await expect(predict(orders, { transactionId: 'T-1' })).resolves.toMatchObject({
      outcome: 'parked',
      reason: 'invalid',
      description: expect.stringContaining('orderId'),
    });
    await expect(predict(orders, created('T-1'), 'O-2')).resolves.toEqual({
      outcome: 'parked',
      reason: 'misrouted',
      description: "orderId O-1 arrived in session O-2; an entry must travel in its order's session",
    });
  });

  it('applies, buffers, releases and submits as the order stands now', async () => {
    const orders = ordersContainer();
    await expect(predict(orders, created('T-1'))).resolves.toEqual({
      outcome: 'applied',
      description: 'applied at sequence 1 of order O-1',
    });
    await consume(orders, [created('T-1')]);
    await expect(predict(orders, added('T-3', 3))).resolves.toEqual({
      outcome: 'buffered',
      description: 'order O-1 would buffer sequence 3 and wait for 2',
    });
    await consume(orders, [added('T-3', 3, true)]);
    await expect(predict(orders, added('T-2', 2))).resolves.toEqual({
      outcome: 'applied',
      description: 'applied at sequence 2 of order O-1, releasing 1 buffered entries, submitting the order',
    });
    await consume(orders, [added('T-2', 2)]);
    const order = await orders.read<OrderDocument>('O-1', ORDER_HEADER_ID);
    expect(order?.document).toMatchObject({ status: 'submitted', appliedSequence: 3 });
  });

  it('an entry on an order that does not exist yet is rejected with its own description', async () => {
    const orders = ordersContainer();
    const prediction = await predict(orders, added('T-1', 1));
    expect(prediction).toMatchObject({ outcome: 'parked', reason: 'rejected' });
    // The same description the consumer parks it with.
    const parks = await consume(orders, [added('T-1', 1)]);
    expect(parks).toHaveLength(1);
    expect(prediction.description).toBe(parks[0]!.applicationProperties?.parkDescription);
    expect(prediction.description).not.toBe('rejected at sequence 1');
  });

  it('counts an entry already seen as a duplicate, reading the order as stored', async () => {
    const orders = ordersContainer();
    await consume(orders, [created('T-1')]);
    await expect(predict(orders, created('T-1'))).resolves.toEqual({
      outcome: 'duplicate',
      description:
        'transactionId T-1 was already applied on order O-1 with the same content; the consumer would count it as a duplicate',
    });
  });

  it("reads the entry's own record even where the order's slots would not ask for it", async () => {
    const orders = ordersContainer();
    await consume(orders, [created('T-1')]);
    // T-1 again, at a sequence ahead of a gap: recordsNeeded asks for nothing, the record tells.
    const reused = created('T-1', 5);
    await expect(predict(orders, reused)).resolves.toMatchObject({
      outcome: 'parked',
      reason: 'digest-mismatch',
      description: expect.stringMatching(
        /^transactionId T-1 was already applied at sequence 1 with other content/,
      ),
    });
  });

  it("a duplicate whose park is still pending in its order's outbox would be parked again", async () => {
    const orders = ordersContainer();
    await consume(orders, [added('T-1', 1)], { failParks: true });
    const order = await orders.read<OrderDocument>('O-1', ORDER_HEADER_ID);
    const pending = order?.document.outbox?.parks ?? [];
    expect(pending.map((park) => park.transactionId)).toEqual(['T-1']);
    await expect(predict(orders, added('T-1', 1))).resolves.toEqual({
      outcome: 'parked',
      reason: 'rejected',
      description: `its order still holds the rejection to park: ${pending[0]!.description}`,
    });
  });

  it('a duplicate of an order with other effects pending would do them', async () => {
    const orders = ordersContainer();
    await consume(orders, [created('T-1'), added('T-2', 2, true)]);
    await consume(orders, [added('T-3', 3)], { failParks: true });
    const stored = (await orders.read<OrderDocument>('O-1', ORDER_HEADER_ID))!;
    const parks = stored.document.outbox?.parks ?? [];
    const parkId = parks[0]?.messageId;
    expect(parkId).toBe(idOf(added('T-3', 3)));
    await orders.replace({ ...stored.document, outbox: { parks, startFulfillment: null } });
    await expect(predict(orders, created('T-1'))).resolves.toEqual({
      outcome: 'effects',
      description: `transactionId T-1 was already applied on order O-1; the consumer would do the effects its order still holds pending: park ${parkId}`,
    });

    // With the saga's start pending too.
    const start = { orderId: 'O-1', customerId: 'C-1', currency: 'EUR', total: 100, correlationId: null };
    await orders.replace({
      ...stored.document,
      outbox: { ...stored.document.outbox!, startFulfillment: start },
    });
    await expect(predict(orders, created('T-1'))).resolves.toEqual({
      outcome: 'effects',
      description: `transactionId T-1 was already applied on order O-1; the consumer would do the effects its order still holds pending: park ${parkId}, ask to start the fulfillment of O-1 (a no-op once it started)`,
    });
  });

  it('reads a message without a session as arriving in none', async () => {
    await expect(
      predictReplay(
        ordersContainer(),
        dead('order-transactions', 'm', created('T-1'), null),
        'order-transactions',
        {
          messageId: 'm',
          body: created('T-1'),
        },
      ),
    ).resolves.toEqual({
      outcome: 'parked',
      reason: 'misrouted',
      description: "orderId O-1 arrived in session ; an entry must travel in its order's session",
    });
  });

  it('a record whose order header is gone is still a duplicate, with no effects pending', async () => {
    const orders = ordersContainer();
    await consume(orders, [created('T-1')]);
    await expect(orders.delete('O-1', ORDER_HEADER_ID)).resolves.toEqual({ status: 204 });
    await expect(predict(orders, created('T-1'))).resolves.toMatchObject({ outcome: 'duplicate' });
  });

  it('into parked, a message goes back as it was', async () => {
    const message = dead('parked', 'P-1', { any: 1 }, null);
    await expect(
      predictReplay(ordersContainer(), message, 'parked', { messageId: 'P-1', body: {} }),
    ).resolves.toEqual({
      outcome: 'restored',
      description: 'it goes back into parked as it was',
    });
  });
});

describe('inspect', () => {
  it('says where a replay would go and what it would meet, or why it cannot go', async () => {
    const deps = depsOf(fakeOperations([]));
    const restored = dead('parked', 'P-1', {}, null);
    await expect(inspect(deps, restored)).resolves.toEqual({
      message: restored,
      replay: {
        queue: 'parked',
        sessionId: null,
        prediction: { outcome: 'restored', description: 'it goes back into parked as it was' },
      },
    });
    const entry = dead('order-transactions', 'm', created('T-1'), 'O-1');
    await expect(inspect(deps, entry)).resolves.toMatchObject({
      replay: { queue: 'order-transactions', sessionId: 'O-1', prediction: { outcome: 'applied' } },
    });
    const sessionless = dead('ledger', 'B-1', {}, null);
    await expect(inspect(deps, sessionless)).resolves.toEqual({
      message: sessionless,
      replay: { queue: null, reason: 'dead-lettered message B-1 of session queue ledger has no sessionId' },
    });
  });
});

describe('replaying', () => {
  it('is refused for a message that records no origin, and not found for one that is not there', async () => {
    const nowhere = parked({ fromQueue: 'parked', messageId: 'P-1' });
    const deps = depsOf(fakeOperations([nowhere]));
    await expect(replayParked(deps, 'P-1')).resolves.toEqual({
      replayed: false,
      refusal: 'no-origin',
      reason: 'parked message P-1 records no queue it came from (parkedFromQueue is parked)',
      prediction: null,
    });
    await expect(replayParked(deps, 'P-2')).resolves.toEqual({
      replayed: false,
      refusal: 'not-found',
      reason: 'no parked message P-2',
      prediction: null,
    });
    await expect(replayDeadLettered(deps, 'ledger', 'P-1')).resolves.toEqual({
      replayed: false,
      refusal: 'not-found',
      reason: 'no dead-lettered message P-1 in ledger',
      prediction: null,
    });
  });

  it('never sends a ledger entry that is still invalid, even forced', async () => {
    const broken = { transactionId: 'T-x', orderId: 'O-1', sequence: 2, type: 'TransactionAdded', data: {} };
    const entry = parked({
      fromQueue: 'ledger',
      messageId: 'B-9#3',
      sessionId: 'main',
      body: broken,
      applicationProperties: { batchId: 'B-9', entryIndex: 3 },
    });
    const operations = fakeOperations([entry]);
    const result = await replayParked(depsOf(operations), 'B-9#3', { force: true });
    const invalid = validateEntry(broken, 'entries[3]');
    const description = describeProblems(invalid.ok ? [] : invalid.problems);
    expect(result).toEqual({
      replayed: false,
      refusal: 'entry-still-invalid',
      reason: `ledger entry B-9#3 is still invalid (${description}); replayed, the ledger would park it again as B-9#0, another entry's id, so it is not replayed even when forced`,
      prediction: { outcome: 'parked', reason: 'invalid', description },
    });
    expect(operations.sent).toEqual([]);
  });

  it('sends a ledger batch that would be parked whole, as a dead letter is not parked yet', async () => {
    const message = dead('ledger', 'B-1', 'x', 'main');
    const operations = fakeOperations([message]);
    await expect(replayDeadLettered(depsOf(operations), 'ledger', 'B-1')).resolves.toMatchObject({
      replayed: true,
      forced: false,
      prediction: { outcome: 'parked', reason: 'invalid' },
    });
    expect(operations.sent).toEqual([message]);
  });

  it('refuses a replay that would be parked again, naming the old and the new reason, until forced', async () => {
    const orders = ordersContainer();
    await consume(orders, [created('T-1')]);
    const again = parkedEntry(created('T-2', 1), 'sequence-conflict');
    const now = parkedEntry(created('T-3', 1), 'invalid');
    const operations = fakeOperations([again, now]);
    const deps = depsOf(operations, orders);
    const conflict = 'sequence 1 of order O-1 is already taken by another transaction';
    await expect(replayParked(deps, again.messageId)).resolves.toEqual({
      replayed: false,
      refusal: 'would-park-again',
      reason: `replaying ${again.messageId} would park it as sequence-conflict again: ${conflict}; fix the cause first or force the replay to send it anyway`,
      prediction: { outcome: 'parked', reason: 'sequence-conflict', description: conflict },
    });
    await expect(replayParked(deps, now.messageId)).resolves.toMatchObject({
      replayed: false,
      refusal: 'would-park-again',
      reason: `replaying ${now.messageId} would park it again, now as sequence-conflict (it was parked as invalid): sequence 1 of order O-1 is already taken by another transaction; fix the cause first or force the replay to send it anyway`,
    });
    expect(operations.sent).toEqual([]);

    await expect(replayParked(deps, again.messageId, { force: true })).resolves.toEqual({
      replayed: true,
      queue: 'order-transactions',
      sessionId: 'O-1',
      messageId: again.messageId,
      sentAs: `sent-${again.messageId}`,
      forced: true,
      prediction: { outcome: 'parked', reason: 'sequence-conflict', description: conflict },
    });
    expect(operations.sent).toEqual([again]);
  });

  it('refuses a replay with no effect, until forced; a replay with an effect is not counted forced', async () => {
    const orders = ordersContainer();
    await consume(orders, [created('T-1')]);
    const seen = parkedEntry(created('T-1'), 'misrouted');
    const fresh = dead('order-transactions', idOf(added('T-2', 2)), added('T-2', 2), 'O-1');
    const seenDead = dead('order-transactions', idOf(created('T-1')), created('T-1'), 'O-1');
    const operations = fakeOperations([seen, fresh, seenDead]);
    const deps = depsOf(operations, orders);
    const duplicate =
      'transactionId T-1 was already applied on order O-1 with the same content; the consumer would count it as a duplicate';
    await expect(replayParked(deps, seen.messageId, {})).resolves.toEqual({
      replayed: false,
      refusal: 'no-effect',
      reason: `replaying ${seen.messageId} would have no effect: ${duplicate}; force the replay to send it anyway (it then leaves parked)`,
      prediction: { outcome: 'duplicate', description: duplicate },
    });
    await expect(replayDeadLettered(deps, 'order-transactions', seenDead.messageId)).resolves.toMatchObject({
      refusal: 'no-effect',
      reason: `replaying ${seenDead.messageId} would have no effect: ${duplicate}; force the replay to send it anyway (it then leaves the dead-letter queue)`,
    });
    await expect(replayParked(deps, seen.messageId, { force: true })).resolves.toMatchObject({
      replayed: true,
      forced: true,
    });
    await expect(
      replayDeadLettered(deps, 'order-transactions', fresh.messageId, { force: true }),
    ).resolves.toMatchObject({ replayed: true, forced: false, prediction: { outcome: 'applied' } });
    expect(operations.sent).toEqual([seen, fresh]);
  });

  it('sends a ledger entry that is valid now, not forced, as its one-entry batch', async () => {
    const entry = parked({
      fromQueue: 'ledger',
      messageId: 'B-9#3',
      sessionId: 'main',
      body: created('T-V1'),
      applicationProperties: { batchId: 'B-9', entryIndex: 3 },
    });
    const operations = fakeOperations([entry], { ledger: 10 * MINUTE });
    await expect(
      replayParked(depsOf(operations, ordersContainer(), NOW + 10 * MINUTE), 'B-9#3'),
    ).resolves.toEqual({
      replayed: true,
      queue: 'ledger',
      sessionId: 'main',
      messageId: 'B-9#3',
      sentAs: 'sent-B-9#3',
      forced: false,
      prediction: {
        outcome: 'forwarded',
        description: 'entry T-V1 of batch B-9 forwarded to order-transactions in session O-1',
      },
    });
    expect(operations.sent).toEqual([entry]);
  });

  it('says so when the message left meanwhile, and sends nothing', async () => {
    const entry = dead('order-transactions', 'm', created('T-1'), 'O-1');
    const batch = parked({
      fromQueue: 'ledger',
      messageId: 'B-1',
      sessionId: 'main',
      body: { batchId: 'B-1', entries: [] },
    });
    const operations = fakeOperations([entry, batch], {}, ['m', 'B-1']);
    const deps = depsOf(operations);
    await expect(replayDeadLettered(deps, 'order-transactions', 'm')).resolves.toEqual({
      replayed: false,
      refusal: 'not-found',
      reason: 'm left the dead-letter queue of order-transactions meanwhile; nothing was sent',
      prediction: { outcome: 'applied', description: 'applied at sequence 1 of order O-1' },
    });
    await expect(replayParked(deps, 'B-1')).resolves.toMatchObject({
      replayed: false,
      refusal: 'not-found',
      reason: 'B-1 left parked meanwhile; nothing was sent',
    });
    expect(operations.sent).toEqual([]);
  });

  it('sends a message without a session with a null sessionId', async () => {
    const message = dead('parked', 'P-1', {}, null);
    const operations = fakeOperations([message], { parked: 10 * MINUTE });
    const deps = depsOf(operations, ordersContainer(), message.enqueuedTimeUtc + 10 * MINUTE);
    await expect(replayDeadLettered(deps, 'parked', 'P-1')).resolves.toEqual({
      replayed: true,
      queue: 'parked',
      sessionId: null,
      messageId: 'P-1',
      sentAs: 'sent-P-1',
      forced: false,
      prediction: { outcome: 'restored', description: 'it goes back into parked as it was' },
    });
  });
});

describe('duplicate detection', () => {
  const batch = { batchId: 'B-1', entries: [created('T-1')] };

  it('refuses a replay under the same id while the queue may remember it, and allows it from then on', async () => {
    const message = dead('ledger', 'B-1', batch, 'main');
    const operations = fakeOperations([message], { ledger: 10 * MINUTE + 1 });
    const forgottenAt = message.enqueuedTimeUtc + 10 * MINUTE + 1;
    const result = await replayDeadLettered(
      depsOf(operations, ordersContainer(), forgottenAt - 1),
      'ledger',
      'B-1',
      {
        force: true,
      },
    );
    expect(result).toEqual({
      replayed: false,
      refusal: 'duplicate-detection',
      reason:
        'ledger detects duplicates over 11 minutes and may still remember messageId B-1: it would drop the replay without a word and the message would be lost. ' +
        `Replay after ${new Date(forgottenAt).toISOString()}`,
      prediction: {
        outcome: 'forwarded',
        description: 'batch B-1: 1 entries forwarded to order-transactions',
      },
    });
    expect(operations.infoAsked).toEqual(['ledger']);
    expect(operations.sent).toEqual([]);

    await expect(
      replayDeadLettered(depsOf(operations, ordersContainer(), forgottenAt), 'ledger', 'B-1'),
    ).resolves.toMatchObject({ replayed: true });
    expect(operations.sent).toEqual([message]);
  });

  it('asks the parked queue too when the replay would be parked again', async () => {
    const message = dead('ledger', 'B-1', 'x', 'main');
    const operations = fakeOperations([message], { parked: 10 * MINUTE });
    await expect(replayDeadLettered(depsOf(operations), 'ledger', 'B-1')).resolves.toMatchObject({
      replayed: false,
      refusal: 'duplicate-detection',
      reason: expect.stringMatching(
        /^parked detects duplicates over 10 minutes and may still remember messageId B-1:/,
      ),
    });
    expect(operations.infoAsked).toEqual(['ledger', 'parked']);
  });

  it('does not ask for an entry, which goes under a fresh id', async () => {
    const message = dead('order-transactions', 'm', created('T-1'), 'O-1');
    const operations = fakeOperations([message], { 'order-transactions': 10 * MINUTE });
    await expect(replayDeadLettered(depsOf(operations), 'order-transactions', 'm')).resolves.toMatchObject({
      replayed: true,
    });
    expect(operations.infoAsked).toEqual([]);
  });
});
