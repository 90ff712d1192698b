/**
 * The embedded MessageOperations on their own: a replay leaves the held copy in place unless the
 * broker really took the message, whether the send failed or duplicate detection swallowed it.
 */
import { PermanentError, TransientError } from '../../src/domain/errors';
import { createEmbeddedBroker, type EmbeddedBroker } from '../../local/broker/broker';
import { createAppQueues } from '../../local/app-queues';
import { replayMessageId } from '../../src/services/operations/held-messages';
import { createEmbeddedOperations } from '../../local/store/message-operations';
import { parkedMessage } from '../../src/services/convoy/parking';

function brokerWithAppQueues(now: () => number): EmbeddedBroker {
  const broker = createEmbeddedBroker({ now });
  createAppQueues(broker, {}, { 'order-transactions': { maxDeliveryCount: 1 } });
  return broker;
}

const entry = { transactionId: 'T-1', orderId: 'O-1', sequence: 1, type: 'OrderDeleted', data: {} };

async function parkOne(broker: EmbeddedBroker): Promise<void> {
  await broker.send('order-transactions', [{ messageId: 'T-1:aa', sessionId: 'O-2', body: entry }]);
  await broker.send('parked', [
    parkedMessage({
      fromQueue: 'order-transactions',
      messageId: 'T-1:aa',
      sessionId: 'O-2',
      body: entry,
      applicationProperties: { transactionId: 'T-1' },
      transactionId: 'T-1',
      reason: 'misrouted',
      description: 'test',
    }),
  ]);
  // The original is consumed, as the app's consumer would have.
  const receiver = broker.acceptNextSession('order-transactions')!;
  receiver.complete(receiver.receive()!);
  receiver.close();
}

/** A message with this id went through the queue: its duplicate detection remembers the id. */
async function remembered(broker: EmbeddedBroker, messageId: string, sessionId: string): Promise<void> {
  await broker.send('order-transactions', [{ messageId, sessionId, body: {} }]);
  const receiver = broker.acceptNextSession('order-transactions')!;
  receiver.complete(receiver.receive()!);
  receiver.close();
}

describe('embedded operations: replay', () => {
  it('leaves the parked copy where it was when the send fails', async () => {
    let t = 1_000_000;
    const broker = brokerWithAppQueues(() => t);
    await parkOne(broker);
    t += 60 * 60_000;
    const failing: EmbeddedBroker = {
      ...broker,
      sendAndReport: async () => {
        throw new TransientError('bus-unavailable', 'test: the broker is away');
      },
    };
    const operations = createEmbeddedOperations(failing);
    const parked = (await operations.findParked('T-1:aa'))!;
    await expect(operations.replayParked(parked)).rejects.toThrow(TransientError);
    expect(broker.peek('parked')).toMatchObject([{ messageId: 'T-1:aa', locked: false, deliveryCount: 1 }]);
  });

  it('notices a replay swallowed by duplicate detection and keeps the copy', async () => {
    let t = 1_000_000;
    const broker = brokerWithAppQueues(() => t);
    await parkOne(broker);
    const operations = createEmbeddedOperations(broker);
    const parked = (await operations.findParked('T-1:aa'))!;
    // The entry's replay travels under a fresh id; a message with that very id came before.
    await remembered(broker, replayMessageId(parked), 'O-2');
    await expect(operations.replayParked(parked)).rejects.toThrow(PermanentError);
    expect(broker.peek('parked').map((m) => m.messageId)).toEqual(['T-1:aa']);
    expect(broker.peek('order-transactions')).toEqual([]);

    t += 11 * 60_000;
    await expect(operations.replayParked(parked)).resolves.toEqual({
      delivered: true,
      queue: 'order-transactions',
      sessionId: 'O-2',
      messageId: replayMessageId(parked),
    });
    expect(broker.peek('parked')).toEqual([]);
    expect(broker.peek('order-transactions')).toMatchObject([
      {
        messageId: replayMessageId(parked),
        sessionId: 'O-2',
        body: entry,
        applicationProperties: { transactionId: 'T-1' },
      },
    ]);
    // The copy is gone: a second replay of the same listing finds nothing to send.
    await expect(operations.replayParked(parked)).resolves.toEqual({ delivered: false });
  });

  it('takes a dead letter out only once its replay is accepted', async () => {
    let t = 1_000_000;
    const broker = brokerWithAppQueues(() => t);
    await broker.send('order-transactions', [{ messageId: 'T-9:bb', sessionId: 'O-9', body: entry }]);
    const receiver = broker.acceptNextSession('order-transactions')!;
    receiver.abandon(receiver.receive()!);
    receiver.close();
    const operations = createEmbeddedOperations(broker);
    const [dead] = (await operations.listDeadLettered('order-transactions')).messages;
    expect(dead).toMatchObject({ messageId: 'T-9:bb', sessionId: 'O-9', deliveryCount: 1 });

    await remembered(broker, replayMessageId(dead), 'O-9');
    await expect(operations.replayDeadLettered(dead)).rejects.toThrow(PermanentError);
    expect(broker.deadLetters('order-transactions')).toHaveLength(1);
    t += 11 * 60_000;
    await expect(operations.replayDeadLettered(dead)).resolves.toMatchObject({ delivered: true });
    expect(broker.deadLetters('order-transactions')).toEqual([]);
    expect(broker.peek('order-transactions')).toMatchObject([
      { messageId: replayMessageId(dead), deliveryCount: 0 },
    ]);
    await expect(operations.replayDeadLettered(dead)).resolves.toEqual({ delivered: false });
  });
});
