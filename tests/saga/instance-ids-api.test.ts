/**
 * The orders API signals only the instances an order's id maps to (docs/saga.md, "Instance ids").
 * A saga record written before the change may name `fulfill-<orderId>` for an order id that is not
 * plain: put into the durable client's URL, such a name can reach another order's saga, so the API
 * refuses to signal it (409, naming "Upgrading") instead of guessing.
 */
import { fulfillmentInstanceId, type SagaStatus } from '../../src/domain/saga';
import * as ordersApi from '../../src/services/fulfillment/orders-api';
import { recordSagaStatus } from '../../src/services/fulfillment/saga-activities';
import { readSagaRecord } from '../../src/services/fulfillment/saga-record';
import { cancellationInstanceId } from '../../src/services/fulfillment/starter';
import { fulfillmentInputOf } from '../../src/services/order-documents';
import { NOW, line, orderDocument, sagaDeps, storeOrderDocuments, world, type World } from '../support/saga';
import { viaHttp } from '../support/http';
import { RecordingOrchestrations } from '../support/orchestrations';

const cancelOrder = viaHttp(ordersApi.cancelOrder);
const reviewSaga = viaHttp(ordersApi.reviewSaga);

interface Harness {
  w: World;
  orchestrations: RecordingOrchestrations;
  deps: ordersApi.OrdersApiDeps;
}

function harness(): Harness {
  const w = world();
  const orchestrations = new RecordingOrchestrations();
  return {
    w,
    orchestrations,
    deps: { orders: w.orders, orchestrations, cancellationFeePercent: 10, now: () => NOW },
  };
}

/** A submitted order whose saga record is `status`, written by the instance named `instanceId`. */
async function sagaOf(h: Harness, orderId: string, status: SagaStatus, instanceId: string): Promise<void> {
  const lines = [line('SKU-A', 1, 30)];
  const header = orderDocument(orderId, 'submitted', lines);
  await storeOrderDocuments(h.w.orders, header, lines);
  const order = fulfillmentInputOf(header, header.correlationId);
  const deps = sagaDeps(h.w);
  await recordSagaStatus(deps, { order, instanceId, status: 'running', reason: null });
  if (status !== 'running') await recordSagaStatus(deps, { order, instanceId, status, reason: 'why' });
  if (status === 'needs-attention')
    await recordSagaStatus(deps, { order, instanceId, status, reason: 'why', episode: `${instanceId}#1` });
}

describe('a saga record naming an instance from before instance ids were made safe', () => {
  it.each([
    ['O 1', 'fulfill-O 1'],
    ['O-%41', 'fulfill-O-%41'],
    // What the former client made of O-%41's name: another order's instance.
    ['O-%41', 'fulfill-O-A'],
    ['O-1 ', 'fulfill-O-1'],
  ])(
    '%j as %j: a cancel of the running saga is refused, recorded nowhere, raised nowhere',
    async (orderId, named) => {
      const h = harness();
      await sagaOf(h, orderId, 'running', named);
      const answer = await cancelOrder(h.deps, orderId);
      expect(answer.status).toBe(409);
      expect(String(answer.body.error)).toMatch(/named before instance ids were made safe.*"Upgrading"/);
      expect(String(answer.body.error)).toContain(JSON.stringify(named));
      expect(h.orchestrations.events).toEqual([]);
      expect((await readSagaRecord(h.w.orders, orderId))?.cancel).toBeNull();
    },
  );

  it('a review of it is refused, and no decision is recorded', async () => {
    const h = harness();
    await sagaOf(h, 'O-%41', 'needs-attention', 'fulfill-O-A');
    const answer = await reviewSaga(h.deps, 'O-%41', { action: 'retry' });
    expect(answer.status).toBe(409);
    expect(String(answer.body.error)).toMatch(/"Upgrading"/);
    expect(h.orchestrations.events).toEqual([]);
    const record = await readSagaRecord(h.w.orders, 'O-%41');
    expect(record?.review?.decision ?? null).toBeNull();
    expect(record?.reviews ?? []).toEqual([]);
  });

  it('a cancel of its completed saga starts cancelConfirmedOrder under the new name', async () => {
    const h = harness();
    await sagaOf(h, 'O 1', 'completed', 'fulfill-O 1');
    expect((await cancelOrder(h.deps, 'O 1')).status).toBe(202);
    expect(h.orchestrations.started).toEqual([
      expect.objectContaining({ name: 'cancelConfirmedOrder', instanceId: cancellationInstanceId('O 1') }),
    ]);
    expect(cancellationInstanceId('O 1')).toMatch(/^cancel-sha256-[0-9a-f]{64}$/);
  });
});

describe('a saga record naming the order’s own instance', () => {
  it.each(['O 1', 'O-%41', 'O-1 ', 'O-\ud800', 'O-1'])(
    '%j: cancel and review reach that instance',
    async (orderId) => {
      const h = harness();
      await sagaOf(h, orderId, 'running', fulfillmentInstanceId(orderId));
      expect((await cancelOrder(h.deps, orderId)).status).toBe(202);
      expect(h.orchestrations.events).toEqual([
        expect.objectContaining({ instanceId: fulfillmentInstanceId(orderId), eventName: 'cancel' }),
      ]);

      const other = `${orderId}-review`;
      await sagaOf(h, other, 'needs-attention', cancellationInstanceId(other));
      expect((await reviewSaga(h.deps, other, { action: 'retry' })).status).toBe(202);
      expect(h.orchestrations.events[1]).toMatchObject({
        instanceId: cancellationInstanceId(other),
        eventName: 'review',
      });
    },
  );
});
