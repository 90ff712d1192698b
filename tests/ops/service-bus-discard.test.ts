/**
 * Discard on `@azure/service-bus` (src/adapters/azure/service-bus-operations.ts): the copy is held
 * under its peek-lock while the archive is written, and completed only after; a failed archive gives
 * it back untouched.
 */
import {
  createServiceBusOperations,
  parkedOfReceived,
  type ReceivedLike,
  type ReceiverLike,
  type ServiceBusParts,
} from '../../src/adapters/azure/service-bus-operations';
import { PermanentError } from '../../src/domain/errors';

const long = (value: string): { toString(): string } => ({ toString: () => value });

function received(messageId: string, sequenceNumber: string): ReceivedLike {
  return {
    messageId,
    body: { orderId: 'O-1', sequence: 1 },
    enqueuedTimeUtc: new Date('2024-05-01T10:00:00Z'),
    deliveryCount: 1,
    applicationProperties: {
      parkReason: 'rejected',
      parkedFromQueue: 'order-transactions',
      parkedFromSessionId: 'O-1',
    },
    sequenceNumber: long(sequenceNumber),
  };
}

/** A parked queue that hands out `held` once, recording every settlement in order. */
function bus(held: ReceivedLike[]): { parts: ServiceBusParts<ReceivedLike>; events: string[] } {
  const events: string[] = [];
  const parts: ServiceBusParts<ReceivedLike> = {
    createReceiver(): ReceiverLike<ReceivedLike> {
      let delivered = 0;
      return {
        peekMessages: async () => [],
        async receiveMessages(count) {
          const page = held.slice(delivered, delivered + count);
          delivered += page.length;
          return page;
        },
        completeMessage: async (message) => void events.push(`complete ${String(message.messageId)}`),
        abandonMessage: async (message) => void events.push(`abandon ${String(message.messageId)}`),
        close: async () => undefined,
      };
    },
    createSender: () => ({ sendMessages: async () => undefined, close: async () => undefined }),
    getQueueRuntimeProperties: async () => ({ activeMessageCount: 0, deadLetterMessageCount: 0 }),
    close: async () => undefined,
  };
  return { parts, events };
}

describe('discarding a parked message on Service Bus', () => {
  it('archives while it holds the copy, then completes it; what it passed over is given back', async () => {
    const queue = [received('other', '1'), received('m', '2')];
    const { parts, events } = bus(queue);
    const operations = createServiceBusOperations(parts, { receiveWaitMs: 1 });
    const outcome = await operations.discardParked(parkedOfReceived(queue[1]), async () => {
      events.push('archive');
    });
    expect(outcome).toEqual({ discarded: true });
    expect(events).toEqual(['archive', 'complete m', 'abandon other']);
  });

  it('leaves the copy where it was when the archive fails, and says why', async () => {
    const queue = [received('m', '2')];
    const { parts, events } = bus(queue);
    const operations = createServiceBusOperations(parts, { receiveWaitMs: 1 });
    await expect(
      operations.discardParked(parkedOfReceived(queue[0]), async () => {
        throw new PermanentError('store-refused', 'the archive was refused');
      }),
    ).rejects.toThrow('the archive was refused');
    expect(events).toEqual(['abandon m']);
  });

  it('archives nothing when the copy is gone (replayed or discarded meanwhile)', async () => {
    const { parts, events } = bus([received('other', '1')]);
    const operations = createServiceBusOperations(parts, { receiveWaitMs: 1 });
    const keep = jest.fn(async () => undefined);
    await expect(operations.discardParked(parkedOfReceived(received('m', '2')), keep)).resolves.toEqual({
      discarded: false,
    });
    expect(keep).not.toHaveBeenCalled();
    expect(events).toEqual(['abandon other']);
  });
});
