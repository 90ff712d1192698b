import { faultRandom, withReorderFaults } from '../../local/faults';
import type { MessageSender, OutgoingMessage } from '../../src/services/ports';

/** A sender that answers after a turn of the event loop, as a real broker round trip would. */
function recordingSender(): MessageSender & { delivered: string[] } {
  const delivered: string[] = [];
  return {
    delivered,
    async send(_queue: string, messages: readonly OutgoingMessage[]) {
      await new Promise((resolve) => setImmediate(resolve));
      for (const message of messages) delivered.push(message.messageId);
    },
  };
}

describe('reorder fault', () => {
  it('with concurrent producers, every message sent is delivered exactly once', async () => {
    const sender = recordingSender();
    const producer = withReorderFaults(sender, 0.9, faultRandom(1, 'reorder'));
    const sent: string[] = [];
    const produce = async (name: string): Promise<void> => {
      for (let i = 0; i < 600; i++) {
        const id = `${name}-${i}`;
        sent.push(id);
        await producer.send('ledger', [{ messageId: id, sessionId: name, body: { i } }]);
      }
    };
    await Promise.all(['main', 'east', 'west'].map(produce));
    while (await producer.flush()) {
      // flush until nothing is held
    }
    expect(producer.reordered()).toBeGreaterThan(0);
    expect([...sender.delivered].sort()).toEqual([...sent].sort());
  });

  it('holds a message back behind the next send to its queue', async () => {
    const sender = recordingSender();
    const draws = [0, 0.99];
    const producer = withReorderFaults(sender, 0.5, () => draws.shift() ?? 0.99);
    await producer.send('q', [{ messageId: 'a', body: 1 }]);
    await producer.send('q', [{ messageId: 'b', body: 2 }]);
    expect(sender.delivered).toEqual(['b', 'a']);
  });
});
