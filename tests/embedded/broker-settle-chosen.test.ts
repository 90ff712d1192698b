/** The two broker operations the replay needs: settle one chosen message, take one dead letter out. */
import { PermanentError } from '../../src/domain/errors';
import { createEmbeddedBroker, type EmbeddedBroker } from '../../local/broker/broker';

function brokerWithQueues(): EmbeddedBroker {
  const broker = createEmbeddedBroker();
  broker.createQueue('plain', { maxDeliveryCount: 1 });
  broker.createQueue('sessions', { requiresSession: true, maxDeliveryCount: 1 });
  return broker;
}

describe('embedded broker: receiveBySequenceNumber', () => {
  it('locks the chosen message, not the head, and completing it leaves the others in order', async () => {
    const broker = brokerWithQueues();
    await broker.send('plain', [
      { messageId: 'a', body: 1 },
      { messageId: 'b', body: 2 },
      { messageId: 'c', body: 3 },
    ]);
    const b = broker.receiveBySequenceNumber('plain', 2);
    expect(b).toMatchObject({ messageId: 'b', body: 2, deliveryCount: 1 });
    expect(broker.peek('plain').map((m) => [m.messageId, m.locked])).toEqual([
      ['a', false],
      ['b', true],
      ['c', false],
    ]);
    // Locked: not to be chosen twice.
    expect(broker.receiveBySequenceNumber('plain', 2)).toBeUndefined();
    broker.complete(b!);
    expect(broker.peek('plain').map((m) => m.messageId)).toEqual(['a', 'c']);
    expect(broker.receive('plain')?.messageId).toBe('a');
  });

  it('answers undefined for a sequence number the queue does not hold', async () => {
    const broker = brokerWithQueues();
    await broker.send('plain', [{ messageId: 'a', body: 1 }]);
    expect(broker.receiveBySequenceNumber('plain', 7)).toBeUndefined();
  });

  it('refuses a session queue, where only a session receiver may take messages', async () => {
    const broker = brokerWithQueues();
    await broker.send('sessions', [{ messageId: 'a', sessionId: 'S', body: 1 }]);
    expect(() => broker.receiveBySequenceNumber('sessions', 1)).toThrow(PermanentError);
  });
});

describe('embedded broker: takeDeadLetter', () => {
  it('removes exactly the dead letter with that sequence number and returns it', async () => {
    const broker = brokerWithQueues();
    await broker.send('sessions', [
      { messageId: 'a', sessionId: 'S', body: { n: 1 } },
      { messageId: 'b', sessionId: 'S', body: { n: 2 } },
    ]);
    for (let i = 0; i < 2; i++) {
      const receiver = broker.acceptNextSession('sessions')!;
      receiver.abandon(receiver.receive()!);
      receiver.close();
    }
    expect(broker.deadLetters('sessions').map((m) => m.sequenceNumber)).toEqual([1, 2]);

    const taken = broker.takeDeadLetter('sessions', 2);
    expect(taken).toMatchObject({ messageId: 'b', sessionId: 'S', body: { n: 2 } });
    expect(broker.deadLetters('sessions').map((m) => m.messageId)).toEqual(['a']);
    expect(broker.takeDeadLetter('sessions', 2)).toBeUndefined();
    // Cumulative statistics keep counting what was dead-lettered.
    expect(broker.stats().sessions.deadLettered).toBe(2);
  });
});
