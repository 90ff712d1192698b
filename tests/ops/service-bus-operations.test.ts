/**
 * The Azure adapter without a network: the mapping of received messages to the port's shapes, and
 * the receive-and-find replay against a fake slice of the SDK that records every call.
 */
import { ServiceBusError, type ServiceBusMessage } from '@azure/service-bus';
import {
  createServiceBusOperations,
  deadLetteredOfReceived,
  durationMs,
  heldOf,
  isSameCopy,
  parkedOfReceived,
  portProperties,
  type ReceivedLike,
  type ReceiverLike,
  type ServiceBusParts,
} from '../../src/adapters/azure/service-bus-operations';
import { PermanentError, TransientError } from '../../src/domain/errors';

/** What `Long` offers the adapter: its decimal text. */
const long = (value: string): { toString(): string } => ({ toString: () => value });

function received(
  overrides: Partial<ReceivedLike> & { messageId: string; sequenceNumber: string },
): ReceivedLike {
  const { sequenceNumber, ...rest } = overrides;
  return {
    body: { n: 1 },
    enqueuedTimeUtc: new Date('2024-05-01T10:00:00Z'),
    deliveryCount: 1,
    applicationProperties: {},
    ...rest,
    sequenceNumber: long(sequenceNumber),
  };
}

describe('mapping received messages', () => {
  it('keeps the fields a replay needs; dates become ISO text and nulls go from the properties', () => {
    const message = received({
      messageId: 'T-1:ab',
      sequenceNumber: '9007199254740993', // past Number.MAX_SAFE_INTEGER: kept exactly as text
      sessionId: 'O-1',
      correlationId: 42,
      subject: 'OrderCreated',
      applicationProperties: { sequence: 1, final: false, at: new Date('2024-01-02T03:04:05Z'), gone: null },
    });
    expect(heldOf(message)).toEqual({
      messageId: 'T-1:ab',
      sessionId: 'O-1',
      body: { n: 1 },
      correlationId: '42',
      subject: 'OrderCreated',
      applicationProperties: { sequence: 1, final: false, at: '2024-01-02T03:04:05.000Z' },
      sequenceNumber: '9007199254740993',
      enqueuedTimeUtc: Date.parse('2024-05-01T10:00:00Z'),
      deliveryCount: 1,
    });
    const bytes = received({ messageId: 'unused', sequenceNumber: '7' });
    expect(heldOf({ ...bytes, messageId: Buffer.from('bytes-id') })).toMatchObject({
      messageId: 'bytes-id',
      sessionId: null,
      sequenceNumber: '7',
    });
    // What the broker always sets is never made up: a message without it is an error naming the field.
    expect(() => heldOf({ body: null, messageId: 'm-1' })).toThrow(
      'message m-1 came from Service Bus without sequenceNumber',
    );
    expect(() => heldOf({ ...bytes, enqueuedTimeUtc: undefined })).toThrow('without enqueuedTimeUtc');
    expect(() => heldOf({ ...bytes, deliveryCount: undefined })).toThrow('without deliveryCount');
    expect(() => heldOf({ ...bytes, messageId: undefined })).toThrow('without messageId');
    expect(portProperties(undefined)).toEqual({});
  });

  it('reads the park record of a parked message and the reason of a dead-lettered one', () => {
    const parked = parkedOfReceived(
      received({
        messageId: 'm',
        sequenceNumber: '3',
        applicationProperties: {
          parkReason: 'sequence-conflict',
          parkDescription: 'slot 3 taken',
          parkedFromQueue: 'order-transactions',
          parkedFromSessionId: 'O-3',
          transactionId: 'T-3',
        },
      }),
    );
    expect(parked).toMatchObject({
      kind: 'parked',
      park: {
        reason: 'sequence-conflict',
        description: 'slot 3 taken',
        fromQueue: 'order-transactions',
        fromSessionId: 'O-3',
        transactionId: 'T-3',
      },
    });
    const dead = deadLetteredOfReceived(
      'ledger',
      received({
        messageId: 'B-1',
        sequenceNumber: '5',
        deadLetterReason: 'MaxDeliveryCountExceeded',
        deadLetterErrorDescription: 'Message could not be consumed after 10 delivery attempts.',
      }),
    );
    expect(dead).toMatchObject({
      kind: 'dead-lettered',
      queue: 'ledger',
      deadLetterReason: 'MaxDeliveryCountExceeded',
      deadLetterDescription: 'Message could not be consumed after 10 delivery attempts.',
    });
  });

  it('recognises the same copy by id and sequence number together', () => {
    const held = heldOf(received({ messageId: 'm', sequenceNumber: '8' }));
    expect(isSameCopy(received({ messageId: 'm', sequenceNumber: '8' }), held)).toBe(true);
    expect(isSameCopy(received({ messageId: 'm', sequenceNumber: '9' }), held)).toBe(false);
    expect(isSameCopy(received({ messageId: 'n', sequenceNumber: '8' }), held)).toBe(false);
  });

  it('reads ISO 8601 durations as Service Bus writes them', () => {
    expect(durationMs('PT1H')).toBe(3_600_000);
    expect(durationMs('PT10M')).toBe(600_000);
    expect(durationMs('P1DT2H3M4.5S')).toBe(((24 + 2) * 3600 + 3 * 60 + 4.5) * 1000);
    expect(() => durationMs('1 hour')).toThrow(PermanentError);
    expect(() => durationMs('PT')).toThrow(PermanentError);
  });
});

// ---------------------------------------------------------------------------------------------
// The receive-and-find replay against a recording fake
// ---------------------------------------------------------------------------------------------

interface Calls {
  receivers: Array<{ queue: string; subQueueType?: string }>;
  completed: string[];
  abandoned: string[];
  sent: Array<{ queue: string; message: ServiceBusMessage }>;
  closed: number;
}

function fakeBus(
  entities: Record<string, ReceivedLike[]>,
  options: { failSend?: Error } = {},
): { parts: ServiceBusParts<ReceivedLike>; calls: Calls } {
  const calls: Calls = { receivers: [], completed: [], abandoned: [], sent: [], closed: 0 };
  const parts: ServiceBusParts<ReceivedLike> = {
    createReceiver(queue, receiverOptions): ReceiverLike<ReceivedLike> {
      calls.receivers.push({ queue, subQueueType: receiverOptions.subQueueType });
      const all = entities[receiverOptions.subQueueType === 'deadLetter' ? `${queue}/dlq` : queue] ?? [];
      let peeked = 0;
      let delivered = 0;
      return {
        async peekMessages(count) {
          const page = all.slice(peeked, peeked + count);
          peeked += page.length;
          return page;
        },
        async receiveMessages(count) {
          const page = all.slice(delivered, delivered + count);
          delivered += page.length;
          return page;
        },
        async completeMessage(message) {
          calls.completed.push(String(message.messageId));
        },
        async abandonMessage(message) {
          calls.abandoned.push(String(message.messageId));
        },
        async close() {
          calls.closed += 1;
        },
      };
    },
    createSender(queue) {
      return {
        async sendMessages(message) {
          if (options.failSend) throw options.failSend;
          calls.sent.push({ queue, message });
        },
        async close() {},
      };
    },
    async getQueueRuntimeProperties() {
      return { activeMessageCount: 4, deadLetterMessageCount: 1 };
    },
    async close() {},
  };
  return { parts, calls };
}

const parkedProperties = (reason: string, session: string): ReceivedLike['applicationProperties'] => ({
  parkReason: reason,
  parkDescription: `${reason} for a test`,
  parkedFromQueue: 'order-transactions',
  parkedFromSessionId: session,
  transactionId: 'T-1',
  sequence: 1,
});

describe('the Azure replay', () => {
  const parked = [
    received({
      messageId: 'p1',
      sequenceNumber: '1',
      applicationProperties: parkedProperties('misrouted', 'O-9'),
    }),
    received({
      messageId: 'p2',
      sequenceNumber: '2',
      applicationProperties: parkedProperties('rejected', 'O-2'),
    }),
    received({
      messageId: 'p3',
      sequenceNumber: '3',
      applicationProperties: parkedProperties('invalid', 'O-3'),
    }),
  ];

  it('receives until it holds the copy, sends it without the park properties, completes it, abandons the rest', async () => {
    const { parts, calls } = fakeBus({ parked });
    const operations = createServiceBusOperations(parts);
    const message = await operations.findParked('p2');
    expect(message).toBeDefined();

    await expect(operations.replayParked(message!)).resolves.toEqual({
      delivered: true,
      queue: 'order-transactions',
      sessionId: 'O-2',
      messageId: 'replay-p2:p2',
    });
    expect(calls.sent).toEqual([
      {
        queue: 'order-transactions',
        message: {
          messageId: 'replay-p2:p2',
          sessionId: 'O-2',
          body: { n: 1 },
          contentType: 'application/json',
          correlationId: undefined,
          subject: undefined,
          applicationProperties: { transactionId: 'T-1', sequence: 1 },
        },
      },
    ]);
    expect(calls.completed).toEqual(['p2']);
    expect(calls.abandoned.sort()).toEqual(['p1', 'p3']);
    expect(calls.receivers.every((receiver) => receiver.queue === 'parked')).toBe(true);
  });

  it('leaves the copy where it was when the send fails, with the error classified', async () => {
    const { parts, calls } = fakeBus({ parked }, { failSend: new Error('socket closed') });
    const operations = createServiceBusOperations(parts);
    const message = (await operations.findParked('p1'))!;
    const error: unknown = await operations.replayParked(message).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toBe('sending to order-transactions failed: Error: socket closed');
    expect(calls.completed).toEqual([]);
    // The copy itself is abandoned with the others the page brought: available again at once.
    expect(calls.abandoned.sort()).toEqual(['p1', 'p2', 'p3']);
  });

  it('gives up after its bound, abandoning what it received, and sends nothing', async () => {
    const { parts, calls } = fakeBus({ parked });
    const operations = createServiceBusOperations(parts, { maxScanned: 2 });
    const message = (await operations.findParked('p3'))!;
    await expect(operations.replayParked(message)).resolves.toEqual({ delivered: false });
    expect(calls.sent).toEqual([]);
    expect(calls.abandoned.sort()).toEqual(['p1', 'p2']);
  });

  it('replays a dead letter from the dead-letter sub-queue into its own queue and session', async () => {
    const dead = received({
      messageId: 'd1',
      sequenceNumber: '40',
      sessionId: 'O-4',
      subject: 'OrderCreated',
    });
    const { parts, calls } = fakeBus({ 'order-transactions/dlq': [dead] });
    const operations = createServiceBusOperations(parts);
    const listing = await operations.listDeadLettered('order-transactions');
    expect(listing).toMatchObject({
      truncated: false,
      messages: [{ messageId: 'd1', queue: 'order-transactions' }],
    });
    await operations.replayDeadLettered(listing.messages[0]);
    expect(calls.receivers).toContainEqual({ queue: 'order-transactions', subQueueType: 'deadLetter' });
    expect(calls.sent).toMatchObject([
      {
        queue: 'order-transactions',
        message: { messageId: 'replay-d40:d1', sessionId: 'O-4', subject: 'OrderCreated' },
      },
    ]);
    expect(calls.completed).toEqual(['d1']);
  });
});

describe('the Azure adapter classifies bus errors as the sender does', () => {
  it('a refused receive is permanent, named by what failed', async () => {
    const { parts } = fakeBus({});
    const refusing: ServiceBusParts<ReceivedLike> = {
      ...parts,
      createReceiver: (queue, options) => ({
        ...parts.createReceiver(queue, options),
        peekMessages: async () => {
          // As the SDK translates a refusal: not retryable.
          throw Object.assign(new ServiceBusError('Unauthorized access', 'UnauthorizedAccess'), {
            retryable: false,
          });
        },
      }),
    };
    const listing = createServiceBusOperations(refusing).listDeadLettered('ledger');
    await expect(listing).rejects.toThrow(PermanentError);
    await expect(createServiceBusOperations(refusing).listParked()).rejects.toThrow(
      'peeking parked failed (UnauthorizedAccess): Unauthorized access',
    );
  });
});

describe('the Azure listings and backlog', () => {
  it('says a listing is truncated when more messages lie past its bound', async () => {
    const many = Array.from({ length: 5 }, (_, i) =>
      received({ messageId: `m${i}`, sequenceNumber: String(i + 1), applicationProperties: {} }),
    );
    const operations = createServiceBusOperations(fakeBus({ parked: many }).parts, { maxListed: 3 });
    const listing = await operations.listParked();
    expect(listing.messages.map((m) => m.messageId)).toEqual(['m0', 'm1', 'm2']);
    expect(listing.truncated).toBe(true);
    const all = await createServiceBusOperations(fakeBus({ parked: many }).parts).listParked();
    expect(all.truncated).toBe(false);
  });

  it('counts pending messages per session from a peek, with the runtime counts and the oldest enqueued times', async () => {
    const minute = (n: number) => new Date(Date.UTC(2024, 4, 1, 10, n));
    const queue = [
      ['O-1', 3],
      ['O-2', 1],
      ['O-1', 2],
      ['O-1', 5],
    ].map(([sessionId, at], i) =>
      received({
        messageId: `m${i}`,
        sequenceNumber: String(i + 1),
        sessionId: String(sessionId),
        enqueuedTimeUtc: minute(Number(at)),
      }),
    );
    const operations = createServiceBusOperations(fakeBus({ 'order-transactions': queue }).parts);
    await expect(operations.backlog('order-transactions')).resolves.toEqual({
      queue: 'order-transactions',
      activeMessages: 4,
      deadLetteredMessages: 1,
      oldestEnqueuedTimeUtc: minute(1).getTime(),
      sessions: [
        { sessionId: 'O-1', pending: 3, oldestEnqueuedTimeUtc: minute(2).getTime() },
        { sessionId: 'O-2', pending: 1, oldestEnqueuedTimeUtc: minute(1).getTime() },
      ],
      truncated: false,
    });
  });

  it("reads a queue without sessions' oldest enqueued time from a peek too", async () => {
    const parked = [4, 2].map((at, i) =>
      received({
        messageId: `p${i}`,
        sequenceNumber: String(i + 1),
        enqueuedTimeUtc: new Date(Date.UTC(2024, 4, 1, 10, at)),
      }),
    );
    const operations = createServiceBusOperations(fakeBus({ parked }).parts);
    await expect(operations.backlog('parked')).resolves.toMatchObject({
      sessions: [],
      oldestEnqueuedTimeUtc: Date.UTC(2024, 4, 1, 10, 2),
    });
  });

  it('takes what replay needs of a queue from the settings, with no management call (no Manage right)', async () => {
    // The default deployment grants no Manage right for replay: every administration call is refused.
    const { parts } = fakeBus({});
    const manageRefused: ServiceBusParts<ReceivedLike> = {
      ...parts,
      getQueueRuntimeProperties: async () => {
        throw Object.assign(new Error('Unauthorized'), { statusCode: 401 });
      },
    };
    const hour = createServiceBusOperations(manageRefused, { duplicateDetectionWindowMs: 3_600_000 });
    await expect(hour.queueInfo('ledger')).resolves.toEqual({
      requiresSession: true,
      duplicateDetectionWindowMs: 3_600_000,
    });
    await expect(hour.queueInfo('order-transactions')).resolves.toEqual({
      requiresSession: true,
      duplicateDetectionWindowMs: 3_600_000,
    });
    const tenMinutes = createServiceBusOperations(manageRefused, { duplicateDetectionWindowMs: 600_000 });
    await expect(tenMinutes.queueInfo('parked')).resolves.toEqual({
      requiresSession: false,
      duplicateDetectionWindowMs: 600_000,
    });
  });

  it('classifies a refused management call as permanent and a throttled one as transient', async () => {
    const { parts } = fakeBus({});
    const refusing = (statusCode: number): ServiceBusParts<ReceivedLike> => ({
      ...parts,
      getQueueRuntimeProperties: async () => {
        throw Object.assign(new Error('no'), { statusCode });
      },
    });
    await expect(createServiceBusOperations(refusing(403)).backlog('ledger')).rejects.toThrow(PermanentError);
    await expect(createServiceBusOperations(refusing(401)).backlog('ledger')).rejects.toThrow(/Data Owner/);
    await expect(createServiceBusOperations(refusing(429)).backlog('ledger')).rejects.toThrow(TransientError);
  });
});
