import { PermanentError, TransientError } from '../../src/domain/errors';
import {
  createEmbeddedBroker,
  estimateMessageBytes,
  MessageLockLostError,
  MessageSizeExceededError,
  ServiceBusIdTooLongError,
  SessionLockLostError,
} from '../../local/broker/broker';
import type {
  EmbeddedBroker,
  EmbeddedBrokerOptions,
  QueueOptions,
  ReceivedMessage,
  SessionReceiver,
} from '../../local/broker/broker';
import type { OutgoingMessage } from '../../src/services/ports';

interface TestClock {
  now: () => number;
  advance: (ms: number) => void;
}

function testClock(start = 1_700_000_000_000): TestClock {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

/** Random values in turn, then 0.99 (no fault) for ever. */
function draws(...values: number[]): () => number {
  return () => values.shift() ?? 0.99;
}

function brokerWith(queue: QueueOptions, options: EmbeddedBrokerOptions = {}): EmbeddedBroker {
  const broker = createEmbeddedBroker(options);
  broker.createQueue('q', queue);
  return broker;
}

function message(messageId: string, sessionId?: string, body: unknown = { id: messageId }): OutgoingMessage {
  return { messageId, sessionId, body };
}

function mustReceive(received: ReceivedMessage | undefined): ReceivedMessage {
  if (!received) throw new Error('expected a message');
  return received;
}

describe('embedded broker: sending', () => {
  it('assigns increasing sequence numbers per queue, the enqueue time and delivery count 0', async () => {
    const clock = testClock();
    const broker = createEmbeddedBroker({ now: clock.now });
    broker.createQueue('a');
    broker.createQueue('b');
    await broker.send('a', [message('a1'), message('a2')]);
    clock.advance(5);
    await broker.send('b', [message('b1')]);
    await broker.send('a', [message('a3')]);

    expect(broker.peek('a').map((m) => [m.messageId, m.sequenceNumber, m.deliveryCount])).toEqual([
      ['a1', 1, 0],
      ['a2', 2, 0],
      ['a3', 3, 0],
    ]);
    expect(broker.peek('b')).toMatchObject([
      { messageId: 'b1', sequenceNumber: 1, enqueuedTimeUtc: clock.now() },
    ]);
    expect(broker.peek('a')[0]?.enqueuedTimeUtc).toBe(clock.now() - 5);
  });

  it('rejects a send to an unknown queue as permanent', async () => {
    const broker = createEmbeddedBroker();
    const sending = broker.send('nowhere', [message('m1')]);
    await expect(sending).rejects.toBeInstanceOf(PermanentError);
    await expect(sending).rejects.toMatchObject({ code: 'unknown-queue' });
  });

  it('rejects a message without sessionId on a session queue, accepting none of the call', async () => {
    const broker = brokerWith({ requiresSession: true });
    await expect(broker.send('q', [message('m1', 's1'), message('m2')])).rejects.toMatchObject({
      kind: 'permanent',
      code: 'session-id-required',
    });
    expect(broker.peek('q')).toEqual([]);
    expect(broker.stats().q?.sent).toBe(0);
  });

  it('keeps the sessionId on a queue without sessions', async () => {
    const broker = brokerWith({});
    await broker.send('q', [message('m1', 'S-1')]);
    expect(mustReceive(broker.receive('q')).sessionId).toBe('S-1');
  });

  it('deep-copies bodies both ways', async () => {
    const broker = brokerWith({ maxDeliveryCount: 5 });
    const body = { lines: [{ quantity: 1 }] };
    await broker.send('q', [{ messageId: 'm1', body }]);
    body.lines[0]!.quantity = 99;

    const first = mustReceive(broker.receive('q'));
    expect(first.body).toEqual({ lines: [{ quantity: 1 }] });
    (first.body as { lines: Array<{ quantity: number }> }).lines[0]!.quantity = 42;
    broker.abandon(first);

    expect(mustReceive(broker.receive('q')).body).toEqual({ lines: [{ quantity: 1 }] });
  });
});

describe('embedded broker: duplicate detection', () => {
  it('drops a messageId seen within the window and accepts it again once the window has passed', async () => {
    const clock = testClock();
    const broker = brokerWith(
      { duplicateDetection: true, duplicateDetectionWindowMs: 1000 },
      { now: clock.now },
    );
    await broker.send('q', [message('m1'), message('m2')]);
    clock.advance(999);
    await broker.send('q', [message('m1', undefined, { second: true })]);
    expect(broker.peek('q').map((m) => m.messageId)).toEqual(['m1', 'm2']);
    expect(broker.peek('q')[0]?.body).toEqual({ id: 'm1' });
    expect(broker.stats().q).toMatchObject({ sent: 2, duplicatesDetected: 1 });

    clock.advance(1);
    await broker.send('q', [message('m1')]);
    expect(broker.peek('q').map((m) => m.messageId)).toEqual(['m1', 'm2', 'm1']);
    expect(broker.stats().q).toMatchObject({ sent: 3, duplicatesDetected: 1 });
  });

  it('drops a duplicate within one send call, and does nothing of the kind without detection', async () => {
    const withDetection = brokerWith({ duplicateDetection: true });
    await withDetection.send('q', [message('m1'), message('m1')]);
    expect(withDetection.peek('q')).toHaveLength(1);

    const withoutDetection = brokerWith({});
    await withoutDetection.send('q', [message('m1'), message('m1')]);
    expect(withoutDetection.peek('q')).toHaveLength(2);
    expect(withoutDetection.stats().q?.duplicatesDetected).toBe(0);
  });
});

describe('embedded broker: send calls and the batch byte limit', () => {
  it('estimates a message as UTF-8 bytes of body JSON, ids and properties JSON, plus 100', () => {
    const estimate = estimateMessageBytes({
      messageId: 'm1',
      sessionId: 's',
      body: { a: 'é' },
      applicationProperties: { k: 1 },
    });
    // '{"a":"é"}' is 10 bytes (é takes two), 'm1' 2, 's' 1, '{"k":1}' 7.
    expect(estimate).toBe(10 + 2 + 1 + 7 + 100);
  });

  it('counts the batches needed when packing each call in order under maxBatchBytes', async () => {
    const unit = 1000;
    // A body of n characters is n + 2 bytes of JSON; with id 'mX' and '{}' properties, n + 106 in all.
    const sized = (id: string, units: number): OutgoingMessage => ({
      messageId: id,
      body: 'x'.repeat(units * unit - 106),
    });
    expect(estimateMessageBytes(sized('m1', 3))).toBe(3 * unit);

    const broker = createEmbeddedBroker({ maxBatchBytes: 4 * unit });
    broker.createQueue('q');
    // In order: [3] [2 2] [1]; a bin packer would need only two.
    await broker.send('q', [sized('m1', 3), sized('m2', 2), sized('m3', 2), sized('m4', 1)]);
    expect(broker.stats().q?.sendCalls).toBe(3);

    await broker.send('q', [sized('m5', 1), sized('m6', 1), sized('m7', 1), sized('m8', 1)]);
    expect(broker.stats().q?.sendCalls).toBe(4);
    expect(broker.stats().q?.sent).toBe(8);
  });

  it('counts sends to the default Standard-tier limit and refuses a message over it', async () => {
    const broker = brokerWith({});
    const small = Array.from({ length: 50 }, (_, i) => message(`m${i}`));
    await broker.send('q', small);
    expect(broker.stats().q?.sendCalls).toBe(1);

    const huge = { messageId: 'big', body: 'x'.repeat(262_144) };
    await expect(broker.send('q', [huge])).rejects.toMatchObject({ code: 'message-too-large' });
    expect(broker.peek('q')).toHaveLength(50);
  });

  it('refuses as Service Bus does: MessageSizeExceeded with the sizes, ids over 128 characters by name', async () => {
    const broker = createEmbeddedBroker({ maxBatchBytes: 1000 });
    broker.createQueue('q', { requiresSession: true });
    const refusal = await broker
      .send('q', [{ messageId: 'big', sessionId: 'S', body: 'x'.repeat(1000) }])
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MessageSizeExceededError);
    expect(refusal).toBeInstanceOf(PermanentError);
    expect(refusal).toMatchObject({
      serviceBusCode: 'MessageSizeExceeded',
      messageId: 'big',
      limitBytes: 1000,
    });
    expect((refusal as Error).message).toMatch(/over the queue's 1000-byte limit/);

    const long = 'x'.repeat(129);
    await expect(broker.send('q', [{ messageId: long, sessionId: 'S', body: 1 }])).rejects.toThrow(
      "Length of 'messageId' property on the message cannot be greater than 128 characters",
    );
    await expect(broker.send('q', [{ messageId: 'ok', sessionId: long, body: 1 }])).rejects.toBeInstanceOf(
      ServiceBusIdTooLongError,
    );
    // 128 is allowed.
    await broker.send('q', [{ messageId: 'x'.repeat(128), sessionId: 'y'.repeat(128), body: 1 }]);
    expect(broker.peek('q')).toHaveLength(1);
  });
});

describe('embedded broker: sessions', () => {
  async function sessionBroker(
    clock: TestClock,
    queue: QueueOptions = {},
    options: EmbeddedBrokerOptions = {},
  ): Promise<EmbeddedBroker> {
    const broker = brokerWith(
      { requiresSession: true, lockDurationMs: 1000, ...queue },
      { now: clock.now, ...options },
    );
    await broker.send('q', [
      message('a1', 'A'),
      message('b1', 'B'),
      message('a2', 'A'),
      message('a3', 'A'),
      message('b2', 'B'),
    ]);
    return broker;
  }

  it('delivers a session FIFO, one message in flight at a time', async () => {
    const broker = await sessionBroker(testClock());
    const receiver = broker.acceptNextSession('q');
    expect(receiver?.sessionId).toBe('A');
    const seen: string[] = [];
    for (;;) {
      const received = receiver?.receive();
      if (!received) break;
      expect(receiver?.receive()).toBeUndefined();
      seen.push(received.messageId);
      receiver?.complete(received);
    }
    expect(seen).toEqual(['a1', 'a2', 'a3']);
  });

  it('gives a session to one receiver at a time, and again once it is closed', async () => {
    const broker = await sessionBroker(testClock());
    const first = broker.acceptNextSession('q');
    const second = broker.acceptNextSession('q');
    expect([first?.sessionId, second?.sessionId]).toEqual(['A', 'B']);
    expect(broker.acceptNextSession('q')).toBeUndefined();
    expect(broker.sessions('q')).toEqual([
      { sessionId: 'A', pending: 3, locked: true },
      { sessionId: 'B', pending: 2, locked: true },
    ]);

    first?.close();
    expect(() => first?.receive()).toThrow(SessionLockLostError);
    expect(broker.acceptNextSession('q')?.sessionId).toBe('A');
  });

  it('lets receivers of different sessions work in parallel', async () => {
    const broker = await sessionBroker(testClock());
    const a = broker.acceptNextSession('q');
    const b = broker.acceptNextSession('q');
    const a1 = mustReceive(a?.receive());
    const b1 = mustReceive(b?.receive());
    expect([a1.messageId, b1.messageId]).toEqual(['a1', 'b1']);
    b?.complete(b1);
    expect(b?.receive()?.messageId).toBe('b2');
    a?.complete(a1);
    expect(a?.receive()?.messageId).toBe('a2');
  });

  it('serves the least recently accepted session first', async () => {
    const broker = await sessionBroker(testClock());
    broker.acceptNextSession('q')?.close(); // A
    expect(broker.acceptNextSession('q')?.sessionId).toBe('B');
  });

  it('accepts sessions in fairness order over a long random run, as a full scan would choose', async () => {
    // The broker keeps available sessions in a heap; this model scans them all, as it once did.
    const clock = testClock();
    const broker = brokerWith(
      { requiresSession: true, lockDurationMs: 60_000, maxDeliveryCount: 10_000 },
      { now: clock.now },
    );
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return Math.floor(seed / 65_536) % n;
    };
    const pending = new Map<string, number[]>();
    const lastAccepted = new Map<string, number>();
    const held = new Map<string, SessionReceiver>();
    let sequence = 0;
    let accepts = 0;
    for (let step = 0; step < 2000; step++) {
      const action = random(4);
      if (action === 0) {
        const sessionId = `S${random(40)}`;
        await broker.send('q', [message(`m${sequence}`, sessionId)]);
        pending.set(sessionId, [...(pending.get(sessionId) ?? []), sequence++]);
      } else if (action === 1) {
        let expected: string | undefined;
        let best: [number, number] = [Infinity, Infinity];
        for (const [sessionId, queued] of pending) {
          if (queued.length === 0 || held.has(sessionId)) continue;
          const key: [number, number] = [lastAccepted.get(sessionId) ?? 0, queued[0]];
          if (key[0] < best[0] || (key[0] === best[0] && key[1] < best[1]))
            [expected, best] = [sessionId, key];
        }
        const receiver = broker.acceptNextSession('q');
        expect(receiver?.sessionId).toBe(expected);
        if (receiver) {
          held.set(receiver.sessionId, receiver);
          lastAccepted.set(receiver.sessionId, ++accepts);
        }
      } else if (held.size > 0) {
        const [sessionId, receiver] = [...held][random(held.size)];
        const received = receiver.receive();
        if (action === 2 && received) {
          receiver.complete(received);
          pending.get(sessionId)?.shift();
        } else {
          if (received) receiver.abandon(received);
          receiver.close();
          held.delete(sessionId);
        }
      }
    }
    expect(accepts).toBeGreaterThan(200);
  });

  it('refuses to settle a message of another session', async () => {
    const broker = await sessionBroker(testClock());
    const a = broker.acceptNextSession('q');
    const b = broker.acceptNextSession('q');
    const a1 = mustReceive(a?.receive());
    expect(() => b?.complete(a1)).toThrow(PermanentError);
    a?.complete(a1);
  });

  it('redelivers a message whose lock expired, at the head, with deliveryCount + 1', async () => {
    const clock = testClock();
    const broker = await sessionBroker(clock);
    const crashed = broker.acceptNextSession('q');
    const first = mustReceive(crashed?.receive());
    expect(first).toMatchObject({ messageId: 'a1', deliveryCount: 1, lockedUntil: clock.now() + 1000 });

    clock.advance(999);
    expect(broker.isIdle()).toBe(false);
    expect(broker.acceptNextSession('q')?.sessionId).toBe('B');
    clock.advance(1);
    // The receiver that never settled has lost both its message and its session.
    expect(() => crashed?.complete(first)).toThrow(SessionLockLostError);
    const next = broker.acceptNextSession('q');
    expect(next?.sessionId).toBe('A');
    expect(() => next?.complete(first)).toThrow(MessageLockLostError);
    expect(new MessageLockLostError('x')).toBeInstanceOf(TransientError);
    expect(next?.receive()).toMatchObject({
      messageId: 'a1',
      deliveryCount: 2,
      sequenceNumber: first.sequenceNumber,
    });
    expect(broker.stats().q?.lockExpired).toBe(1);
  });

  it('redelivers an expired message to a receiver that still holds its session', async () => {
    const clock = testClock();
    const broker = await sessionBroker(clock);
    const receiver = broker.acceptNextSession('q');
    const first = mustReceive(receiver?.receive());
    clock.advance(600);
    receiver?.renewSessionLock();
    clock.advance(400);
    const again = mustReceive(receiver?.receive());
    expect(again).toMatchObject({ messageId: 'a1', deliveryCount: 2, sequenceNumber: first.sequenceNumber });
    expect(again.lockToken).not.toBe(first.lockToken);
    expect(() => receiver?.complete(first)).toThrow(MessageLockLostError);
    receiver?.complete(again);
    expect(receiver?.receive()?.messageId).toBe('a2');
  });

  it('keeps a renewed message lock', async () => {
    const clock = testClock();
    const broker = await sessionBroker(clock);
    const receiver = broker.acceptNextSession('q');
    const first = mustReceive(receiver?.receive());
    clock.advance(900);
    receiver?.renewMessageLock(first);
    clock.advance(900);
    receiver?.complete(first);
    expect(broker.stats().q).toMatchObject({ completed: 1, lockExpired: 0 });
  });

  it('dead-letters after maxDeliveryCount abandons, keeping body, ids and properties', async () => {
    const broker = brokerWith({ requiresSession: true, maxDeliveryCount: 3 });
    await broker.send('q', [
      { messageId: 'm1', sessionId: 'S', body: { x: 1 }, applicationProperties: { transactionId: 'T-1' } },
      message('m2', 'S'),
    ]);
    const receiver = broker.acceptNextSession('q');
    const counts: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const received = mustReceive(receiver?.receive());
      expect(received.messageId).toBe('m1');
      counts.push(received.deliveryCount);
      receiver?.abandon(received);
    }
    expect(counts).toEqual([1, 2, 3]);
    expect(receiver?.receive()?.messageId).toBe('m2');
    expect(broker.deadLetters('q')).toEqual([
      expect.objectContaining({
        messageId: 'm1',
        sessionId: 'S',
        body: { x: 1 },
        applicationProperties: { transactionId: 'T-1' },
        deadLetterReason: 'MaxDeliveryCountExceeded',
        deadLetterErrorDescription: expect.stringContaining('3 delivery attempts'),
        deliveryCount: 3,
      }),
    ]);
    expect(broker.stats().q).toMatchObject({ abandoned: 3, deadLettered: 1 });
  });

  it('dead-letters a message whose last allowed delivery ends in a lock expiry', async () => {
    const clock = testClock();
    const broker = brokerWith(
      { requiresSession: true, maxDeliveryCount: 1, lockDurationMs: 50 },
      { now: clock.now },
    );
    await broker.send('q', [message('m1', 'S')]);
    broker.acceptNextSession('q')?.receive();
    clock.advance(50);
    expect(broker.deadLetters('q')).toMatchObject([
      { messageId: 'm1', deadLetterReason: 'MaxDeliveryCountExceeded' },
    ]);
    expect(broker.isIdle()).toBe(true);
  });

  it('dead-letters on request with the given reason and description', async () => {
    const broker = await sessionBroker(testClock());
    const receiver = broker.acceptNextSession('q');
    receiver?.deadLetter(mustReceive(receiver.receive()), 'poison', 'cannot parse');
    expect(broker.deadLetters('q')).toMatchObject([
      {
        messageId: 'a1',
        deadLetterReason: 'poison',
        deadLetterErrorDescription: 'cannot parse',
        deliveryCount: 1,
      },
    ]);
  });

  it('with the duplicate fault, delivers a completed message again before the next one', async () => {
    const broker = brokerWith(
      { requiresSession: true, duplicateDetection: true },
      { faults: { duplicate: 0.5 }, random: draws(0.1) },
    );
    await broker.send('q', [message('m1', 'S'), message('m2', 'S')]);
    const receiver = broker.acceptNextSession('q');
    const delivered: Array<[string, number]> = [];
    for (;;) {
      const received = receiver?.receive();
      if (!received) break;
      delivered.push([received.messageId, received.deliveryCount]);
      receiver?.complete(received);
    }
    expect(delivered).toEqual([
      ['m1', 1],
      ['m1', 2],
      ['m2', 1],
    ]);
    expect(broker.stats().q).toMatchObject({ completed: 3, redeliveredByFault: 1, duplicatesDetected: 0 });
  });

  it('throws when receiving without a session on a session queue', async () => {
    const broker = await sessionBroker(testClock());
    expect(() => broker.receive('q')).toThrow(PermanentError);
  });
});

describe('embedded broker: queues without sessions', () => {
  it('hands out several messages at once and takes an abandoned one back first', async () => {
    const clock = testClock();
    const broker = brokerWith({ lockDurationMs: 1000 }, { now: clock.now });
    await broker.send('q', [message('m1'), message('m2'), message('m3')]);
    const m1 = mustReceive(broker.receive('q'));
    const m2 = mustReceive(broker.receive('q'));
    expect([m1.messageId, m2.messageId]).toEqual(['m1', 'm2']);
    broker.abandon(m1);
    expect(mustReceive(broker.receive('q'))).toMatchObject({ messageId: 'm1', deliveryCount: 2 });
    broker.complete(m2);
    expect(() => broker.complete(m2)).toThrow(MessageLockLostError);
    expect(() => broker.acceptNextSession('q')).toThrow(PermanentError);

    clock.advance(1000);
    expect(broker.peek('q').map((m) => [m.messageId, m.locked])).toEqual([
      ['m1', false],
      ['m3', false],
    ]);
  });
});

describe('embedded broker: idleness and notifications', () => {
  it('is idle only when no message waits or is locked, dead letters aside', async () => {
    const clock = testClock();
    const broker = createEmbeddedBroker({ now: clock.now });
    broker.createQueue('work', { maxDeliveryCount: 1 });
    broker.createQueue('parked');
    expect(broker.isIdle()).toBe(true);
    await broker.send('work', [message('m1'), message('m2')]);
    await broker.send('parked', [message('p1')]);
    const m1 = mustReceive(broker.receive('work'));
    const m2 = mustReceive(broker.receive('work'));
    broker.complete(m1);
    expect(broker.isIdle(['work'])).toBe(false);
    broker.abandon(m2);
    expect(broker.deadLetters('work')).toHaveLength(1);
    expect(broker.isIdle(['work'])).toBe(true);
    expect(broker.isIdle()).toBe(false);
  });

  it('notifies listeners on send and wakes them when a lock expires', async () => {
    const broker = brokerWith({ lockDurationMs: 20 });
    const notified: string[] = [];
    let expired: () => void = () => undefined;
    const expiry = new Promise<void>((resolve) => (expired = resolve));
    const unsubscribe = broker.onAvailable((queue) => {
      notified.push(queue);
      if (notified.length === 2) expired();
    });
    try {
      await broker.send('q', [message('m1')]);
      await Promise.resolve();
      expect(notified).toEqual(['q']);
      const locked = mustReceive(broker.receive('q'));
      await expiry;
      expect(notified).toEqual(['q', 'q']);
      expect(() => broker.complete(locked)).toThrow(MessageLockLostError);
      expect(broker.peek('q')).toMatchObject([{ messageId: 'm1', locked: false, deliveryCount: 1 }]);
    } finally {
      unsubscribe();
      broker.close();
    }
  });
});

describe('embedded broker: the active message count', () => {
  it('counts messages waiting or locked, not completed, dead-lettered or dropped as duplicates', async () => {
    const broker = brokerWith({
      maxDeliveryCount: 1,
      duplicateDetection: true,
      duplicateDetectionWindowMs: 60_000,
    });
    await broker.send('q', [message('a'), message('b'), message('c'), message('a')]);
    expect(broker.activeMessageCount('q')).toBe(3);
    const first = mustReceive(broker.receive('q'));
    // Locked, still active.
    expect(broker.activeMessageCount('q')).toBe(3);
    broker.complete(first);
    expect(broker.activeMessageCount('q')).toBe(2);
    broker.deadLetter(mustReceive(broker.receive('q')), 'r', 'd');
    expect(broker.activeMessageCount('q')).toBe(1);
    expect(broker.stats().q).toMatchObject({ sent: 3, completed: 1, deadLettered: 1 });
  });

  it('stays exact when the duplicate fault delivers a message twice and both copies complete', async () => {
    const broker = brokerWith({}, { random: draws(0), faults: { duplicate: 1 } });
    await broker.send('q', [message('x')]);
    for (let i = 0; i < 4 && broker.activeMessageCount('q') > 0; i++) {
      const received = broker.receive('q');
      if (received) broker.complete(received);
    }
    expect(broker.activeMessageCount('q')).toBe(0);
    // The counters cannot say it: a second completion of the fault's copy.
    expect(broker.stats().q.completed).toBeGreaterThan(broker.stats().q.sent);
  });
});
