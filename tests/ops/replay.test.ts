/**
 * Replay end to end on the embedded runtime: the app parks or dead-letters messages, an operator
 * replays them (src/services/operations/replay.ts on local/store/message-operations.ts), the app drains, and
 * the outcome is what the prediction said.
 */
import { TransientError } from '../../src/domain/errors';
import type { Entry } from '../../src/domain/entry';
import type { OrderLine } from '../../src/domain/order';
import { entryDigest } from '../../src/domain/digest';
import {
  ORDER_HEADER_ID,
  readOrderLines,
  transactionRecordId,
  type OrderDocument,
} from '../../src/services/order-documents';
import { parkedMessage, parkIdFor } from '../../src/services/convoy/parking';
import type { BatchOperation, BatchResult } from '../../src/services/ports';
import { replayDeadLettered, replayParked } from '../../src/services/operations/replay';
import { added, created, entryMessageFor, ledger, messageIdOf } from '../support/e2e';
import {
  moveClockPastDuplicateWindow,
  opsWorld,
  useOpsWorlds,
  parkedReasons,
  run,
  type OpsWorld,
} from '../support/ops';

useOpsWorlds();

const invocations = (w: OpsWorld, name: 'orderTransactions' | 'ledgerProcessor'): number =>
  w.app.host.stats().byFunction[name].invocations;

/** The order's header with its lines, read from its transaction records. */
async function orderOf(
  w: OpsWorld,
  orderId: string,
): Promise<(OrderDocument & { lines: OrderLine[] }) | undefined> {
  const header = (await w.app.orders.read<OrderDocument>(orderId, ORDER_HEADER_ID))?.document;
  return header && { ...header, lines: await readOrderLines(w.app.orders, orderId) };
}

describe('replaying a parked message', () => {
  it('misrouted: refused as it would be misrouted again; forced, it is processed and parked again', async () => {
    const world = opsWorld();
    const { app, operations, deps } = world;
    const entry = added('O-A', 'T-A2', 2);
    const id = messageIdOf(entry);
    await app.broker.send('order-transactions', [entryMessageFor(entry, 'O-B')]);
    await app.drain();
    expect(await parkedReasons(operations)).toEqual({ [id]: 'misrouted' });
    const before = (await operations.findParked(id))!;

    const refused = await replayParked(deps, id);
    expect(refused).toMatchObject({
      replayed: false,
      refusal: 'would-park-again',
      prediction: { outcome: 'parked', reason: 'misrouted' },
    });
    expect(refused.replayed === false && refused.reason).toContain('as misrouted again');

    // Forced, it goes at once, under a fresh id that no duplicate detection can drop.
    const handled = invocations(world, 'orderTransactions');
    const replayed = await replayParked(deps, id, { force: true });
    expect(replayed).toMatchObject({
      replayed: true,
      forced: true,
      queue: 'order-transactions',
      sessionId: 'O-B',
      sentAs: `replay-p${before.sequenceNumber}:${id}`,
    });
    await app.drain();
    expect(invocations(world, 'orderTransactions')).toBe(handled + 1);
    // Parked again, under the id it came back with.
    const again = (await operations.findParked(replayed.replayed ? replayed.sentAs : id))!;
    expect(again.park).toMatchObject({ reason: 'misrouted', fromSessionId: 'O-B' });
    expect(Number(again.sequenceNumber)).toBeGreaterThan(Number(before.sequenceNumber));
    expect((await operations.listParked()).messages).toHaveLength(1);
    expect(await orderOf(world, 'O-A')).toBeUndefined();
  });

  it('rejected on an order that did not exist: refused as having no effect, or as parked again', async () => {
    const world = opsWorld();
    const { app, operations, deps } = world;
    const first = added('O-R', 'T-R1', 1);
    const second = added('O-R', 'T-R2', 2);
    await run(world, [ledger('B-R', [first, second])]);
    expect(await parkedReasons(operations)).toEqual({
      [messageIdOf(first)]: 'rejected',
      [messageIdOf(second)]: 'rejected',
    });

    // Its slot is taken by itself: the consumer would count it a duplicate.
    const noEffect = await replayParked(deps, messageIdOf(first));
    expect(noEffect).toMatchObject({
      replayed: false,
      refusal: 'no-effect',
      prediction: { outcome: 'duplicate' },
    });
    // Its park was done and left the order's outbox: a replay would not repeat it either.
    await expect(replayParked(deps, messageIdOf(second))).resolves.toMatchObject({
      replayed: false,
      refusal: 'no-effect',
      prediction: { outcome: 'duplicate' },
    });

    // Forced, each goes back under a fresh id at once, and is counted a duplicate: both are gone.
    const duplicatesBefore = app.telemetry.total('entries.duplicate');
    await expect(replayParked(deps, messageIdOf(first), { force: true })).resolves.toMatchObject({
      replayed: true,
      sentAs: expect.stringMatching(/^replay-p\d+:T-R1:/),
    });
    await expect(replayParked(deps, messageIdOf(second), { force: true })).resolves.toMatchObject({
      replayed: true,
    });
    await app.drain();
    expect(app.telemetry.total('entries.duplicate')).toBe(duplicatesBefore + 2);
    expect(await parkedReasons(operations)).toEqual({});
    expect(await orderOf(world, 'O-R')).toMatchObject({
      status: 'pending',
      appliedSequence: 2,
      lineCount: 0,
    });
    expect(await readOrderLines(world.app.orders, 'O-R')).toEqual([]);
  });

  it('sequence-conflict with a buffered rival: refused before and after the gap fills; forced, parked again', async () => {
    const world = opsWorld();
    const { app, operations, deps } = world;
    const rival = added('O-S', 'T-S3b', 3, 9, 9);
    await run(world, [
      ledger('B-S1', [created('O-S', 'T-S1'), added('O-S', 'T-S3a', 3)]),
      ledger('B-S2', [rival]),
    ]);
    const id = messageIdOf(rival);
    expect(await parkedReasons(operations)).toEqual({ [id]: 'sequence-conflict' });
    await expect(replayParked(deps, id)).resolves.toMatchObject({
      replayed: false,
      refusal: 'would-park-again',
      prediction: { outcome: 'parked', reason: 'sequence-conflict' },
    });

    // Filling the gap applies the buffered rival: the slot stays taken.
    await run(world, [ledger('B-S3', [added('O-S', 'T-S2', 2)])]);
    expect(await orderOf(world, 'O-S')).toMatchObject({ appliedSequence: 3, buffered: [] });
    const refused = await replayParked(deps, id);
    expect(refused).toMatchObject({ replayed: false, refusal: 'would-park-again' });
    expect(refused.replayed === false && refused.reason).toContain(
      'sequence 3 of order O-S is already taken',
    );

    const sentAs = `replay-p${(await operations.findParked(id))!.sequenceNumber}:${id}`;
    await expect(replayParked(deps, id, { force: true })).resolves.toMatchObject({
      replayed: true,
      forced: true,
      sentAs,
    });
    await app.drain();
    expect(await parkedReasons(operations)).toEqual({ [sentAs]: 'sequence-conflict' });
    expect((await readOrderLines(world.app.orders, 'O-S')).map((line) => line.transactionId)).toEqual([
      'T-S2',
      'T-S3a',
    ]);
  });

  it('digest-mismatch: a reused transactionId stays refused', async () => {
    const world = opsWorld();
    const { operations, deps } = world;
    const reused: Entry = {
      transactionId: 'T-D1',
      orderId: 'O-D',
      sequence: 1,
      type: 'OrderCreated',
      data: { customerId: 'C-other', currency: 'USD' },
    };
    await run(world, [ledger('B-D1', [created('O-D', 'T-D1')]), ledger('B-D2', [reused])]);
    const id = messageIdOf(reused);
    expect(id).not.toBe(messageIdOf(created('O-D', 'T-D1')));
    expect(await parkedReasons(operations)).toEqual({ [id]: 'digest-mismatch' });
    await expect(replayParked(deps, id)).resolves.toMatchObject({
      replayed: false,
      refusal: 'would-park-again',
      prediction: { outcome: 'parked', reason: 'digest-mismatch' },
    });
  });

  it('an invalid ledger entry: nothing to fix, refused even when forced, as it would come back under another id', async () => {
    const world = opsWorld();
    const { operations, deps } = world;
    const broken = { transactionId: 'T-I2', orderId: 'O-I', sequence: 2, type: 'TransactionAdded', data: {} };
    await run(world, [ledger('B-I', [created('O-I', 'T-I1'), broken])]);
    expect(await parkedReasons(operations)).toEqual({ [parkIdFor('invalid', broken)]: 'invalid' });

    const parked = (await operations.findParked(parkIdFor('invalid', broken)))!;
    const refused = await replayParked(deps, parkIdFor('invalid', broken));
    expect(refused).toMatchObject({
      replayed: false,
      refusal: 'entry-still-invalid',
      prediction: { outcome: 'parked', reason: 'invalid', description: parked.park.description },
    });
    expect(refused.replayed === false && refused.reason).toContain('entries[1].data.sku');

    moveClockPastDuplicateWindow();
    await expect(replayParked(deps, parkIdFor('invalid', broken), { force: true })).resolves.toMatchObject({
      replayed: false,
      refusal: 'entry-still-invalid',
    });
    expect(await parkedReasons(operations)).toEqual({ [parkIdFor('invalid', broken)]: 'invalid' });
  });

  it('a ledger entry a stricter deployment parked, valid now: replayed as its batch, applied as it would have been', async () => {
    const world = opsWorld();
    const { app, operations, deps } = world;
    const entry = created('O-V', 'T-V1');
    await app.broker.send('parked', [
      parkedMessage({
        fromQueue: 'ledger',
        messageId: 'B-V#3',
        sessionId: 'main',
        body: entry,
        correlationId: 'B-V',
        applicationProperties: { batchId: 'B-V', entryIndex: 3 },
        transactionId: 'T-V1',
        reason: 'invalid',
        description: 'entries[3].data.currency must be one of EUR, USD',
      }),
    ]);
    moveClockPastDuplicateWindow();
    await expect(replayParked(deps, 'B-V#3')).resolves.toMatchObject({
      replayed: true,
      forced: false,
      queue: 'ledger',
      sessionId: 'main',
      prediction: { outcome: 'forwarded' },
    });
    await app.drain();
    expect(await parkedReasons(operations)).toEqual({});
    expect(await orderOf(world, 'O-V')).toMatchObject({ status: 'open', customerId: 'C-O-V' });
    // Forwarded under the id the ledger gives the entry, as the first time would have.
    expect(app.broker.stats()['order-transactions'].sent).toBe(1);
    expect((await app.orders.read('O-V', transactionRecordId('T-V1')))?.document).toMatchObject({
      transactionId: 'T-V1',
      digest: entryDigest(entry),
      outcome: 'applied',
    });
  });

  it('an unknown messageId is not found', async () => {
    const world = opsWorld();
    await expect(replayParked(world.deps, 'nope')).resolves.toMatchObject({
      replayed: false,
      refusal: 'not-found',
    });
  });
});

/** Makes every transactional batch on one order's partition fail, until healed. */
function failBatchesOf(w: OpsWorld, orderId: string, mode: 'before' | 'after-commit'): { heal: () => void } {
  const real = w.app.orders.batch.bind(w.app.orders);
  let failing = true;
  w.app.orders.batch = async (
    partitionKey: string,
    operations: readonly BatchOperation[],
  ): Promise<BatchResult> => {
    if (!failing || partitionKey !== orderId) return real(partitionKey, operations);
    if (mode === 'after-commit') await real(partitionKey, operations);
    throw new TransientError('store-unavailable', `test: the store fails for order ${orderId}`);
  };
  return { heal: () => (failing = false) };
}

describe('replaying a dead-lettered message', () => {
  it('transient failures that never cleared: after the fix, the replays apply the order', async () => {
    const world = opsWorld({ maxDeliveryCount: 3 });
    const { app, operations, deps } = world;
    const store = failBatchesOf(world, 'O-F', 'before');
    const first = created('O-F', 'T-F1');
    const second = added('O-F', 'T-F2', 2, 2, 500);
    await run(world, [ledger('B-F', [first, second]), ledger('B-G', [created('O-G', 'T-G1')])]);

    const dead = (await operations.listDeadLettered('order-transactions')).messages;
    expect(dead.map((message) => [message.messageId, message.sessionId, message.deliveryCount])).toEqual([
      [messageIdOf(first), 'O-F', 3],
      [messageIdOf(second), 'O-F', 3],
    ]);
    expect(await orderOf(world, 'O-F')).toBeUndefined();
    expect(await orderOf(world, 'O-G')).toMatchObject({ status: 'open' });

    // Replayed at once, under fresh ids: no duplicate detection window to wait for.
    store.heal();
    // Out of order on purpose: the second waits in the buffer for the first.
    await expect(replayDeadLettered(deps, 'order-transactions', messageIdOf(second))).resolves.toMatchObject({
      replayed: true,
      forced: false,
      queue: 'order-transactions',
      sessionId: 'O-F',
      prediction: { outcome: 'buffered' },
    });
    await app.drain();
    await expect(replayDeadLettered(deps, 'order-transactions', messageIdOf(first))).resolves.toMatchObject({
      replayed: true,
      prediction: { outcome: 'applied', description: expect.stringContaining('releasing 1 buffered') },
    });
    await app.drain();

    expect(await orderOf(world, 'O-F')).toMatchObject({
      status: 'open',
      appliedSequence: 2,
      total: 1000,
      lines: [{ transactionId: 'T-F2', quantity: 2, unitPrice: 500 }],
    });
    expect((await operations.listDeadLettered('order-transactions')).messages).toEqual([]);
    expect((await operations.listParked()).messages).toEqual([]);
  });

  it('a failure after the commit: the effect is there, so a replay is refused as having no effect', async () => {
    const world = opsWorld({ maxDeliveryCount: 2 });
    const { app, operations, deps } = world;
    const store = failBatchesOf(world, 'O-C', 'after-commit');
    const entry = created('O-C', 'T-C1');
    // Its write committed, every completion failed: applied, and dead-lettered too, until the replay.
    world.twoOutcomes = 1;
    await run(world, [ledger('B-C', [entry])]);
    expect(
      (await operations.listDeadLettered('order-transactions')).messages.map((m) => m.messageId),
    ).toEqual([messageIdOf(entry)]);
    store.heal();
    moveClockPastDuplicateWindow();

    await expect(replayDeadLettered(deps, 'order-transactions', messageIdOf(entry))).resolves.toMatchObject({
      replayed: false,
      refusal: 'no-effect',
      prediction: { outcome: 'duplicate' },
    });
    await expect(
      replayDeadLettered(deps, 'order-transactions', messageIdOf(entry), { force: true }),
    ).resolves.toMatchObject({ replayed: true, forced: true });
    await app.drain();
    expect((await operations.listDeadLettered('order-transactions')).messages).toEqual([]);
    expect(await orderOf(world, 'O-C')).toMatchObject({ status: 'open', appliedSequence: 1 });
    // The replay counted a duplicate: one outcome again.
    world.twoOutcomes = 0;
  });

  it('a dead letter of another queue is not found in order-transactions', async () => {
    const world = opsWorld();
    await expect(replayDeadLettered(world.deps, 'ledger', 'B-1')).resolves.toMatchObject({
      replayed: false,
      refusal: 'not-found',
    });
  });
});

describe('the session backlog', () => {
  it('counts pending messages per session while nothing consumes them', async () => {
    const world = opsWorld();
    const { app, operations } = world;
    await app.host.stop();
    await app.broker.send('order-transactions', [
      entryMessageFor(created('O-1', 'T-11')),
      entryMessageFor(added('O-2', 'T-21', 2)),
      entryMessageFor(added('O-1', 'T-12', 2)),
    ]);
    const enqueued = app.broker.peek('order-transactions').map((message) => message.enqueuedTimeUtc);
    await expect(operations.backlog('order-transactions')).resolves.toEqual({
      queue: 'order-transactions',
      activeMessages: 3,
      deadLetteredMessages: 0,
      oldestEnqueuedTimeUtc: Math.min(...enqueued),
      sessions: [
        { sessionId: 'O-1', pending: 2, oldestEnqueuedTimeUtc: Math.min(enqueued[0], enqueued[2]) },
        { sessionId: 'O-2', pending: 1, oldestEnqueuedTimeUtc: enqueued[1] },
      ],
      truncated: false,
    });
    await expect(operations.backlog('parked')).resolves.toMatchObject({
      sessions: [],
      activeMessages: 0,
      oldestEnqueuedTimeUtc: null,
    });
  });
});
