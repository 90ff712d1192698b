/**
 * Seeded faults drawn per thing, not per turn (docs/cli.md: the same input, seed and faults give the
 * same report): which message the duplicate fault delivers again, which store call fails and which
 * message the reorder fault holds back do not depend on the order the calls came in, as it does not
 * across concurrent sessions. The crash fault's test is with the host's (functions-host.test.ts).
 */
import {
  createEmbeddedBroker,
  type EmbeddedBrokerOptions,
  type ReceivedMessage,
} from '../../local/broker/broker';
import { createEmbeddedStore } from '../../local/store/document-store';
import { TransientError } from '../../src/domain/errors';
import { keyedRandom, withReorderFaults, withTransientFaults } from '../../local/faults';

const IDS = Array.from({ length: 12 }, (_, i) => `m${i}`);

/** Completes every message in the given order of ids; returns the ids delivered again, sorted. */
async function redelivered(options: EmbeddedBrokerOptions, order: readonly string[]): Promise<string[]> {
  const broker = createEmbeddedBroker({ ...options, faults: { duplicate: 0.4 } });
  broker.createQueue('q', { lockDurationMs: 60_000, maxDeliveryCount: 10, duplicateDetection: true });
  await broker.send(
    'q',
    IDS.map((messageId) => ({ messageId, body: { messageId } })),
  );
  const firsts = new Map<string, ReceivedMessage>();
  for (let received = broker.receive('q'); received; received = broker.receive('q'))
    firsts.set(received.messageId, received);
  for (const id of order) {
    const received = firsts.get(id);
    if (received === undefined) throw new Error(`no ${id}`);
    broker.complete(received);
  }
  const again: string[] = [];
  for (let received = broker.receive('q'); received; received = broker.receive('q'))
    again.push(received.messageId);
  broker.close();
  return again.sort();
}

describe('seeded fault draws', () => {
  it('the duplicate fault picks the same messages whatever order they complete in', async () => {
    const draw = keyedRandom(3, 'duplicate');
    const forward = await redelivered({ draw }, IDS);
    expect(forward.length).toBeGreaterThan(0);
    expect(forward.length).toBeLessThan(IDS.length);
    expect(await redelivered({ draw }, [...IDS].reverse())).toEqual(forward);
  });

  it('a draw is a function of the seed, the fault and the key alone', () => {
    expect(keyedRandom(3, 'duplicate')('q\u0000m1')).toBe(keyedRandom(3, 'duplicate')('q\u0000m1'));
    expect(keyedRandom(3, 'duplicate')('q\u0000m1')).not.toBe(keyedRandom(4, 'duplicate')('q\u0000m1'));
    expect(keyedRandom(3, 'duplicate')('q\u0000m1')).not.toBe(keyedRandom(3, 'transient')('q\u0000m1'));
  });
});

describe('the transient store fault', () => {
  const PARTITIONS = Array.from({ length: 12 }, (_, i) => `O-${i}`);

  /** Reads one document of each partition in the given order, each until it succeeds; the attempts each took. */
  async function attempts(order: readonly string[]): Promise<Map<string, number>> {
    const store = createEmbeddedStore();
    const faulty = withTransientFaults(
      store.container('orders', '/orderId'),
      0.5,
      keyedRandom(3, 'transient'),
    );
    const tries = new Map<string, number>();
    for (const orderId of order) {
      for (let attempt = 1; ; attempt++) {
        try {
          await faulty.read(orderId, orderId);
          tries.set(orderId, attempt);
          break;
        } catch (error) {
          if (!(error instanceof TransientError) || attempt > 40) throw error;
        }
      }
    }
    return new Map([...tries].sort(([a], [b]) => (a < b ? -1 : 1)));
  }

  it('fails the same calls whatever order the partitions are called in', async () => {
    const forward = await attempts(PARTITIONS);
    // Some calls fail, and a call tried again draws anew rather than failing for ever.
    expect([...forward.values()].some((tries) => tries > 1)).toBe(true);
    expect([...forward.values()].some((tries) => tries === 1)).toBe(true);
    expect(await attempts([...PARTITIONS].reverse())).toEqual(forward);
  });

  it('fails a struck call by rejecting its promise, never by throwing at the call', async () => {
    const faulty = withTransientFaults(createEmbeddedStore().container('orders', '/orderId'), 1, () => 0);
    const calls = [
      () => faulty.read('O-1', 'O-1'),
      () => faulty.create({ id: 'O-1', orderId: 'O-1' }),
      () => faulty.batch('O-1', [{ op: 'read', id: 'O-1' }]),
      () => faulty.query({ where: { kind: 'order' } }),
    ];
    for (const call of calls) {
      let pending: Promise<unknown> | undefined;
      expect(() => {
        pending = call();
      }).not.toThrow();
      await expect(pending).rejects.toThrow('injected transient fault on orders');
    }
    expect(faulty.injected()).toBe(calls.length);
  });

  it('draws for the partition, the operation and the documents a call names', async () => {
    const calls: string[] = [];
    const faulty = withTransientFaults(createEmbeddedStore().container('orders', '/orderId'), 1, (key) => {
      calls.push(key);
      return 1;
    });
    const refused = (): undefined => undefined;
    await faulty.read('O-1', 'O-1').catch(refused);
    await faulty.read('O-1', 'O-1').catch(refused);
    await faulty.read('O-1', 'M-1').catch(refused);
    await faulty
      .batch('O-2', [
        { op: 'read', id: 'O-2' },
        { op: 'create', document: { id: 'm', orderId: 'O-2' } },
      ])
      .catch(refused);
    expect(calls).toEqual([
      'orders\u0000O-1\u0000read\u0000O-1\u00001',
      'orders\u0000O-1\u0000read\u0000O-1\u00002',
      // The attempt counts the partition's calls of that operation.
      'orders\u0000O-1\u0000read\u0000M-1\u00003',
      'orders\u0000O-2\u0000batch\u0000read:O-2,create:m\u00001',
    ]);
  });
});

describe('the reorder fault', () => {
  const MESSAGES = Array.from({ length: 16 }, (_, i) => `T-${i}`);

  /** Sends each message alone, in the given order; the ones that reached the broker after a later send. */
  async function held(order: readonly string[]): Promise<string[]> {
    let call = 0;
    const deliveredIn = new Map<string, number>();
    const producer = withReorderFaults(
      {
        async send(_queue, messages) {
          for (const message of messages) deliveredIn.set(message.messageId, call);
        },
      },
      0.4,
      keyedRandom(3, 'reorder'),
    );
    for (const [index, messageId] of order.entries()) {
      call = index;
      await producer.send('order-transactions', [{ messageId, sessionId: 'O-1', body: {} }]);
    }
    call = order.length;
    await producer.flush();
    return order.filter((messageId, index) => deliveredIn.get(messageId) !== index).sort();
  }

  it('holds back the same messages whatever order they are sent in', async () => {
    const forward = await held(MESSAGES);
    expect(forward.length).toBeGreaterThan(0);
    expect(forward.length).toBeLessThan(MESSAGES.length);
    expect(await held([...MESSAGES].reverse())).toEqual(forward);
  });
});
