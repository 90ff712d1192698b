/**
 * The Idempotent Consumer (src/services/idempotent-consumer.ts, `applyEntry`) on the embedded store
 * and recording ports: the outcome of each entry, what it tells the telemetry, what it parks and
 * starts, and what its writes leave in the store and in the session's cache.
 */
import { appOrdersContainer } from '../support/orders-container';
import type { Entry } from '../../src/domain/entry';
import { createOrderCache } from '../../src/services/convoy/order-cache';
import { CONSUMER, applyEntry, type ConsumerDeps } from '../../src/services/idempotent-consumer';
import {
  ORDER_GAP_ID,
  ORDER_HEADER_ID,
  readOrderState,
  transactionDocument,
  type OrderDocument,
} from '../../src/services/order-documents';
import { entryDigest } from '../../src/domain/digest';
import { TransientError } from '../../src/domain/errors';
import { releasable } from '../../src/domain/order';
import { PARK_PROPERTY, QUEUE } from '../../src/services/queues';
import type {
  DeliveredMessage,
  DocumentContainer,
  FulfillmentInput,
  OutgoingMessage,
  TelemetryProperties,
} from '../../src/services/ports';
import { added, amended, created, deliveredEntry } from '../support/e2e';

interface World {
  orders: DocumentContainer;
  deps: ConsumerDeps;
  sends: Array<{ queue: string; messages: OutgoingMessage[] }>;
  started: FulfillmentInput[];
  events: Array<{ name: string; properties?: TelemetryProperties }>;
  metrics: Array<{ name: string; value: number; properties?: TelemetryProperties }>;
  /** The replaces of the consumer, `partitionKey/id`. */
  replaces: string[];
  /** The point reads of the consumer, `partitionKey/id`. */
  reads: string[];
  /** Runs before the next replace of the consumer, once: another writer's turn. */
  beforeReplace?: () => Promise<void>;
  /** Runs before every batch of the consumer while set: another writer's turn. */
  beforeBatch?: () => Promise<void>;
}

function world(orders: DocumentContainer = ordersContainer()): World {
  const self: World = {
    orders,
    sends: [],
    started: [],
    events: [],
    metrics: [],
    replaces: [],
    reads: [],
    deps: undefined as unknown as ConsumerDeps,
  };
  const counted: DocumentContainer = {
    ...orders,
    name: orders.name,
    partitionKeyPath: orders.partitionKeyPath,
    create: (document) => orders.create(document),
    read: (partitionKey, id) => {
      self.reads.push(`${partitionKey}/${id}`);
      return orders.read(partitionKey, id);
    },
    replace: async (document, options) => {
      const before = self.beforeReplace;
      self.beforeReplace = undefined;
      if (before !== undefined) await before();
      self.replaces.push(`${String(document.orderId)}/${document.id}`);
      return orders.replace(document, options);
    },
    upsert: (document, options) => orders.upsert(document, options),
    delete: (partitionKey, id, options) => orders.delete(partitionKey, id, options),
    query: (spec) => orders.query(spec),
    batch: async (partitionKey, operations) => {
      if (self.beforeBatch !== undefined) await self.beforeBatch();
      return orders.batch(partitionKey, operations);
    },
  };
  self.deps = {
    orders: counted,
    sender: {
      send: async (queue, messages) => {
        self.sends.push({ queue, messages: [...messages] });
      },
    },
    fulfillment: { start: async (input) => void self.started.push(input) },
    telemetry: {
      trace: () => {},
      event: (name, properties) => self.events.push({ name, properties }),
      metric: (name, value, properties) => self.metrics.push({ name, value, properties }),
    },
    cache: createOrderCache(),
  };
  return self;
}

/** Another writer changes the order's header behind the consumer's back (its etag, its total). */
async function bump(w: World, orderId: string, change: Partial<OrderDocument> = {}): Promise<void> {
  const stored = await w.orders.read<OrderDocument>(orderId, ORDER_HEADER_ID);
  if (stored === undefined) throw new Error(`no order ${orderId}`);
  const written = await w.orders.replace(
    { ...stored.document, total: stored.document.total + 1, ...change },
    { ifMatch: stored.etag },
  );
  if (written.status !== 200) throw new Error(`bump of ${orderId}: ${written.status}`);
}

/**
 * An order left releasable, as a crash between two batches of a release leaves it: entry 2 applied
 * (its record written) and entry 3 still buffered behind it. `third` is entry 3.
 */
async function releasableOrder(w: World, third: Entry): Promise<void> {
  const setup = world(w.orders);
  await applyEntry(setup.deps, delivered(created('O-1', 'T-1')));
  await applyEntry(setup.deps, delivered(third));
  const two = added('O-1', 'T-2', 2, 1, 100);
  const stored = await w.orders.read<OrderDocument>('O-1', ORDER_HEADER_ID);
  if (stored === undefined) throw new Error('no order O-1');
  // The release's first batch took slot 2, so the gap document that held it went in the same batch.
  const batch = await w.orders.batch('O-1', [
    { op: 'delete', id: ORDER_GAP_ID },
    {
      op: 'create',
      document: transactionDocument('O-1', {
        transactionId: 'T-2',
        digest: entryDigest(two),
        sequence: 2,
        outcome: 'applied',
        line: { sku: 'SKU-T-2', quantity: 1, unitPrice: 100 },
      }),
    },
    {
      op: 'replace',
      document: { ...stored.document, appliedSequence: 2, lineCount: 1, total: 100 },
      ifMatch: stored.etag,
    },
  ]);
  if (!batch.ok) throw new Error('setup batch failed');
  expect(releasable({ ...stored.document, appliedSequence: 2 })).toBe(true);
}

/** The error the promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('it did not fail');
}

function ordersContainer(): DocumentContainer {
  return appOrdersContainer();
}

function delivered(entry: Entry, correlationId?: string): DeliveredMessage {
  return { ...deliveredEntry(entry), correlationId };
}

/** The order as it stands: its header rolled forward over the records past it. */
async function header(w: World, orderId: string): Promise<OrderDocument | undefined> {
  return readOrderState(w.orders, orderId);
}

/** The dimensions every metric of an entry carries. */
function dimensions(message: DeliveredMessage, entry: Entry): TelemetryProperties {
  return {
    orderId: entry.orderId,
    messageId: message.messageId,
    sessionId: message.sessionId,
    correlationId: message.correlationId ?? null,
    sequence: entry.sequence,
  };
}

describe('applyEntry', () => {
  it('is the orderTransactions consumer', () => {
    expect(CONSUMER).toBe('orderTransactions');
  });

  it('applies an entry in sequence: the outcome, the applied metric, the header and the cache', async () => {
    const w = world();
    const first = delivered(created('O-1', 'T-1'), 'corr-1');
    expect(await applyEntry(w.deps, first)).toEqual({
      kind: 'applied',
      orderId: 'O-1',
      applied: 1,
      rejected: 0,
      submitted: false,
    });
    expect(w.metrics).toEqual([
      { name: 'entries.applied', value: 1, properties: dimensions(first, created('O-1', 'T-1')) },
    ]);
    const stored = await header(w, 'O-1');
    expect(stored).toMatchObject({
      id: ORDER_HEADER_ID,
      kind: 'order',
      orderId: 'O-1',
      status: 'open',
      appliedSequence: 1,
      correlationId: 'corr-1',
      outbox: null,
    });
    expect(stored).toMatchObject(w.deps.cache.get('O-1')?.document ?? { cached: false });
    expect(w.deps.cache.get('O-1')?.etag).toBe((await w.orders.read('O-1', ORDER_HEADER_ID))?.etag);
    expect(w.sends).toEqual([]);
    expect(w.events).toEqual([]);
    expect(w.replaces).toEqual([]);
  });

  it("keeps the order's correlationId from its first entry", async () => {
    const w = world();
    await applyEntry(w.deps, delivered(created('O-1', 'T-1'), 'corr-1'));
    await applyEntry(w.deps, delivered(added('O-1', 'T-2', 2), 'corr-2'));
    expect((await header(w, 'O-1'))?.correlationId).toBe('corr-1');
    const w2 = world();
    await applyEntry(w2.deps, delivered(created('O-2', 'T-1')));
    expect((await header(w2, 'O-2'))?.correlationId).toBeNull();
  });

  it('buffers an entry ahead of a gap and says what it waits for; then the gap releases it', async () => {
    const w = world();
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    w.metrics.length = 0;
    const ahead = delivered(added('O-1', 'T-3', 3), 'corr');
    expect(await applyEntry(w.deps, ahead)).toEqual({
      kind: 'buffered',
      orderId: 'O-1',
      applied: 0,
      rejected: 0,
      submitted: false,
    });
    expect(w.metrics).toEqual([
      {
        name: 'entries.buffered',
        value: 1,
        properties: { ...dimensions(ahead, added('O-1', 'T-3', 3)), waitingFor: 2 },
      },
    ]);
    w.metrics.length = 0;
    const gap = delivered(added('O-1', 'T-2', 2));
    expect(await applyEntry(w.deps, gap)).toEqual({
      kind: 'applied',
      orderId: 'O-1',
      applied: 2,
      rejected: 0,
      submitted: false,
    });
    expect(w.metrics).toEqual([
      { name: 'entries.applied', value: 2, properties: dimensions(gap, added('O-1', 'T-2', 2)) },
    ]);
    expect(await header(w, 'O-1')).toMatchObject({ appliedSequence: 3, buffered: [], lineCount: 2 });
  });

  it('says a delivery seen before is a duplicate, by the cache and by the store', async () => {
    const w = world();
    const first = delivered(created('O-1', 'T-1'));
    await applyEntry(w.deps, first);
    w.metrics.length = 0;
    expect(await applyEntry(w.deps, first)).toEqual({ kind: 'duplicate', orderId: 'O-1' });
    expect(w.metrics).toEqual([
      { name: 'entries.duplicate', value: 1, properties: dimensions(first, created('O-1', 'T-1')) },
    ]);
    const cold = { ...w.deps, cache: createOrderCache() };
    expect(await applyEntry(cold, first)).toEqual({ kind: 'duplicate', orderId: 'O-1' });
    expect(w.sends).toEqual([]);
  });

  it("on 409 for the entry's record reads the record, and its digest decides; a record gone again is decided again", async () => {
    const w = world();
    const first = delivered(created('O-1', 'T-1'));
    await applyEntry(w.deps, first);
    // A cold cache takes the order for new: the batch's create of the record gets 409.
    const cold = world(w.orders);
    expect(await applyEntry(cold.deps, first)).toEqual({ kind: 'duplicate', orderId: 'O-1' });
    expect(cold.reads).toEqual(['O-1/txn:T-1', 'O-1/order']);

    const gone = world(w.orders);
    const read = gone.deps.orders.read;
    let hidden = false;
    gone.deps = {
      ...gone.deps,
      orders: {
        ...gone.deps.orders,
        read: async (partitionKey, id) => {
          if (id !== 'txn:T-1' || hidden) return read(partitionKey, id);
          hidden = true;
          gone.reads.push(`${partitionKey}/${id}`);
          return undefined;
        },
      },
    };
    expect(await applyEntry(gone.deps, first)).toEqual({ kind: 'duplicate', orderId: 'O-1' });
    // Lost: the header read again, and the record read again for the decision.
    expect(gone.reads).toEqual(['O-1/txn:T-1', 'O-1/order', 'O-1/txn:T-1']);
    expect(gone.metrics.map((m) => m.name)).toEqual(['entries.duplicate']);
  });

  it('parks an invalid message with what it came with, under its session', async () => {
    const w = world();
    const message: DeliveredMessage = {
      ...delivered(created('O-1', 'T-1'), 'corr'),
      body: { transactionId: 'T-1', orderId: 'O-1' },
      applicationProperties: { batchId: 'B-1' },
    };
    expect(await applyEntry(w.deps, message)).toEqual({
      kind: 'parked',
      reason: 'invalid',
      orderId: 'O-1',
    });
    expect(w.sends).toHaveLength(1);
    expect(w.sends[0].queue).toBe(QUEUE.parked);
    expect(w.sends[0].messages).toEqual([
      {
        messageId: message.messageId,
        body: message.body,
        correlationId: 'corr',
        subject: 'invalid',
        applicationProperties: {
          batchId: 'B-1',
          [PARK_PROPERTY.reason]: 'invalid',
          [PARK_PROPERTY.description]: expect.stringContaining('sequence'),
          [PARK_PROPERTY.queue]: QUEUE.orderTransactions,
          [PARK_PROPERTY.sessionId]: 'O-1',
          [PARK_PROPERTY.transactionId]: 'T-1',
        },
      },
    ]);
    expect(await header(w, 'O-1')).toBeUndefined();
    const noSession = { ...message, sessionId: undefined };
    expect(await applyEntry(w.deps, noSession)).toEqual({
      kind: 'parked',
      reason: 'invalid',
      orderId: null,
    });
  });

  it('parks a misrouted entry and a sequence conflict, with the reason and the transaction', async () => {
    const w = world();
    const misrouted = { ...delivered(created('O-1', 'T-1')), sessionId: 'O-2' };
    expect(await applyEntry(w.deps, misrouted)).toEqual({
      kind: 'parked',
      reason: 'misrouted',
      orderId: 'O-2',
    });
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    w.sends.length = 0;
    const conflict = delivered(added('O-1', 'T-9', 1), 'corr');
    expect(await applyEntry(w.deps, conflict)).toEqual({
      kind: 'parked',
      reason: 'sequence-conflict',
      orderId: 'O-1',
    });
    expect(w.sends[0].messages).toEqual([
      {
        messageId: conflict.messageId,
        body: conflict.body,
        correlationId: 'corr',
        subject: 'sequence-conflict',
        applicationProperties: {
          ...conflict.applicationProperties,
          [PARK_PROPERTY.reason]: 'sequence-conflict',
          [PARK_PROPERTY.description]: 'sequence 1 of order O-1 is already taken by another transaction',
          [PARK_PROPERTY.queue]: QUEUE.orderTransactions,
          [PARK_PROPERTY.sessionId]: 'O-1',
          [PARK_PROPERTY.transactionId]: 'T-9',
        },
      },
    ]);
    expect(await header(w, 'O-1')).toMatchObject({ appliedSequence: 1, outbox: null });
  });

  it('parks a transaction seen with other content as a digest mismatch, by the cache and by the store', async () => {
    const w = world();
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    await applyEntry(w.deps, delivered(added('O-1', 'T-2', 2, 1, 100)));
    w.sends.length = 0;
    const other = delivered(added('O-1', 'T-2', 2, 7, 100));
    expect(await applyEntry(w.deps, other)).toEqual({
      kind: 'parked',
      reason: 'digest-mismatch',
      orderId: 'O-1',
    });
    const cold = { ...w.deps, cache: createOrderCache() };
    // A cold cache decides on the stored header (entry 2 is taken: it reads the record).
    expect(await applyEntry(cold, other)).toEqual({
      kind: 'parked',
      reason: 'digest-mismatch',
      orderId: 'O-1',
    });
    expect(w.sends.map((s) => s.messages[0].subject)).toEqual(['digest-mismatch', 'digest-mismatch']);
    expect(w.events.filter((e) => e.name === 'Alert.DigestMismatch')).toHaveLength(2);
  });

  it('parks a rejected entry through the outbox, then removes the park from the stored outbox', async () => {
    const w = world();
    // An amendment of a line the order has not: it takes its slot and is rejected.
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    const bad = delivered(amended('O-1', 'T-2', 2, 'T-X', 3), 'corr');
    expect(await applyEntry(w.deps, bad)).toEqual({
      kind: 'rejected',
      orderId: 'O-1',
      applied: 0,
      rejected: 1,
      submitted: false,
    });
    expect(w.sends).toEqual([
      {
        queue: QUEUE.parked,
        messages: [
          {
            messageId: bad.messageId,
            body: bad.body,
            // The order had none: the entry's own.
            correlationId: 'corr',
            subject: 'rejected',
            applicationProperties: {
              ...bad.applicationProperties,
              [PARK_PROPERTY.reason]: 'rejected',
              [PARK_PROPERTY.description]:
                'TransactionAmended at sequence 2: amends T-X, which is not a line of order O-1',
              [PARK_PROPERTY.queue]: QUEUE.orderTransactions,
              [PARK_PROPERTY.sessionId]: 'O-1',
              [PARK_PROPERTY.transactionId]: 'T-2',
            },
          },
        ],
      },
    ]);
    expect(w.replaces).toEqual(['O-1/order']);
    const stored = await header(w, 'O-1');
    expect(stored).toMatchObject({ appliedSequence: 2, outbox: null });
    expect(stored).toMatchObject(w.deps.cache.get('O-1')?.document ?? { cached: false });
    expect(w.deps.cache.get('O-1')?.etag).toBe((await w.orders.read('O-1', ORDER_HEADER_ID))?.etag);
    // The next write on the order parks nothing again.
    w.sends.length = 0;
    await applyEntry(w.deps, delivered(added('O-1', 'T-3', 3)));
    expect(w.sends).toEqual([]);
  });

  it("parks a rejected entry with the order's correlationId", async () => {
    const w = world();
    await applyEntry(w.deps, delivered(created('O-1', 'T-1'), 'corr-1'));
    await applyEntry(w.deps, delivered(amended('O-1', 'T-2', 2, 'T-X', 3), 'corr-2'));
    expect(w.sends[0].messages[0].correlationId).toBe('corr-1');
  });

  it('starts the fulfillment of a submitted order once, and tells it; the start leaves the cache, not the store', async () => {
    const w = world();
    await applyEntry(w.deps, delivered(created('O-1', 'T-1'), 'corr'));
    w.metrics.length = 0;
    const last = delivered(added('O-1', 'T-2', 2, 2, 150, true));
    expect(await applyEntry(w.deps, last)).toEqual({
      kind: 'applied',
      orderId: 'O-1',
      applied: 1,
      rejected: 0,
      submitted: true,
    });
    const input = { orderId: 'O-1', customerId: 'C-O-1', currency: 'EUR', total: 300, correlationId: 'corr' };
    expect(w.started).toEqual([input]);
    expect(w.events).toEqual([
      { name: 'OrderSubmitted', properties: { orderId: 'O-1', total: 300, correlationId: 'corr' } },
    ]);
    expect(w.replaces).toEqual([]);
    expect((await header(w, 'O-1'))?.outbox).toEqual({ parks: [], startFulfillment: input });
    expect(w.deps.cache.get('O-1')?.document.outbox).toBeNull();
    // The next write leaves it out; the rejected entry after the final one parks, the saga is not started again.
    await applyEntry(w.deps, delivered(added('O-1', 'T-3', 3)));
    expect(w.started).toEqual([input]);
    expect((await header(w, 'O-1'))?.outbox).toBeNull();
    expect(w.sends.map((s) => s.messages.map((m) => m.subject))).toEqual([['rejected']]);
  });

  it('parks the entries rejected after a final one with the saga start, and empties the stored outbox', async () => {
    const w = world();
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    await applyEntry(w.deps, delivered(added('O-1', 'T-3', 3, 1, 100, true)));
    await applyEntry(w.deps, delivered(added('O-1', 'T-4', 4)));
    const outcome = await applyEntry(w.deps, delivered(added('O-1', 'T-2', 2)));
    expect(outcome).toEqual({ kind: 'applied', orderId: 'O-1', applied: 2, rejected: 1, submitted: true });
    expect(w.started.map((input) => input.orderId)).toEqual(['O-1']);
    expect(w.sends.map((s) => s.messages.map((m) => m.applicationProperties?.transactionId))).toEqual([
      ['T-4'],
    ]);
    expect(w.replaces).toEqual(['O-1/order']);
    expect((await header(w, 'O-1'))?.outbox).toBeNull();
  });

  it('removes a park from the stored outbox on what another writer wrote meanwhile', async () => {
    const w = world();
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    w.beforeReplace = async () => {
      // Another writer changes the header (its etag) after the batch, before the removal.
      const stored = await w.orders.read<OrderDocument>('O-1', ORDER_HEADER_ID);
      if (stored === undefined) throw new Error('no order');
      await w.orders.replace({ ...stored.document, total: 999 }, { ifMatch: stored.etag });
    };
    await applyEntry(w.deps, delivered(amended('O-1', 'T-2', 2, 'T-X', 3)));
    expect(w.replaces).toEqual(['O-1/order', 'O-1/order']);
    expect(await header(w, 'O-1')).toMatchObject({ total: 999, outbox: null, appliedSequence: 2 });
    expect(w.deps.cache.get('O-1')?.document).toMatchObject({ total: 999, outbox: null });
  });

  it('writes nothing more when another writer removed the park meanwhile, or left only its own', async () => {
    for (const othersOutbox of ['none', 'its own'] as const) {
      const w = world();
      await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
      w.beforeReplace = async () => {
        const stored = await w.orders.read<OrderDocument>('O-1', ORDER_HEADER_ID);
        if (stored === undefined || stored.document.outbox === null) throw new Error('no outbox');
        const own = { ...stored.document.outbox.parks[0], transactionId: 'T-OTHER', messageId: 'M-OTHER' };
        const outbox = othersOutbox === 'none' ? null : { parks: [own], startFulfillment: null };
        await w.orders.replace({ ...stored.document, outbox }, { ifMatch: stored.etag });
      };
      await applyEntry(w.deps, delivered(amended('O-1', 'T-2', 2, 'T-X', 3)));
      expect(w.replaces).toEqual(['O-1/order']);
      expect((await header(w, 'O-1'))?.outbox?.parks.map((p) => p.transactionId) ?? []).toEqual(
        othersOutbox === 'none' ? [] : ['T-OTHER'],
      );
    }
  });

  it('gives up the removal when the order is gone meanwhile', async () => {
    const w = world();
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    w.beforeReplace = async () => {
      await w.orders.delete('O-1', ORDER_HEADER_ID);
    };
    await applyEntry(w.deps, delivered(amended('O-1', 'T-2', 2, 'T-X', 3)));
    expect(w.replaces).toEqual(['O-1/order']);
    expect(await header(w, 'O-1')).toBeUndefined();
    expect(w.deps.cache.get('O-1')).toBeUndefined();
  });

  it('reads nothing of an order its cache holds, and the header once when its cache is cold', async () => {
    const w = world();
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    await applyEntry(w.deps, delivered(added('O-1', 'T-2', 2)));
    expect(w.reads).toEqual([]);
    const cold = world(w.orders);
    await applyEntry(cold.deps, delivered(added('O-1', 'T-3', 3)));
    // Its first decision is on a new order (a create, which loses): then the header is read.
    expect(cold.reads).toEqual(['O-1/order']);
  });

  it('parks an entry that came without a session as misrouted', async () => {
    const w = world();
    const message = { ...delivered(created('O-1', 'T-1')), sessionId: undefined };
    expect(await applyEntry(w.deps, message)).toEqual({
      kind: 'parked',
      reason: 'misrouted',
      orderId: null,
    });
    expect(w.sends[0].messages[0].applicationProperties?.[PARK_PROPERTY.description]).toBe(
      "orderId O-1 arrived in session ; an entry must travel in its order's session",
    );
  });

  it('gives up with a TransientError when the order keeps changing under every write', async () => {
    const w = world();
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    w.beforeBatch = () => bump(w, 'O-1');
    // A final entry changes the order's status, so its change writes the header, on its etag.
    const error = await failure(applyEntry(w.deps, delivered(added('O-1', 'T-2', 2, 1, 100, true))));
    expect(error).toBeInstanceOf(TransientError);
    expect(error).toMatchObject({
      code: 'order-contention',
      message: 'order O-1 kept changing under 10 consecutive writes',
    });
  });

  it('gives up with a TransientError when the outbox keeps changing under every removal', async () => {
    const w = world();
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    const again = async (): Promise<void> => {
      await bump(w, 'O-1');
      w.beforeReplace = again;
    };
    w.beforeReplace = again;
    const error = await failure(applyEntry(w.deps, delivered(amended('O-1', 'T-2', 2, 'T-X', 3))));
    expect(error).toBeInstanceOf(TransientError);
    expect(error).toMatchObject({
      code: 'order-contention',
      message: 'the outbox of order O-1 kept changing under 10 consecutive writes',
    });
  });

  it.each([
    ['took the parks and left the saga start', { parks: 0 }, null],
    ['took the parks and added one of its own', { parks: 1 }, { parks: ['T-OTHER'], startFulfillment: null }],
  ])(
    'after a change with parks and a saga start, removes what was done when another writer %s',
    async (_what, others, expected) => {
      const w = world();
      await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
      await applyEntry(w.deps, delivered(added('O-1', 'T-3', 3, 1, 100, true)));
      await applyEntry(w.deps, delivered(added('O-1', 'T-4', 4)));
      w.beforeReplace = async () => {
        const stored = await w.orders.read<OrderDocument>('O-1', ORDER_HEADER_ID);
        const outbox = stored?.document.outbox;
        if (stored === undefined || outbox === null || outbox === undefined) throw new Error('no outbox');
        const own = { ...outbox.parks[0], transactionId: 'T-OTHER', messageId: 'M-OTHER' };
        await w.orders.replace(
          { ...stored.document, outbox: { ...outbox, parks: others.parks === 0 ? [] : [own] } },
          { ifMatch: stored.etag },
        );
      };
      await applyEntry(w.deps, delivered(added('O-1', 'T-2', 2)));
      expect(w.started.map((input) => input.orderId)).toEqual(['O-1']);
      expect(w.replaces).toEqual(['O-1/order', 'O-1/order']);
      const outbox = (await header(w, 'O-1'))?.outbox ?? null;
      expect(
        outbox === null
          ? null
          : { parks: outbox.parks.map((p) => p.transactionId), startFulfillment: outbox.startFulfillment },
      ).toEqual(expected);
    },
  );

  it('goes on releasing a buffer left releasable, from its cache, on any delivery', async () => {
    const w = world();
    await releasableOrder(w, added('O-1', 'T-3', 3, 1, 100));
    const duplicate = delivered(created('O-1', 'T-1'));
    expect(await applyEntry(w.deps, duplicate)).toEqual({ kind: 'duplicate', orderId: 'O-1' });
    expect(await header(w, 'O-1')).toMatchObject({
      appliedSequence: 3,
      buffered: [],
      lineCount: 2,
      total: 200,
    });
    expect(w.metrics).toEqual([
      { name: 'entries.duplicate', value: 1, properties: dimensions(duplicate, created('O-1', 'T-1')) },
      { name: 'entries.applied', value: 1, properties: dimensions(duplicate, created('O-1', 'T-1')) },
    ]);
    // The header once, after the batch found the entry's record (the release reads the cache).
    expect(w.reads.filter((read) => read === 'O-1/order')).toEqual(['O-1/order']);
  });

  it('releases a buffer on what another writer wrote meanwhile', async () => {
    const w = world();
    await releasableOrder(w, added('O-1', 'T-3', 3, 1, 100));
    let batches = 0;
    w.beforeBatch = async () => {
      batches += 1;
      // The entry's own batch (it finds the record), then the release's first: another writer first.
      if (batches === 2) await bump(w, 'O-1', { total: 100, correlationId: 'other' });
    };
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    expect(batches).toBe(3);
    expect(await header(w, 'O-1')).toMatchObject({
      appliedSequence: 3,
      buffered: [],
      correlationId: 'other',
    });
  });

  it('gives up with a TransientError when the buffer keeps changing under every release', async () => {
    const w = world();
    await releasableOrder(w, added('O-1', 'T-3', 3, 1, 100));
    let batches = 0;
    w.beforeBatch = async () => {
      batches += 1;
      if (batches >= 2) await bump(w, 'O-1', { total: 100 });
    };
    const error = await failure(applyEntry(w.deps, delivered(created('O-1', 'T-1'))));
    expect(error).toBeInstanceOf(TransientError);
    expect(error).toMatchObject({
      code: 'order-contention',
      message: 'the buffer of order O-1 kept changing under 10 consecutive writes',
    });
  });

  it('releases a buffered entry that breaks a rule: parked, not counted as applied', async () => {
    const w = world();
    await releasableOrder(w, amended('O-1', 'T-3', 3, 'T-X', 2));
    await applyEntry(w.deps, delivered(created('O-1', 'T-1')));
    expect(await header(w, 'O-1')).toMatchObject({ appliedSequence: 3, buffered: [], outbox: null });
    expect(w.metrics.map((m) => m.name)).toEqual(['entries.duplicate', 'messages.parked']);
    expect(w.sends.map((s) => s.messages.map((m) => m.applicationProperties?.transactionId))).toEqual([
      ['T-3'],
    ]);
  });
});
