/**
 * Replays of one dead letter at the same time, on the embedded operations through their HTTP
 * functions: each is judged by what became of its own message, never by a queue-wide counter that
 * other sends move too. As on Service Bus, where the first replay's receive locks the copy: one
 * replay sends it and removes it, the other finds it gone and sends nothing.
 */
import type { HttpResponseInit } from '@azure/functions';
import {
  createServiceBusOperations,
  type ReceivedLike,
  type ServiceBusParts,
} from '../../src/adapters/azure/service-bus-operations';
import { operationsHttp } from '../../src/functions/http/operations-http';
import { KEYS_ONLY } from '../support/principal';
import { created, entryMessageFor, messageIdOf } from '../support/e2e';
import { invokeHttp } from '../support/http';
import { opsWorld, useOpsWorlds, type OpsWorld } from '../support/ops';

useOpsWorlds();

const entry = created('O-R', 'T-R1');

/** The entry's message, dead-lettered in order-transactions: its one delivery given back. */
async function withEntryDeadLettered(): Promise<OpsWorld> {
  const world = opsWorld({ maxDeliveryCount: 1 });
  const { broker, host } = world.app;
  await host.stop();
  await broker.send('order-transactions', [entryMessageFor(entry)]);
  const receiver = broker.acceptNextSession('order-transactions')!;
  receiver.abandon(receiver.receive()!);
  receiver.close();
  expect(broker.deadLetters('order-transactions').map((m) => m.messageId)).toEqual([messageIdOf(entry)]);
  host.start();
  return world;
}

function replay(world: OpsWorld): Promise<HttpResponseInit> {
  return invokeHttp(
    operationsHttp(() => world.deps, KEYS_ONLY),
    'opsReplayDeadLettered',
    { params: { queue: 'order-transactions', messageId: messageIdOf(entry) } },
  );
}

describe('two replays of one dead letter at once', () => {
  it('one sends it and removes the copy, the other says it left and sent nothing; applied once', async () => {
    const world = await withEntryDeadLettered();
    const { app } = world;
    const sentBefore = app.broker.stats()['order-transactions'].sent;

    const answers = await Promise.all([replay(world), replay(world)]);

    const byStatus = [...answers].sort((a, b) => (a.status ?? 0) - (b.status ?? 0));
    expect(byStatus).toEqual([
      {
        status: 200,
        jsonBody: expect.objectContaining({ replayed: true, messageId: messageIdOf(entry) }),
      },
      {
        status: 404,
        jsonBody: expect.objectContaining({
          refusal: 'not-found',
          error: expect.stringContaining('nothing was sent'),
        }),
      },
    ]);
    expect(app.broker.deadLetters('order-transactions')).toEqual([]);
    // One message went in: the replay, under its fresh id.
    expect(app.broker.stats()['order-transactions'].sent).toBe(sentBefore + 1);

    await app.drain();
    expect((await app.report()).orders).toEqual([
      expect.objectContaining({ orderId: 'O-R', status: 'open', appliedSequence: 1, lines: [] }),
    ]);
    expect(app.telemetry.total('entries.applied')).toBe(1);
  });

  it('a replay is not failed by another message duplicate detection drops at the same moment', async () => {
    const world = await withEntryDeadLettered();
    const { app } = world;
    await app.broker.send('order-transactions', [{ messageId: 'M-other', sessionId: 'O-X', body: {} }]);
    // Whenever the replay sends, a producer's retry of M-other reaches the queue too, and is dropped.
    const sendAndReport = app.broker.sendAndReport.bind(app.broker);
    app.broker.sendAndReport = async (queue, messages) => {
      if (queue === 'order-transactions' && messages.some((m) => m.messageId.startsWith('replay-')))
        await app.broker.send(queue, [{ messageId: 'M-other', sessionId: 'O-X', body: {} }]);
      return sendAndReport(queue, messages);
    };

    await expect(replay(world)).resolves.toMatchObject({ status: 200, jsonBody: { replayed: true } });
    expect(app.broker.deadLetters('order-transactions')).toEqual([]);
  });
});

/**
 * A dead-letter sub-queue as Service Bus keeps it for peek-lock receivers: a received message is
 * locked, hidden from every other receiver, until it is completed (gone) or abandoned (back).
 */
function peekLockBus(dead: ReceivedLike[]): { parts: ServiceBusParts<ReceivedLike>; sent: string[] } {
  const locked = new Set<ReceivedLike>();
  const sent: string[] = [];
  const parts: ServiceBusParts<ReceivedLike> = {
    createReceiver: () => ({
      peekMessages: async (count) => dead.slice(0, count),
      async receiveMessages(count) {
        const page = dead.filter((message) => !locked.has(message)).slice(0, count);
        page.forEach((message) => locked.add(message));
        return page;
      },
      async completeMessage(message) {
        locked.delete(message);
        dead.splice(dead.indexOf(message), 1);
      },
      async abandonMessage(message) {
        locked.delete(message);
      },
      async close() {},
    }),
    createSender: () => ({
      async sendMessages(message) {
        // The other replay runs while this send is on the wire.
        await new Promise((resolve) => setTimeout(resolve, 5));
        sent.push(String(message.messageId));
      },
      async close() {},
    }),
    getQueueRuntimeProperties: async () => ({ activeMessageCount: 0, deadLetterMessageCount: dead.length }),
    close: async () => {},
  };
  return { parts, sent };
}

describe('two replays of one dead letter at once, on the Azure adapter', () => {
  it('the same: the first receive locks the copy, so the other finds nothing and sends nothing', async () => {
    const copy: ReceivedLike = {
      messageId: 'T-R1:ab',
      sessionId: 'O-R',
      body: entry,
      sequenceNumber: { toString: () => '40' },
      enqueuedTimeUtc: new Date('2024-05-01T10:00:00Z'),
      deliveryCount: 10,
      applicationProperties: {},
    };
    const { parts, sent } = peekLockBus([copy]);
    const operations = createServiceBusOperations(parts, { receiveWaitMs: 0 });
    const [listed] = (await operations.listDeadLettered('order-transactions')).messages;

    const deliveries = await Promise.all([
      operations.replayDeadLettered(listed),
      operations.replayDeadLettered(listed),
    ]);

    expect(deliveries).toEqual(
      expect.arrayContaining([{ delivered: false }, expect.objectContaining({ delivered: true })]),
    );
    expect(sent).toEqual(['replay-d40:T-R1:ab']);
    expect((await operations.listDeadLettered('order-transactions')).messages).toEqual([]);
  });
});
