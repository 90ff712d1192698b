/**
 * The broker's duplicate-detection history (local/broker/duplicate-history.ts), kept off the
 * heap: as Service Bus, exact on the MessageId (case, prefix and every code unit count) and
 * forgetting an id only once the window has passed, through a queue of chunks that grows and empties.
 */
import fc from 'fast-check';
import { createEmbeddedBroker } from '../../local/broker/broker';
import { AcceptanceTimes } from '../../local/broker/acceptance-times';
import { DuplicateHistory } from '../../local/broker/duplicate-history';
import { LOOK_ALIKE_KEYS } from '../support/look-alike-keys';

const LOOKALIKES = ['O-1-T1:ab', 'O-1-T1:a', 'O-1-T1:abc', 'o-1-t1:ab', 'O-1-T1:AB', ...LOOK_ALIKE_KEYS];

describe('duplicate-detection history', () => {
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

  test('answers as a Map of ids to first-seen times would', () => {
    const idArb = fc.string({ unit: fc.constantFrom('a', 'A', 'é', '日', '\ud83d', ':'), maxLength: 3 });
    const stepArb = fc.record({ id: idArb, wait: fc.integer({ min: 0, max: 40 }) });
    fc.assert(
      fc.property(
        fc.array(stepArb, { maxLength: 400 }),
        fc.integer({ min: 1, max: 200 }),
        (steps, windowMs) => {
          const history = new DuplicateHistory();
          const model = new Map<string, number>();
          let at = 0;
          for (const { id, wait } of steps) {
            at += wait;
            const windowStart = at - windowMs;
            for (const [seen, seenAt] of model) {
              if (seenAt > windowStart) break;
              model.delete(seen);
            }
            const expected = model.has(id);
            if (!expected) model.set(id, at);
            expect(history.seenElseRemember(id, at, windowStart)).toBe(expected);
            expect(history.size).toBe(model.size);
          }
        },
      ),
    );
  });

  test('10,000 distinct ids in the window are all remembered; once it passes, all are forgotten', () => {
    const history = new DuplicateHistory();
    const id = (n: number): string => `O-${n}-T1:${(n * 2654435761).toString(16)}`;
    const missed: number[] = [];
    for (let n = 0; n < 10_000; n += 1) if (history.seenElseRemember(id(n), n, n - 1_000_000)) missed.push(n);
    for (let n = 0; n < 10_000; n += 1)
      if (!history.seenElseRemember(id(n), 10_000, 10_000 - 1_000_000)) missed.push(n);
    expect(missed).toEqual([]);
    expect(history.seenElseRemember('another', 2_000_000, 2_000_000 - 1_000_000)).toBe(false);
    expect(history.size).toBe(1);
    expect(history.seenElseRemember(id(5), 2_000_000, 2_000_000 - 1_000_000)).toBe(false);
  });

  test('30,000 sends over 20,000 ids, 6,000 at a time in the window: every answer is the Map answer, across many chunks', () => {
    const history = new DuplicateHistory();
    const model = new Map<string, number>();
    const wrong: number[] = [];
    let draw = 12345;
    for (let at = 0; at < 30_000; at += 1) {
      draw = (Math.imul(draw, 1103515245) + 12345) >>> 0;
      const id = `O-${draw % 20_000}-T1`;
      const windowStart = at - 6_000;
      for (const [seen, seenAt] of model) {
        if (seenAt > windowStart) break;
        model.delete(seen);
      }
      const expected = model.has(id);
      if (!expected) model.set(id, at);
      if (history.seenElseRemember(id, at, windowStart) !== expected || history.size !== model.size)
        wrong.push(at);
    }
    expect(wrong).toEqual([]);
    expect(model.size).toBeGreaterThan(4096);
  });
});

describe('session acceptance times', () => {
  test('look-alike session ids keep their own time; a later acceptance replaces a session’s', () => {
    const times = new AcceptanceTimes();
    LOOKALIKES.forEach((sessionId, index) => times.set(sessionId, index + 1));
    expect(LOOKALIKES.map((sessionId) => times.get(sessionId))).toEqual(
      LOOKALIKES.map((_, index) => index + 1),
    );
    times.set('O-1-T1:ab', 100);
    expect(times.get('O-1-T1:ab')).toBe(100);
    expect(times.get('O-1-T1:AB')).toBe(5);
    expect(times.get('never')).toBeUndefined();
  });
});
