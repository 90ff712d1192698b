/**
 * No committed effect is lost: the effects of an order's write (the park of a rejected
 * entry, the saga start) stay pending in its outbox until done, whatever is written after it; a
 * replay of the message that caused them redoes them; a late re-send parks nothing twice. Each
 * dependency of an effect goes down for longer than the whole redelivery budget (2 deliveries of
 * 10 s of backoff here), so the message that caused it dead-letters; once the dependency is back,
 * the effect is done, once.
 */
import type { Entry } from '../../src/domain/entry';
import { faultRandom, type OutageName } from '../../local/faults';
import { OUTAGE_START_CALLS } from '../../local/outages';
import { replayDeadLettered } from '../../src/services/operations/replay';
import type { OrderLine } from '../../src/domain/order';
import { readOrderLines, readOrderState, type OrderDocument } from '../../src/services/order-documents';
import { added, amended, created, ledger, messageIdOf } from '../support/e2e';
import { moveClockPastDuplicateWindow, opsWorld, useOpsWorlds, run, type OpsWorld } from '../support/ops';

useOpsWorlds();

/** A seed whose outage of `name` begins at the dependency's `call`-th call. */
function seedStartingAt(name: OutageName, call: number): number {
  for (let seed = 1; ; seed++) {
    if (1 + Math.floor(faultRandom(seed, name)() * OUTAGE_START_CALLS) === call) return seed;
  }
}

/** 500 s of outage against 2 deliveries x 10 s of backoff, the clock 1000 times faster. */
function downLongerThanRedeliveries(name: OutageName, startCall: number): OpsWorld {
  return opsWorld({
    seed: seedStartingAt(name, startCall),
    faults: { [name]: 500 },
    maxDeliveryCount: 2,
    handlerBackoff: { firstDelayMs: 1_000, factor: 2, maxDelayMs: 4_000, budgetMs: 10_000 },
    catalog: { 'SKU-T-12': 10 },
  });
}

/** Until the outage is over, by the app's clock. */
async function outageOver(w: OpsWorld): Promise<void> {
  const hit = w.app.outages.filter((outage) => outage.injected() > 0);
  expect(hit).toHaveLength(1);
  const until = hit[0].window()?.until ?? 0;
  while (w.app.convoyClock.now() < until) await w.app.convoyClock.sleep(10_000);
}

const deadLetteredIds = async (w: OpsWorld): Promise<string[]> =>
  (await w.operations.listDeadLettered('order-transactions')).messages.map((m) => m.messageId);

const parkedIds = async (w: OpsWorld): Promise<string[]> =>
  (await w.operations.listParked()).messages.map((m) => m.messageId);

async function sagaOf(w: OpsWorld, orderId: string): Promise<string | null> {
  const report = await w.app.report();
  return report.orders.find((order) => order.orderId === orderId)?.saga?.status ?? null;
}

/** The order's header with its lines, read from its transaction records. */
async function orderOf(
  w: OpsWorld,
  orderId: string,
): Promise<(OrderDocument & { lines: OrderLine[] }) | undefined> {
  const header = await readOrderState(w.app.orders, orderId);
  return header && { ...header, lines: await readOrderLines(w.app.orders, orderId) };
}

const submitting: Entry = added('O-1', 'T-12', 2, 1, 100, true);
const batch = ledger('B-1', [created('O-1', 'T-11'), submitting]);
const late: Entry = added('O-1', 'T-13', 3, 1, 100);
const rejected: Entry = amended('O-2', 'T-22', 2, 'T-NOPE', 1);
const parkingBatch = ledger('B-2', [created('O-2', 'T-21'), rejected]);

describe('the saga start, with the durable task hub down past every redelivery', () => {
  it('dead-letters the final entry, whose write committed; a replay at once starts the saga, once', async () => {
    const world = downLongerThanRedeliveries('durableOutage', 1);
    await run(world, [batch]);
    expect(await deadLetteredIds(world)).toEqual([messageIdOf(submitting)]);
    expect(await orderOf(world, 'O-1')).toMatchObject({ status: 'submitted' });
    expect(await sagaOf(world, 'O-1')).toBeNull();

    await outageOver(world);
    const replay = await replayDeadLettered(world.deps, 'order-transactions', messageIdOf(submitting));
    expect(replay).toMatchObject({ replayed: true, forced: false });
    await world.app.drain();
    expect(await sagaOf(world, 'O-1')).toBe('completed');
    expect(await deadLetteredIds(world)).toEqual([]);
    expect(world.app.durable.stats().instancesStarted).toBe(1);
  });

  it('a later write to the order keeps the pending start and does it', async () => {
    const world = downLongerThanRedeliveries('durableOutage', 1);
    await run(world, [batch]);
    expect(await deadLetteredIds(world)).toEqual([messageIdOf(submitting)]);
    await outageOver(world);

    // An entry after the final one: rejected, parked; its write must not drop the saga start. Done
    // by it, the start leaves T-12 applied with nothing left to do, and its dead letter redundant:
    // two outcomes, which the refused replay below leaves as they are.
    world.twoOutcomes = 1;
    await run(world, [ledger('B-3', [late])]);
    expect(await parkedIds(world)).toEqual([messageIdOf(late)]);
    expect(await sagaOf(world, 'O-1')).toBe('completed');

    // The replay of the dead-lettered entry now has nothing left to do, and says so.
    await expect(
      replayDeadLettered(world.deps, 'order-transactions', messageIdOf(submitting)),
    ).resolves.toMatchObject({ replayed: false, refusal: 'no-effect' });
  });
});

describe('the park of a rejected entry, with parked unreachable past every redelivery', () => {
  // The first send (the ledger's forwarding) goes through; the outage begins with the park.
  it('dead-letters the rejected entry, whose slot is taken; a replay at once parks it, once', async () => {
    const world = downLongerThanRedeliveries('sendOutage', 2);
    await run(world, [parkingBatch]);
    expect(await deadLetteredIds(world)).toEqual([messageIdOf(rejected)]);
    expect(await orderOf(world, 'O-2')).toMatchObject({ appliedSequence: 2 });
    expect(await parkedIds(world)).toEqual([]);

    await outageOver(world);
    await expect(
      replayDeadLettered(world.deps, 'order-transactions', messageIdOf(rejected)),
    ).resolves.toMatchObject({ replayed: true, prediction: { outcome: 'parked', reason: 'rejected' } });
    await world.app.drain();
    const parked = (await world.operations.listParked()).messages;
    expect(parked.map((message) => [message.park.transactionId, message.park.reason])).toEqual([
      ['T-22', 'rejected'],
    ]);
    expect(await deadLetteredIds(world)).toEqual([]);
  });

  it('a later write to the order keeps the pending park and does it; a late re-send parks nothing twice', async () => {
    const world = downLongerThanRedeliveries('sendOutage', 2);
    await run(world, [parkingBatch]);
    expect(await deadLetteredIds(world)).toEqual([messageIdOf(rejected)]);
    await outageOver(world);

    // Done by the next write, the park leaves T-22 parked with nothing left to do, and its dead
    // letter redundant: noted, counted once.
    world.twoOutcomes = 1;
    await run(world, [ledger('B-4', [added('O-2', 'T-23', 3)])]);
    expect(await parkedIds(world)).toEqual([messageIdOf(rejected)]);
    expect(await orderOf(world, 'O-2')).toMatchObject({ appliedSequence: 3, outbox: null });

    // The producer sends the rejected entry again, after every duplicate detection window.
    moveClockPastDuplicateWindow();
    await run(world, [ledger('B-2-again', [rejected])]);
    expect(await parkedIds(world)).toEqual([messageIdOf(rejected)]);
  });
});

describe('a late re-send', () => {
  it('of a rejected entry, after every duplicate detection window: parks nothing twice', async () => {
    const world = opsWorld();
    await run(world, [parkingBatch]);
    expect(await parkedIds(world)).toEqual([messageIdOf(rejected)]);
    moveClockPastDuplicateWindow();
    await run(world, [ledger('B-2-again', [rejected])]);
    expect(await parkedIds(world)).toEqual([messageIdOf(rejected)]);
  });
});

describe('the store down past every redelivery', () => {
  it('dead-letters the entries; replayed at once after the outage, each applies exactly once', async () => {
    const world = downLongerThanRedeliveries('storeOutage', 1);
    const entries = [created('O-3', 'T-31'), added('O-3', 'T-32', 2, 2, 50)];
    await run(world, [ledger('B-5', entries)]);
    expect((await deadLetteredIds(world)).sort()).toEqual(entries.map(messageIdOf).sort());
    expect(await orderOf(world, 'O-3')).toBeUndefined();

    await outageOver(world);
    for (const entry of entries) {
      await expect(
        replayDeadLettered(world.deps, 'order-transactions', messageIdOf(entry)),
      ).resolves.toMatchObject({ replayed: true, forced: false });
    }
    await world.app.drain();
    // Replayed again under yet another id (a late re-send by the producer): recognised, no effect.
    await world.app.broker.send('order-transactions', [
      { messageId: `again:${messageIdOf(entries[1])}`, sessionId: 'O-3', body: entries[1] },
    ]);
    await world.app.drain();
    expect(await orderOf(world, 'O-3')).toMatchObject({
      status: 'open',
      appliedSequence: 2,
      total: 100,
      lines: [{ transactionId: 'T-32', quantity: 2 }],
    });
    expect(world.app.telemetry.total('entries.applied')).toBe(2);
    expect(await deadLetteredIds(world)).toEqual([]);
    expect(await parkedIds(world)).toEqual([]);
  });
});
