/** The saga's activities (src/services/fulfillment/saga-activities.ts): the saga record as two-phase log and audit trail. */
import { PermanentError, TransientError } from '../../src/domain/errors';
import { fulfillmentInstanceId } from '../../src/domain/saga';
import type { Downstream } from '../../src/services/fulfillment/downstream-ports';
import type { FulfillmentInput } from '../../src/services/ports';
import {
  raiseSagaAlert,
  recordSagaStatus,
  runOperation,
  type OperationOutcome,
} from '../../src/services/fulfillment/saga-activities';
import { readSagaRecord, sagaRecordId, type SagaRecord } from '../../src/services/fulfillment/saga-record';
import {
  CATALOG,
  NOW_ISO,
  counting,
  fulfillmentInput,
  linesIn,
  line,
  recordsOfKind,
  sagaDeps,
  stockOf,
  world,
  type DownstreamCall,
  type World,
} from '../support/saga';

async function sagaRecord(w: World, orderId: string): Promise<SagaRecord> {
  const stored = await w.orders.read<SagaRecord>(orderId, sagaRecordId(orderId));
  if (stored === undefined) throw new Error(`no saga record for ${orderId}`);
  return stored.document;
}

function failOn(
  target: DownstreamCall,
  attempts: number[],
  error: () => Error,
): (call: DownstreamCall, attempt: number) => void {
  return (call, attempt) => {
    if (call === target && attempts.includes(attempt)) throw error();
  };
}

describe('runOperation', () => {
  it('records the step in saga:<orderId> in the orders container with its status, attempts and result', async () => {
    const w = world();
    const order = await linesIn(w, 'O-1', [line('SKU-A', 2), line('SKU-B', 1)]);

    const outcome = await runOperation(sagaDeps(w), 'reserveInventory', { order });

    expect(outcome).toEqual({ ok: true, result: { reserved: { 'SKU-A': 2, 'SKU-B': 1 } } });
    const stored = await w.orders.read<SagaRecord>('O-1', 'saga:O-1');
    expect(stored).toBeDefined();
    const record = stored?.document;
    expect(record).toMatchObject({
      id: 'saga:O-1',
      orderId: 'O-1',
      kind: 'saga',
      instanceId: 'fulfill-O-1',
      total: order.total,
      cancel: null,
      alerts: 0,
    });
    expect(record?.steps.reserveInventory).toEqual({
      status: 'completed',
      attempts: 1,
      code: null,
      result: { reserved: { 'SKU-A': 2, 'SKU-B': 1 } },
      error: null,
      compensation: 'releaseInventory',
      startedAt: NOW_ISO,
      endedAt: NOW_ISO,
    });
    expect(w.telemetry.total('saga.operation.completed', (p) => p.operation === 'reserveInventory')).toBe(1);
  });

  it('records each step with the compensation that undoes it, and none for confirmOrder or a compensation', async () => {
    const w = world();
    const deps = sagaDeps(w);
    const order = await linesIn(w, 'O-1', [line('SKU-A', 2)]);
    for (const step of ['reserveInventory', 'chargePayment', 'createShipment', 'confirmOrder'] as const) {
      expect((await runOperation(deps, step, { order })).ok).toBe(true);
    }
    expect((await runOperation(deps, 'releaseInventory', { order })).ok).toBe(true);

    const { steps } = await sagaRecord(w, 'O-1');
    expect(steps.reserveInventory?.compensation).toBe('releaseInventory');
    expect(steps.chargePayment?.compensation).toBe('refundPayment');
    expect(steps.createShipment?.compensation).toBe('cancelShipment');
    expect(steps.confirmOrder?.compensation).toBeNull();
    expect(steps.releaseInventory?.compensation).toBeNull();
    expect(steps.chargePayment?.result).toEqual({ chargeId: 'charge:O-1', amount: 20 });
    expect(steps.confirmOrder?.result).toEqual({ confirmationId: 'confirmation:O-1' });
  });

  it('marks the step running in the record before performing it (the first phase)', async () => {
    const w = world();
    const seen: unknown[] = [];
    const downstream: Downstream = {
      ...w.downstream,
      inventory: {
        ...w.downstream.inventory,
        async reserve(orderId, lines) {
          seen.push((await readSagaRecord(w.orders, orderId))?.steps.reserveInventory);
          return w.downstream.inventory.reserve(orderId, lines);
        },
      },
    };
    const order = await linesIn(w, 'O-1', [line('SKU-A', 1)]);

    await runOperation(sagaDeps(w, downstream), 'reserveInventory', { order });

    expect(seen).toEqual([
      {
        status: 'running',
        attempts: 1,
        result: null,
        error: null,
        code: null,
        compensation: 'releaseInventory',
        startedAt: NOW_ISO,
        endedAt: null,
      },
    ]);
  });

  it('does not perform a completed step again, returning its recorded result', async () => {
    const w = world();
    const wrapped = counting(w.downstream);
    const deps = sagaDeps(w, wrapped.downstream);
    const order = await linesIn(w, 'O-1', [line('SKU-A', 2)]);

    const first = await runOperation(deps, 'chargePayment', { order });
    const second = await runOperation(deps, 'chargePayment', { order });

    expect(second).toEqual(first);
    expect(wrapped.count('payments.charge')).toBe(1);
    expect((await sagaRecord(w, 'O-1')).steps.chargePayment).toMatchObject({
      status: 'completed',
      attempts: 1,
    });
  });

  it('returns a permanent refusal as a failed outcome, records it failed, and never performs it again', async () => {
    const w = world();
    const wrapped = counting(w.downstream);
    const deps = sagaDeps(w, wrapped.downstream);
    const order = await linesIn(w, 'O-1', [line('SKU-A', 1), line('NO-SUCH-SKU', 1)]);

    const first: OperationOutcome = await runOperation(deps, 'reserveInventory', { order });
    expect(first).toEqual({
      ok: false,
      code: 'unknown-sku',
      message: expect.stringContaining('NO-SUCH-SKU'),
    });

    const entry = (await sagaRecord(w, 'O-1')).steps.reserveInventory;
    expect(entry).toMatchObject({ status: 'failed', attempts: 1, result: null, endedAt: NOW_ISO });
    expect(entry?.error).toContain('NO-SUCH-SKU');
    expect(w.telemetry.total('saga.operation.failed')).toBe(1);

    const second = await runOperation(deps, 'reserveInventory', { order });
    expect(second.ok).toBe(false);
    expect(second.ok === false && second.message).toBe(first.ok === false && first.message);
    expect(wrapped.count('inventory.reserve')).toBe(1);
    expect((await sagaRecord(w, 'O-1')).steps.reserveInventory).toMatchObject({
      status: 'failed',
      attempts: 1,
    });
  });

  it('fails chargePayment for good over the credit limit', async () => {
    const w = world({ creditLimit: 100 });
    const order = await linesIn(w, 'O-1', [line('SKU-A', 3, 50)]);
    const outcome = await runOperation(sagaDeps(w), 'chargePayment', { order });
    expect(outcome).toMatchObject({ ok: false, code: 'over-credit-limit' });
    expect((await sagaRecord(w, 'O-1')).steps.chargePayment?.status).toBe('failed');
    expect(await recordsOfKind(w, 'charge')).toEqual([]);
  });

  it('throws a transient failure, records it retrying, and performs the step again on the next call', async () => {
    const w = world();
    const wrapped = counting(
      w.downstream,
      failOn(
        'inventory.reserve',
        [1],
        () => new TransientError('inventory-unavailable', 'inventory is down'),
      ),
    );
    const deps = sagaDeps(w, wrapped.downstream);
    const order = await linesIn(w, 'O-1', [line('SKU-A', 2)]);

    await expect(runOperation(deps, 'reserveInventory', { order })).rejects.toBeInstanceOf(TransientError);
    expect((await sagaRecord(w, 'O-1')).steps.reserveInventory).toMatchObject({
      status: 'retrying',
      attempts: 1,
      error: 'inventory is down',
      result: null,
    });
    expect(w.telemetry.total('saga.operation.retrying')).toBe(1);

    await expect(runOperation(deps, 'reserveInventory', { order })).resolves.toEqual({
      ok: true,
      result: { reserved: { 'SKU-A': 2 } },
    });
    expect(wrapped.count('inventory.reserve')).toBe(2);
    expect((await sagaRecord(w, 'O-1')).steps.reserveInventory).toMatchObject({
      status: 'completed',
      attempts: 2,
      error: null,
    });
    expect((await stockOf(w, 'SKU-A'))?.holds).toEqual({ 'O-1': 2 });
  });

  it('treats an unknown error as transient: thrown, recorded retrying', async () => {
    const w = world();
    const wrapped = counting(
      w.downstream,
      failOn('shipping.book', [1], () => new Error('socket hang up')),
    );
    const order = await linesIn(w, 'O-1', [line('SKU-A', 2)]);

    await expect(runOperation(sagaDeps(w, wrapped.downstream), 'createShipment', { order })).rejects.toThrow(
      'socket hang up',
    );
    expect((await sagaRecord(w, 'O-1')).steps.createShipment?.status).toBe('retrying');
    // A transient error of the primary carrier is not a refusal: no forward recovery to the alternate.
    expect(wrapped.log).toEqual(['shipping.book:primary']);
  });

  it('resumes a step a crash left running: it is performed again, not skipped', async () => {
    const w = world();
    const lines = [line('SKU-B', 4)];
    const order = await linesIn(w, 'O-1', lines);
    // The crash came after the downstream effect and before the record said so.
    await w.downstream.inventory.reserve('O-1', lines);
    const crashed: SagaRecord = {
      id: sagaRecordId('O-1'),
      orderId: 'O-1',
      kind: 'saga',
      instanceId: fulfillmentInstanceId('O-1'),
      status: 'running',
      reason: null,
      total: order.total,
      steps: {
        reserveInventory: {
          status: 'running',
          attempts: 1,
          result: null,
          error: null,
          code: null,
          compensation: 'releaseInventory',
          startedAt: '2024-05-01T11:59:00.000Z',
          endedAt: null,
        },
      },
      transitions: [{ at: '2024-05-01T11:59:00.000Z', status: 'running', reason: null }],
      alerts: 0,
      cancel: null,
    };
    expect((await w.orders.create(crashed)).status).toBe(201);

    const wrapped = counting(w.downstream);
    const outcome = await runOperation(sagaDeps(w, wrapped.downstream), 'reserveInventory', { order });

    expect(outcome).toEqual({ ok: true, result: { reserved: { 'SKU-B': 4 } } });
    expect(wrapped.count('inventory.reserve')).toBe(1);
    expect((await sagaRecord(w, 'O-1')).steps.reserveInventory).toMatchObject({
      status: 'completed',
      attempts: 2,
      startedAt: NOW_ISO,
      endedAt: NOW_ISO,
    });
    // Performed again, yet held once: the downstream is idempotent on the order.
    expect(await stockOf(w, 'SKU-B')).toMatchObject({ available: CATALOG['SKU-B'] - 4, holds: { 'O-1': 4 } });
  });

  it('runs a compensation again after it failed for good', async () => {
    const w = world();
    const wrapped = counting(
      w.downstream,
      failOn('payments.refund', [1], () => new PermanentError('refund-refused', 'the bank said no')),
    );
    const deps = sagaDeps(w, wrapped.downstream);
    const order = await linesIn(w, 'O-1', [line('SKU-A', 2, 50)]);
    await runOperation(deps, 'chargePayment', { order });

    const first = await runOperation(deps, 'refundPayment', { order });
    expect(first).toMatchObject({ ok: false, message: 'the bank said no' });
    expect((await sagaRecord(w, 'O-1')).steps.refundPayment).toMatchObject({ status: 'failed', attempts: 1 });

    const second = await runOperation(deps, 'refundPayment', { order });
    expect(second).toEqual({ ok: true, result: { refunded: 100 } });
    expect(wrapped.count('payments.refund')).toBe(2);
    expect((await sagaRecord(w, 'O-1')).steps.refundPayment).toMatchObject({
      status: 'completed',
      attempts: 2,
      error: null,
      compensation: null,
    });
    expect((await recordsOfKind(w, 'charge'))[0]).toMatchObject({ refunded: 100 });

    // Once done, a compensation is not done again.
    await runOperation(deps, 'refundPayment', { order });
    expect(wrapped.count('payments.refund')).toBe(2);
  });

  it('refunds the amount it is given (the total less the fee after the point of no return)', async () => {
    const w = world();
    const wrapped = counting(w.downstream);
    const deps = sagaDeps(w, wrapped.downstream);
    const order = await linesIn(w, 'O-1', [line('SKU-A', 5, 50)]);
    await runOperation(deps, 'chargePayment', { order });

    await expect(runOperation(deps, 'refundPayment', { order, refundAmount: 225 })).resolves.toEqual({
      ok: true,
      result: { refunded: 225 },
    });
    expect(wrapped.log).toContain('payments.refund:225');
    expect((await recordsOfKind(w, 'charge'))[0]).toMatchObject({ amount: 250, refunded: 225 });
  });

  it('records compensations run in parallel without losing either (optimistic concurrency on the record)', async () => {
    const w = world({ latencyMs: 1 });
    const wrapped = counting(w.downstream);
    const deps = sagaDeps(w, wrapped.downstream);
    const order = await linesIn(w, 'O-1', [line('SKU-A', 2, 50)]);
    await runOperation(deps, 'reserveInventory', { order });
    await runOperation(deps, 'chargePayment', { order });

    const outcomes = await Promise.all([
      runOperation(deps, 'refundPayment', { order }),
      runOperation(deps, 'releaseInventory', { order }),
    ]);

    expect(outcomes).toEqual([
      { ok: true, result: { refunded: 100 } },
      { ok: true, result: { released: { 'SKU-A': 2 } } },
    ]);
    const { steps } = await sagaRecord(w, 'O-1');
    expect(Object.keys(steps).sort()).toEqual([
      'chargePayment',
      'refundPayment',
      'releaseInventory',
      'reserveInventory',
    ]);
    expect(steps.refundPayment?.status).toBe('completed');
    expect(steps.releaseInventory?.status).toBe('completed');
    expect(steps.reserveInventory?.status).toBe('completed');
    expect(await stockOf(w, 'SKU-A')).toMatchObject({ available: CATALOG['SKU-A'], holds: {} });
  });

  it('recovers createShipment forward with the alternate carrier when the primary refuses', async () => {
    const w = world({ carrierCapacity: { primary: 5, alternate: 10 } });
    const wrapped = counting(w.downstream);
    const order = await linesIn(w, 'O-1', [line('SKU-A', 4), line('SKU-B', 3)]);

    const outcome = await runOperation(sagaDeps(w, wrapped.downstream), 'createShipment', { order });

    expect(outcome).toEqual({ ok: true, result: { shipmentId: 'shipment:O-1', carrier: 'alternate' } });
    expect(wrapped.log).toEqual(['shipping.book:primary', 'shipping.book:alternate']);
    expect((await sagaRecord(w, 'O-1')).steps.createShipment).toMatchObject({
      status: 'completed',
      attempts: 1,
      result: { carrier: 'alternate' },
      error: null,
    });
  });

  it('fails createShipment for good with carriers-refused when both carriers refuse', async () => {
    const w = world({ carrierCapacity: { primary: 5, alternate: 10 } });
    const order = await linesIn(w, 'O-1', [line('SKU-A', 11)]);

    const outcome = await runOperation(sagaDeps(w), 'createShipment', { order });

    expect(outcome).toMatchObject({ ok: false, code: 'carriers-refused' });
    const message = outcome.ok ? '' : outcome.message;
    expect(message).toContain('primary');
    expect(message).toContain('alternate');
    expect((await sagaRecord(w, 'O-1')).steps.createShipment?.status).toBe('failed');
    expect(await recordsOfKind(w, 'shipment')).toEqual([]);
  });
});

describe('recordSagaStatus', () => {
  const order: FulfillmentInput = fulfillmentInput('O-1', [line('SKU-A', 2)]);

  it('appends each status change to the transitions and emits Saga.<status>', async () => {
    const w = world();
    const deps = sagaDeps(w);

    await expect(
      recordSagaStatus(deps, { order, instanceId: 'fulfill-O-1', status: 'running', reason: null }),
    ).resolves.toEqual({ cancelRequested: false });
    await recordSagaStatus(deps, {
      order,
      instanceId: 'fulfill-O-1',
      status: 'compensating',
      reason: 'chargePayment failed: over the limit',
    });
    // Run again (an activity may be): nothing more is appended.
    await recordSagaStatus(deps, {
      order,
      instanceId: 'fulfill-O-1',
      status: 'compensating',
      reason: 'chargePayment failed: over the limit',
    });
    await recordSagaStatus(deps, {
      order,
      instanceId: 'fulfill-O-1',
      status: 'compensated',
      reason: 'chargePayment failed: over the limit',
    });

    const record = await sagaRecord(w, 'O-1');
    expect(record.status).toBe('compensated');
    expect(record.reason).toBe('chargePayment failed: over the limit');
    expect(record.transitions.map((t) => [t.status, t.reason])).toEqual([
      ['running', null],
      ['compensating', 'chargePayment failed: over the limit'],
      ['compensated', 'chargePayment failed: over the limit'],
    ]);
    expect(record.transitions.every((t) => t.at === NOW_ISO)).toBe(true);

    const names = w.telemetry.events.map((e) => e.name);
    expect([...new Set(names)]).toEqual(['Saga.running', 'Saga.compensating', 'Saga.compensated']);
    expect(w.telemetry.events[names.lastIndexOf('Saga.compensated')].properties).toMatchObject({
      orderId: 'O-1',
      instanceId: 'fulfill-O-1',
      reason: 'chargePayment failed: over the limit',
      correlationId: 'corr-O-1',
    });
  });

  it('records the instance now in charge', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, { order, instanceId: 'fulfill-O-1', status: 'completed', reason: null });
    await recordSagaStatus(deps, { order, instanceId: 'cancel-O-1', status: 'compensating', reason: 'fee' });
    const record = await sagaRecord(w, 'O-1');
    expect(record.instanceId).toBe('cancel-O-1');
    expect(record.transitions.map((t) => t.status)).toEqual(['running', 'completed', 'compensating']);
  });

  it('returns cancelRequested true when the record holds a cancel request', async () => {
    const w = world();
    const deps = sagaDeps(w);
    await recordSagaStatus(deps, { order, instanceId: 'fulfill-O-1', status: 'running', reason: null });
    const stored = await w.orders.read<SagaRecord>('O-1', sagaRecordId('O-1'));
    if (stored === undefined) throw new Error('no record');
    const replaced = await w.orders.replace(
      {
        ...stored.document,
        cancel: { requestedAt: NOW_ISO, afterPointOfNoReturn: false, fee: null },
      },
      { ifMatch: stored.etag },
    );
    expect(replaced.status).toBe(200);

    await expect(
      recordSagaStatus(deps, { order, instanceId: 'fulfill-O-1', status: 'completed', reason: null }),
    ).resolves.toEqual({ cancelRequested: true });
    expect((await readSagaRecord(w.orders, 'O-1'))?.cancel).toEqual({
      requestedAt: NOW_ISO,
      afterPointOfNoReturn: false,
      fee: null,
    });
  });
});

describe('raiseSagaAlert', () => {
  it('counts alerts on the record, emits Alert.SagaNeedsAttention and the saga.alerts metric', async () => {
    const w = world();
    const deps = sagaDeps(w);
    const order = await linesIn(w, 'O-1', [line('SKU-A', 2)]);
    await recordSagaStatus(deps, {
      order,
      instanceId: 'fulfill-O-1',
      status: 'needs-attention',
      reason: 'refund failed',
    });

    const alert = {
      order,
      instanceId: 'fulfill-O-1',
      key: 'fulfill-O-1#1',
      failed: ['refundPayment' as const, 'releaseInventory' as const],
      message: 'refund failed',
    };
    await raiseSagaAlert(deps, alert);
    await raiseSagaAlert(deps, { ...alert, key: 'fulfill-O-1#2' });
    // The second alert again, as after its result was lost: counted once.
    await raiseSagaAlert(deps, { ...alert, key: 'fulfill-O-1#2' });

    expect((await sagaRecord(w, 'O-1')).alerts).toBe(2);
    const alerts = w.telemetry.events.filter((e) => e.name === 'Alert.SagaNeedsAttention');
    expect(alerts).toHaveLength(2);
    expect(alerts[1].properties).toMatchObject({
      orderId: 'O-1',
      instanceId: 'fulfill-O-1',
      failed: 'refundPayment,releaseInventory',
      message: 'refund failed',
      alerts: 2,
      correlationId: 'corr-O-1',
    });
    expect(w.telemetry.total('saga.alerts')).toBe(2);
  });
});
