/**
 * The broker's duplicate detection (`seenElseRemember`, local/broker/queue-state.ts): as Service
 * Bus, exact on the MessageId (case, prefix and every code unit count, Object.prototype names
 * included) and forgetting an id only once the window has passed since it was accepted.
 */
import { createEmbeddedBroker } from '../../local/broker/broker';
import { LOOK_ALIKE_KEYS } from '../support/look-alike-keys';

const LOOKALIKES = ['O-1-T1:ab', 'O-1-T1:a', 'O-1-T1:abc', 'o-1-t1:ab', 'O-1-T1:AB', ...LOOK_ALIKE_KEYS];

describe('duplicate detection', () => {
  test('ids that share a prefix, differ only in case or are multi-byte are all kept; each repeat in the window is dropped', async () => {
    let clock = 1_700_000_000_000;
    const broker = createEmbeddedBroker({ now: () => clock });
    broker.createQueue('q', { duplicateDetection: true, duplicateDetectionWindowMs: 60_000 });
    await broker.send(
      'q',
      LOOKALIKES.map((messageId) => ({ messageId, body: { first: messageId } })),
    );
    expect(broker.peek('q').map((m) => m.messageId)).toEqual(LOOKALIKES);
    clock += 59_999;
    await broker.send(
      'q',
      LOOKALIKES.map((messageId) => ({ messageId, body: { again: true } })),
    );
    expect(broker.stats().q).toMatchObject({
      sent: LOOKALIKES.length,
      duplicatesDetected: LOOKALIKES.length,
    });
    clock += 1;
    // The window has passed for every one of them: each is a message of its own again.
    await broker.send('q', [{ messageId: 'O-1-T1:ab', body: { later: true } }]);
    expect(broker.stats().q).toMatchObject({
      sent: LOOKALIKES.length + 1,
      duplicatesDetected: LOOKALIKES.length,
    });
  });

  test('an id is forgotten once the window has passed since it was accepted, not since it was last sent', async () => {
    let clock = 1_700_000_000_000;
    const broker = createEmbeddedBroker({ now: () => clock });
    broker.createQueue('q', { duplicateDetection: true, duplicateDetectionWindowMs: 1000 });
    await broker.send('q', [{ messageId: 'a', body: 1 }]);
    clock += 600;
    await broker.send('q', [{ messageId: 'b', body: 2 }]);
    await broker.send('q', [{ messageId: 'a', body: 3 }]);
    clock += 400;
    // a's window (from its acceptance) has passed; b's has not, and a's dropped repeat did not renew a's.
    await broker.send('q', [
      { messageId: 'a', body: 4 },
      { messageId: 'b', body: 5 },
    ]);
    expect(broker.peek('q').map((m) => m.body)).toEqual([1, 2, 4]);
    expect(broker.stats().q).toMatchObject({ sent: 3, duplicatesDetected: 2 });
  });
});
