/**
 * The operations use cases without HTTP (src/services/operations/operations-api.ts): the outcome of
 * each request, its errors worded exactly, on a fake of the broker's operations.
 * tests/ops/operations-http.test.ts runs them behind the HTTP functions on the embedded app.
 */
import { createEmbeddedStore } from '../../local/store/document-store';
import { PermanentError, TransientError } from '../../src/domain/errors';
import { isOperableQueue, OPERABLE_QUEUES } from '../../src/services/operations/message-operations-port';
import type {
  DeadLetteredMessage,
  MessageOperations,
  OperableQueue,
  ParkedMessage,
  QueueBacklog,
} from '../../src/services/operations/message-operations-port';
import {
  listDeadLettered,
  listParked,
  parseReplayBody,
  replayDeadLetteredMessage,
  replayParkedMessage,
  sessionBacklog,
  showDeadLettered,
  showParked,
  type OperationsApiDeps,
} from '../../src/services/operations/operations-api';
import { detailOf, summaryOf } from '../../src/services/operations/held-messages';
import {
  ORDERS_CONTAINER,
  ORDERS_PARTITION_KEY_PATH,
  transactionDocument,
} from '../../src/services/order-documents';
import { entryDigest } from '../../src/domain/digest';
import type { Entry } from '../../src/domain/entry';

const parked: ParkedMessage = {
  kind: 'parked',
  messageId: 'P-1',
  sessionId: null,
  body: { any: 1 },
  correlationId: null,
  subject: 'rejected',
  applicationProperties: { parkReason: 'rejected' },
  sequenceNumber: '3',
  enqueuedTimeUtc: 0,
  deliveryCount: 0,
  // Came from parked itself: no replay target, so nothing is predicted.
  park: { reason: 'rejected', description: 'd', fromQueue: null, fromSessionId: null, transactionId: null },
};

const dead: DeadLetteredMessage = {
  kind: 'dead-lettered',
  queue: 'parked',
  messageId: 'D-1',
  sessionId: null,
  body: {},
  correlationId: null,
  subject: null,
  applicationProperties: {},
  sequenceNumber: '4',
  enqueuedTimeUtc: 0,
  deliveryCount: 10,
  deadLetterReason: 'MaxDeliveryCountExceeded',
  deadLetterDescription: null,
};

const entry: Entry = {
  transactionId: 'T-1',
  orderId: 'O-1',
  sequence: 1,
  type: 'OrderCreated',
  data: { customerId: 'C-1', currency: 'EUR' },
};

/** An entry parked as misrouted: replayed into the same wrong session, it would be parked again. */
const misrouted: ParkedMessage = {
  ...parked,
  messageId: 'M-1',
  body: entry,
  applicationProperties: {},
  park: {
    reason: 'misrouted',
    description: 'd',
    fromQueue: 'order-transactions',
    fromSessionId: 'O-2',
    transactionId: 'T-1',
  },
};

/** An entry dead-lettered after its write committed: a replay would have no effect. */
const seenDead: DeadLetteredMessage = {
  ...dead,
  queue: 'order-transactions',
  messageId: 'S-1',
  sessionId: 'O-1',
  body: entry,
};

const backlogOf = (queue: OperableQueue): QueueBacklog => ({
  queue,
  activeMessages: 2,
  deadLetteredMessages: 1,
  oldestEnqueuedTimeUtc: null,
  sessions: [],
  truncated: false,
});

interface Calls {
  listDeadLettered: OperableQueue[];
  findDeadLettered: Array<[OperableQueue, string]>;
  backlog: OperableQueue[];
  replayed: string[];
}

function depsWith(fail?: () => never): { deps: OperationsApiDeps; calls: Calls } {
  const calls: Calls = { listDeadLettered: [], findDeadLettered: [], backlog: [], replayed: [] };
  const failing = async (): Promise<void> => fail?.();
  const operations: MessageOperations = {
    listParked: async () => (await failing(), { messages: [parked], truncated: true }),
    listDeadLettered: async (queue) => {
      await failing();
      calls.listDeadLettered.push(queue);
      return { messages: [dead], truncated: false };
    },
    findParked: async (messageId) => (
      await failing(),
      [parked, misrouted].find((m) => m.messageId === messageId)
    ),
    findDeadLettered: async (queue, messageId) => {
      await failing();
      calls.findDeadLettered.push([queue, messageId]);
      return [dead, seenDead].find((m) => m.queue === queue && m.messageId === messageId);
    },
    replayParked: async (message) => {
      calls.replayed.push(message.messageId);
      return {
        delivered: true,
        queue: 'order-transactions',
        sessionId: 'O-2',
        messageId: `sent-${message.messageId}`,
      };
    },
    replayDeadLettered: async (message) => {
      calls.replayed.push(message.messageId);
      return { delivered: true, queue: message.queue, sessionId: null, messageId: message.messageId };
    },
    discardParked: async () => {
      throw new Error('not used by the operations API');
    },
    discardDeadLettered: async () => {
      throw new Error('not used by the operations API');
    },
    backlog: async (queue) => (await failing(), calls.backlog.push(queue), backlogOf(queue)),
    queueInfo: async () => ({ requiresSession: false, duplicateDetectionWindowMs: null }),
  };
  const orders = createEmbeddedStore().container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH);
  return { deps: { operations, orders, now: () => Date.now() }, calls };
}

describe('the operable queues', () => {
  it('are the three queues of docs/messages.md, and no other name', () => {
    expect(OPERABLE_QUEUES).toEqual(['ledger', 'order-transactions', 'parked']);
    for (const queue of OPERABLE_QUEUES) expect(isOperableQueue(queue)).toBe(true);
    expect(isOperableQueue('orders')).toBe(false);
    expect(isOperableQueue('')).toBe(false);
  });
});

describe('parseReplayBody', () => {
  it('takes no body, or an object with at most a boolean force', () => {
    expect(parseReplayBody(undefined)).toEqual({ ok: true, force: false });
    expect(parseReplayBody({})).toEqual({ ok: true, force: false });
    expect(parseReplayBody({ force: false })).toEqual({ ok: true, force: false });
    expect(parseReplayBody({ force: true })).toEqual({ ok: true, force: true });
  });

  it('names what is wrong with anything else', () => {
    const notAnObject = { ok: false, error: 'body must be empty or a JSON object such as {"force": true}' };
    expect(parseReplayBody(null)).toEqual(notAnObject);
    expect(parseReplayBody([])).toEqual(notAnObject);
    expect(parseReplayBody('force')).toEqual(notAnObject);
    expect(parseReplayBody({ forced: true, why: 1 })).toEqual({
      ok: false,
      error: 'unknown field forced, why; only "force" is taken',
    });
    expect(parseReplayBody({ force: 'yes' })).toEqual({
      ok: false,
      error: 'force must be true or false, got "yes"',
    });
    expect(parseReplayBody({ force: null })).toEqual({
      ok: false,
      error: 'force must be true or false, got null',
    });
  });
});

describe('the operations', () => {
  const unknownQueue = {
    kind: 'malformed',
    error: 'unknown queue "orders"; one of ledger, order-transactions, parked',
  };

  it('list held messages as summaries, with the listing bound', async () => {
    const { deps, calls } = depsWith();
    await expect(listParked(deps)).resolves.toEqual({
      kind: 'listed',
      messages: [summaryOf(parked)],
      truncated: true,
    });
    await expect(listDeadLettered(deps, 'parked')).resolves.toEqual({
      kind: 'listed',
      messages: [summaryOf(dead)],
      truncated: false,
    });
    await expect(listDeadLettered(deps, 'orders')).resolves.toEqual(unknownQueue);
    expect(calls.listDeadLettered).toEqual(['parked']);
  });

  it('show one held message in full with what a replay would do, or say there is none', async () => {
    const { deps, calls } = depsWith();
    await expect(showParked(deps, 'P-1')).resolves.toEqual({
      kind: 'message',
      message: {
        ...detailOf(parked),
        replay: {
          queue: null,
          reason: 'parked message P-1 records no queue it came from (parkedFromQueue is missing)',
        },
      },
    });
    await expect(showParked(deps, 'P-2')).resolves.toEqual({
      kind: 'no-such-message',
      error: 'no parked message P-2',
    });
    await expect(showDeadLettered(deps, 'parked', 'D-1')).resolves.toEqual({
      kind: 'message',
      message: {
        ...detailOf(dead),
        replay: {
          queue: 'parked',
          sessionId: null,
          prediction: { outcome: 'restored', description: 'it goes back into parked as it was' },
        },
      },
    });
    await expect(showDeadLettered(deps, 'ledger', 'D-1')).resolves.toEqual({
      kind: 'no-such-message',
      error: 'no dead-lettered message D-1 in ledger',
    });
    await expect(showDeadLettered(deps, 'orders', 'D-1')).resolves.toEqual(unknownQueue);
    expect(calls.findDeadLettered).toEqual([
      ['parked', 'D-1'],
      ['ledger', 'D-1'],
    ]);
  });

  it('replay with the force the body asks for, after checking the queue and the body', async () => {
    const { deps, calls } = depsWith();
    await expect(replayParkedMessage(deps, 'P-1', { force: 1 })).resolves.toEqual({
      kind: 'malformed',
      error: 'force must be true or false, got 1',
    });
    await expect(replayParkedMessage(deps, 'P-1', undefined)).resolves.toMatchObject({
      kind: 'replay',
      result: { replayed: false, refusal: 'no-origin' },
    });
    await expect(replayDeadLetteredMessage(deps, 'orders', 'D-1', undefined)).resolves.toEqual(unknownQueue);
    await expect(replayDeadLetteredMessage(deps, 'parked', 'D-1', [])).resolves.toMatchObject({
      kind: 'malformed',
      error: expect.stringContaining('body must be empty'),
    });
    expect(calls.replayed).toEqual([]);
    await expect(replayDeadLetteredMessage(deps, 'parked', 'D-1', { force: true })).resolves.toEqual({
      kind: 'replay',
      result: {
        replayed: true,
        queue: 'parked',
        sessionId: null,
        messageId: 'D-1',
        sentAs: 'D-1',
        forced: false,
        prediction: { outcome: 'restored', description: 'it goes back into parked as it was' },
      },
    });
    await expect(replayDeadLetteredMessage(deps, 'parked', 'D-9', {})).resolves.toMatchObject({
      kind: 'replay',
      result: { replayed: false, refusal: 'not-found', reason: 'no dead-lettered message D-9 in parked' },
    });
    expect(calls.replayed).toEqual(['D-1']);
  });

  it('pass the force on: a refused replay goes when forced', async () => {
    const { deps, calls } = depsWith();
    await deps.orders.create(
      transactionDocument('O-1', {
        transactionId: 'T-1',
        digest: entryDigest(entry),
        sequence: 1,
        outcome: 'applied',
      }),
    );
    await expect(replayParkedMessage(deps, 'M-1', {})).resolves.toMatchObject({
      kind: 'replay',
      result: { replayed: false, refusal: 'would-park-again' },
    });
    await expect(
      replayDeadLetteredMessage(deps, 'order-transactions', 'S-1', undefined),
    ).resolves.toMatchObject({
      kind: 'replay',
      result: { replayed: false, refusal: 'no-effect' },
    });
    expect(calls.replayed).toEqual([]);
    await expect(replayParkedMessage(deps, 'M-1', { force: true })).resolves.toMatchObject({
      kind: 'replay',
      result: { replayed: true, forced: true, sentAs: 'sent-M-1' },
    });
    await expect(
      replayDeadLetteredMessage(deps, 'order-transactions', 'S-1', { force: true }),
    ).resolves.toMatchObject({
      kind: 'replay',
      result: { replayed: true, forced: true },
    });
    expect(calls.replayed).toEqual(['M-1', 'S-1']);
  });

  it("read a queue's backlog", async () => {
    const { deps, calls } = depsWith();
    await expect(sessionBacklog(deps, 'ledger')).resolves.toEqual({
      kind: 'backlog',
      backlog: backlogOf('ledger'),
    });
    await expect(sessionBacklog(deps, 'orders')).resolves.toEqual(unknownQueue);
    expect(calls.backlog).toEqual(['ledger']);
  });

  it('answer a classified failure with its kind and code, and let any other error through', async () => {
    const transient = depsWith(() => {
      throw new TransientError('broker-unavailable', 'the broker is down');
    }).deps;
    const failed = {
      kind: 'failed',
      transient: true,
      error: 'the broker is down',
      code: 'broker-unavailable',
    };
    await expect(listParked(transient)).resolves.toEqual(failed);
    await expect(listDeadLettered(transient, 'ledger')).resolves.toEqual(failed);
    await expect(showParked(transient, 'P-1')).resolves.toEqual(failed);
    await expect(showDeadLettered(transient, 'ledger', 'D-1')).resolves.toEqual(failed);
    await expect(replayParkedMessage(transient, 'P-1', {})).resolves.toEqual(failed);
    await expect(replayDeadLetteredMessage(transient, 'ledger', 'D-1', {})).resolves.toEqual(failed);
    await expect(sessionBacklog(transient, 'ledger')).resolves.toEqual(failed);

    const permanent = depsWith(() => {
      throw new PermanentError('unauthorized', 'no Manage right');
    }).deps;
    await expect(listParked(permanent)).resolves.toEqual({
      kind: 'failed',
      transient: false,
      error: 'no Manage right',
      code: 'unauthorized',
    });

    const bug = depsWith(() => {
      throw new TypeError('a bug');
    }).deps;
    await expect(listParked(bug)).rejects.toThrow(new TypeError('a bug'));
  });
});
