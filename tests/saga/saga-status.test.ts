/**
 * recordSagaStatus and raiseSagaAlert (src/services/fulfillment/saga-activities.ts) on their own,
 * over the embedded store: a start over an ended saga, the point of no return against a cancel, a
 * needs-attention episode, the cap on transitions, the alert's trace.
 */
import {
  raiseSagaAlert,
  recordSagaStatus,
  runOperation,
  type StatusChange,
} from '../../src/services/fulfillment/saga-activities';
import {
  MAX_TRANSITIONS,
  readSagaRecord,
  sagaRecordId,
  type SagaRecord,
} from '../../src/services/fulfillment/saga-record';
import type { FulfillmentInput } from '../../src/services/ports';
import { NOW_ISO, counting, fulfillmentInput, line, sagaDeps, world, type World } from '../support/saga';

const order: FulfillmentInput = fulfillmentInput('O-1', [line('SKU-A', 2)]);
const FULFILL = 'fulfill-O-1';

function status(change: Partial<StatusChange> & Pick<StatusChange, 'status'>): StatusChange {
  return { order, instanceId: FULFILL, reason: null, ...change };
}

async function record(w: World): Promise<SagaRecord> {
  const found = await readSagaRecord(w.orders, 'O-1');
  if (found === undefined) throw new Error('no saga record');
  return found;
}

async function patch(w: World, change: Partial<SagaRecord>): Promise<void> {
  const stored = await w.orders.read<SagaRecord>('O-1', sagaRecordId('O-1'));
  if (stored === undefined) throw new Error('no saga record');
  await w.orders.replace({ ...stored.document, ...change }, { ifMatch: stored.etag });
}

const CANCEL = {
  requestedAt: NOW_ISO,
  afterPointOfNoReturn: false,
  fee: null,
  delivered: false,
  requestedBy: null,
};

describe('recordSagaStatus with begin', () => {
  it.each(['completed', 'compensated', 'cancelled'] as const)(
    'leaves a saga that %s alone and answers with its outcome',
    async (ended) => {
      const w = world();
      const deps = sagaDeps(w);
      await recordSagaStatus(deps, status({ status: ended, reason: 'done before' }));
      const before = await record(w);
      const events = w.telemetry.events.length;
      await expect(recordSagaStatus(deps, status({ status: 'running', begin: true }))).resolves.toEqual({
        cancelRequested: false,
        ended: { status: ended, reason: 'done before' },
      });
      expect(await record(w)).toEqual(before);
      expect(w.telemetry.events).toHaveLength(events);
    },
  );

  it("leaves another instance's saga alone, telling of its cancel", async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, status({ status: 'compensating', instanceId: 'cancel-O-1', reason: 'fee' }));
    await patch(w, { cancel: CANCEL });
    await expect(recordSagaStatus(deps, status({ status: 'running', begin: true }))).resolves.toEqual({
      cancelRequested: true,
      ended: { status: 'compensating', reason: 'fee' },
    });
    expect((await record(w)).instanceId).toBe('cancel-O-1');
  });

  it('starts a running saga of its own instance as any status change', async () => {
    const w = world();
    const deps = sagaDeps(w);
    // toStrictEqual: the answer has no `ended` key at all, not one that is undefined.
    await expect(recordSagaStatus(deps, status({ status: 'running', begin: true }))).resolves.toStrictEqual({
      cancelRequested: false,
    });
    await expect(recordSagaStatus(deps, status({ status: 'running', begin: true }))).resolves.toStrictEqual({
      cancelRequested: false,
    });
    expect((await record(w)).transitions.map((t) => t.status)).toEqual(['running']);
  });

  it('without begin, records a status change over an ended saga', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, status({ status: 'completed' }));
    await expect(
      recordSagaStatus(deps, status({ status: 'compensating', instanceId: 'cancel-O-1', reason: 'x' })),
    ).resolves.toEqual({ cancelRequested: false });
    expect((await record(w)).status).toBe('compensating');
  });
});

describe('recordSagaStatus at the point of no return', () => {
  it('marks the point once, with no new status and no Saga event', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, status({ status: 'running' }));
    const events = w.telemetry.events.length;
    await expect(
      recordSagaStatus(deps, status({ status: 'running', pointOfNoReturn: true })),
    ).resolves.toEqual({
      cancelRequested: false,
    });
    const marked = await record(w);
    expect(marked.pointOfNoReturnAt).toBe(NOW_ISO);
    expect(marked.transitions.map((t) => t.status)).toEqual(['running']);
    expect(w.telemetry.events).toHaveLength(events);
    const stored = await w.orders.read<SagaRecord>('O-1', sagaRecordId('O-1'));
    await recordSagaStatus(deps, status({ status: 'running', pointOfNoReturn: true }));
    expect((await w.orders.read<SagaRecord>('O-1', sagaRecordId('O-1')))?.etag).toBe(stored?.etag);
  });

  it('a cancel recorded first wins: the point is not marked, and the cancel is told', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, status({ status: 'running' }));
    await patch(w, { cancel: CANCEL });
    await expect(
      recordSagaStatus(deps, status({ status: 'running', pointOfNoReturn: true })),
    ).resolves.toStrictEqual({
      cancelRequested: true,
    });
    expect((await record(w)).pointOfNoReturnAt ?? null).toBeNull();
    // Nothing was recorded, so no status is told either.
    expect(w.telemetry.events.map((e) => e.name)).toEqual(['Saga.running']);
  });

  it('a plain status change after a cancel is recorded and tells of the cancel', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, status({ status: 'running' }));
    await patch(w, { cancel: CANCEL });
    await expect(
      recordSagaStatus(deps, status({ status: 'compensating', reason: 'cancelled' })),
    ).resolves.toEqual({
      cancelRequested: true,
    });
    expect((await record(w)).status).toBe('compensating');
    expect(w.telemetry.events.map((e) => e.name)).toEqual(['Saga.running', 'Saga.compensating']);
  });

  it('with a new status, records both the status and the point, and emits the event', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, status({ status: 'running' }));
    await recordSagaStatus(deps, status({ status: 'running', reason: 'confirming', pointOfNoReturn: true }));
    const marked = await record(w);
    expect(marked.pointOfNoReturnAt).toBe(NOW_ISO);
    expect(marked.transitions.map((t) => t.reason)).toEqual([null, 'confirming']);
    expect(w.telemetry.events.map((e) => e.name)).toEqual(['Saga.running', 'Saga.running']);
  });
});

describe('recordSagaStatus: a needs-attention episode', () => {
  it('starts the episode once, with no decision, even when the status stays the same', async () => {
    const w = world();
    const deps = sagaDeps(w);
    const attention = status({
      status: 'needs-attention',
      reason: 'refund keeps failing',
      episode: `${FULFILL}#1`,
    });
    await recordSagaStatus(deps, attention);
    expect((await record(w)).review).toEqual({ episode: `${FULFILL}#1`, decision: null });
    await patch(w, {
      review: { episode: `${FULFILL}#1`, decision: { action: 'retry', at: NOW_ISO, delivered: true } },
    });
    await recordSagaStatus(deps, attention);
    expect((await record(w)).review?.decision).toMatchObject({ action: 'retry' });
    await recordSagaStatus(deps, { ...attention, episode: `${FULFILL}#2` });
    const second = await record(w);
    expect(second.review).toEqual({ episode: `${FULFILL}#2`, decision: null });
    expect(second.transitions.map((t) => t.status)).toEqual(['running', 'needs-attention']);
  });

  it('starts no episode for another status, or without an episode', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, status({ status: 'compensating', reason: 'x', episode: `${FULFILL}#1` }));
    await recordSagaStatus(deps, status({ status: 'needs-attention', reason: 'y' }));
    expect((await record(w)).review ?? null).toBeNull();
  });

  it('leaves the episode under way, and its decision, to a needs-attention change without an episode', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, status({ status: 'needs-attention', reason: 'x', episode: `${FULFILL}#1` }));
    const decided = {
      episode: `${FULFILL}#1`,
      decision: { action: 'retry' as const, at: NOW_ISO, delivered: false },
    };
    await patch(w, { review: decided });
    await recordSagaStatus(deps, status({ status: 'needs-attention', reason: 'y' }));
    const after = await record(w);
    expect(after.reason).toBe('y');
    expect(after.review).toEqual(decided);
  });
});

describe('recordSagaStatus: the same status again', () => {
  it('from another instance is a change: the instance in charge is recorded, with a transition', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, status({ status: 'compensating', reason: 'fee' }));
    await recordSagaStatus(deps, status({ status: 'compensating', reason: 'fee', instanceId: 'cancel-O-1' }));
    const after = await record(w);
    expect(after.instanceId).toBe('cancel-O-1');
    expect(after.transitions.map((t) => t.status)).toEqual(['running', 'compensating', 'compensating']);
    expect(w.telemetry.events.map((e) => [e.name, e.properties.instanceId])).toEqual([
      ['Saga.compensating', FULFILL],
      ['Saga.compensating', 'cancel-O-1'],
    ]);
  });

  it('of the same instance changes nothing and still tells of a cancel recorded', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, status({ status: 'running' }));
    await patch(w, { cancel: CANCEL });
    const stored = await w.orders.read<SagaRecord>('O-1', sagaRecordId('O-1'));
    await expect(recordSagaStatus(deps, status({ status: 'running' }))).resolves.toStrictEqual({
      cancelRequested: true,
    });
    expect((await w.orders.read<SagaRecord>('O-1', sagaRecordId('O-1')))?.etag).toBe(stored?.etag);
  });
});

describe('recordSagaStatus: the transitions kept', () => {
  it(`keeps the first and the latest ${MAX_TRANSITIONS - 1}, counting the ones dropped between`, async () => {
    const w = world();
    const deps = sagaDeps(w);
    // The record starts with one transition (running, no reason): 99 more fill it.
    for (let n = 0; n < MAX_TRANSITIONS - 1; n++) {
      await recordSagaStatus(deps, status({ status: 'running', reason: `r${n}` }));
    }
    const full = await record(w);
    expect(full.transitions).toHaveLength(MAX_TRANSITIONS);
    expect(full.transitionsDropped).toBe(0);
    await recordSagaStatus(deps, status({ status: 'running', reason: 'r99' }));
    await recordSagaStatus(deps, status({ status: 'running', reason: 'r100' }));
    const capped = await record(w);
    expect(capped.transitions).toHaveLength(MAX_TRANSITIONS);
    expect(capped.transitionsDropped).toBe(2);
    expect(capped.transitions.map((t) => t.reason).slice(0, 3)).toEqual([null, 'r2', 'r3']);
    expect(capped.transitions.at(-1)?.reason).toBe('r100');
  });
});

describe('raiseSagaAlert', () => {
  it('counts an alert once per key and traces it as an error with the order and the instance', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, status({ status: 'running' }));
    const alert = {
      order,
      instanceId: FULFILL,
      key: 'k1',
      failed: ['refundPayment' as const],
      message: 'refund down',
    };
    await raiseSagaAlert(deps, alert);
    await raiseSagaAlert(deps, alert);
    expect((await record(w)).alerts).toBe(1);
    expect(w.telemetry.traces.filter((t) => t.level === 'error')).toEqual([
      {
        level: 'error',
        message: 'saga of order O-1 needs attention: refund down',
        properties: { orderId: 'O-1', instanceId: FULFILL, correlationId: 'corr-O-1' },
      },
    ]);
  });
});

describe('runOperation on what the other tests leave out', () => {
  it('calls the downstream of a settlement and of a shipment cancel', async () => {
    const w = world();
    const calls = counting(w.downstream);
    const deps = sagaDeps(w, calls.downstream);
    await runOperation(deps, 'commitInventory', { order });
    await runOperation(deps, 'cancelShipment', { order });
    expect(calls.log).toEqual(['inventory.commit', 'shipping.cancel']);
  });

  it('records an error that is no AppError with the code error, on one line, and warns with it whole', async () => {
    const w = world();
    const calls = counting(w.downstream, (call) => {
      if (call === 'payments.charge') throw new Error('gateway\nreset');
    });
    const deps = sagaDeps(w, calls.downstream);
    await expect(runOperation(deps, 'chargePayment', { order })).rejects.toThrow('gateway\nreset');
    expect((await record(w)).steps.chargePayment).toMatchObject({
      status: 'retrying',
      code: 'error',
      error: 'gateway reset',
    });
    expect(w.telemetry.traces.filter((t) => t.level === 'warning')).toEqual([
      {
        level: 'warning',
        message: 'saga of order O-1: chargePayment failed: gateway\nreset',
        properties: { orderId: 'O-1', correlationId: 'corr-O-1' },
      },
    ]);
  });

  it('answers a step recorded failed without a code or a message with "failed" for both, not performing it', async () => {
    const w = world();
    const calls = counting(w.downstream);
    await recordSagaStatus(sagaDeps(w), status({ status: 'running' }));
    const failed = {
      status: 'failed' as const,
      attempts: 1,
      result: null,
      error: null,
      code: null,
      compensation: 'refundPayment' as const,
      startedAt: NOW_ISO,
      endedAt: NOW_ISO,
    };
    await patch(w, { steps: { chargePayment: failed } });
    await expect(runOperation(sagaDeps(w, calls.downstream), 'chargePayment', { order })).resolves.toEqual({
      ok: false,
      code: 'failed',
      message: 'failed',
    });
    expect(calls.log).toEqual([]);
  });

  it('leaves out the step when its entry is gone from the record by the time the step ends', async () => {
    const w = world();
    const builtIn = w.downstream;
    const downstream = {
      ...builtIn,
      confirmations: {
        // Another writer replaces the record meanwhile, without this step's entry.
        send: async (...args: Parameters<typeof builtIn.confirmations.send>) => {
          await patch(w, { steps: {} });
          return builtIn.confirmations.send(...args);
        },
      },
    };
    await recordSagaStatus(sagaDeps(w), status({ status: 'running' }));
    await expect(runOperation(sagaDeps(w, downstream), 'confirmOrder', { order })).resolves.toEqual({
      ok: true,
      result: { confirmationId: 'confirmation:O-1' },
    });
    expect((await record(w)).steps).toEqual({});
  });

  it('warns of nothing when the message fits on one line', async () => {
    const w = world();
    const calls = counting(w.downstream, (call) => {
      if (call === 'payments.charge') throw new Error('gateway reset');
    });
    await expect(runOperation(sagaDeps(w, calls.downstream), 'chargePayment', { order })).rejects.toThrow();
    expect(w.telemetry.traces.filter((t) => t.level === 'warning')).toEqual([]);
  });
});
