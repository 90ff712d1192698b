/**
 * The guard against a replay the broker would swallow: every queue the replayed message may land
 * in under its own id, `parked` included when it would be parked again, must have forgotten it. An
 * entry's replay into `order-transactions` goes under a fresh id, so nothing needs forgetting.
 */
import { createEmbeddedStore } from '../../local/store/document-store';
import { createEmbeddedBroker } from '../../local/broker/broker';
import { createAppQueues } from '../../local/app-queues';
import { createEmbeddedOperations } from '../../local/store/message-operations';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../../src/services/order-documents';
import { parkedMessage } from '../../src/services/convoy/parking';
import { replayParked, type ReplayDeps } from '../../src/services/operations/replay';

const MINUTE = 60_000;

function world(): {
  deps: ReplayDeps;
  broker: ReturnType<typeof createEmbeddedBroker>;
  later: (ms: number) => void;
} {
  let t = 1_700_000_000_000;
  const now = (): number => t;
  const broker = createEmbeddedBroker({ now });
  broker.createQueue('ledger', {
    requiresSession: true,
    duplicateDetection: true,
    duplicateDetectionWindowMs: MINUTE,
  });
  broker.createQueue('order-transactions', {
    requiresSession: true,
    duplicateDetection: true,
    duplicateDetectionWindowMs: MINUTE,
  });
  broker.createQueue('parked', { duplicateDetection: true, duplicateDetectionWindowMs: 10 * MINUTE });
  const orders = createEmbeddedStore({ now }).container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH);
  return {
    deps: { operations: createEmbeddedOperations(broker), orders, now },
    broker,
    later: (ms) => {
      t += ms;
    },
  };
}

describe('replay: duplicate detection guard', () => {
  it('waits for the parked queue too when a ledger message would be parked again', async () => {
    const { deps, broker, later } = world();
    await broker.send('parked', [
      parkedMessage({
        fromQueue: 'ledger',
        messageId: 'B-1',
        sessionId: 'main',
        body: 'not a batch',
        transactionId: null,
        reason: 'invalid',
        description: 'not a JSON object',
      }),
    ]);
    later(2 * MINUTE);
    const early = await replayParked(deps, 'B-1', { force: true });
    expect(early).toMatchObject({ replayed: false, refusal: 'duplicate-detection' });
    expect(early.replayed === false && early.reason).toMatch(/^parked detects duplicates over 10 minutes/);

    later(9 * MINUTE);
    await expect(replayParked(deps, 'B-1', { force: true })).resolves.toMatchObject({
      replayed: true,
      forced: true,
      sentAs: 'B-1',
      prediction: { outcome: 'parked', reason: 'invalid' },
    });
    expect(broker.peek('ledger').map((m) => [m.messageId, m.sessionId])).toEqual([['B-1', 'main']]);
  });

  it('an entry goes back under a fresh id: replayed at once, even when it would be parked again', async () => {
    let t = 1_700_000_000_000;
    const now = (): number => t;
    const broker = createEmbeddedBroker({ now });
    createAppQueues(
      broker,
      {},
      {
        'order-transactions': { duplicateDetectionWindowMs: MINUTE },
        parked: { duplicateDetectionWindowMs: 10 * MINUTE },
      },
    );
    const orders = createEmbeddedStore({ now }).container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH);
    const deps: ReplayDeps = { operations: createEmbeddedOperations(broker), orders, now };

    const entry = { transactionId: 'T-1', orderId: 'O-1', sequence: 1, type: 'OrderDeleted', data: {} };
    await broker.send('parked', [
      parkedMessage({
        fromQueue: 'order-transactions',
        messageId: 'T-1:aa',
        sessionId: 'O-2',
        body: entry,
        transactionId: 'T-1',
        reason: 'misrouted',
        description: 'orderId O-1 arrived in session O-2',
      }),
    ]);

    t += 2 * MINUTE;
    await expect(replayParked(deps, 'T-1:aa', { force: true })).resolves.toMatchObject({
      replayed: true,
      forced: true,
      sentAs: 'replay-p1:T-1:aa',
      prediction: { outcome: 'parked', reason: 'misrouted' },
    });
    expect(broker.peek('order-transactions').map((m) => [m.messageId, m.sessionId])).toEqual([
      ['replay-p1:T-1:aa', 'O-2'],
    ]);
  });
});
