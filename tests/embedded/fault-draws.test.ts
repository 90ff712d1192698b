/**
 * Seeded faults drawn per thing, not per turn (docs/cli.md: the same input, seed and faults give the
 * same report): which message the duplicate fault delivers again does not depend on the order the
 * messages were completed in, as it does not across concurrent sessions.
 */
import {
  createEmbeddedBroker,
  type EmbeddedBrokerOptions,
  type ReceivedMessage,
} from '../../src/embedded/broker/broker';
import { keyedRandom } from '../../src/embedded/faults';

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
