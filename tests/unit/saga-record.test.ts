/**
 * The saga record's own helpers (src/services/fulfillment/saga-record.ts) and the starter's names
 * (src/services/fulfillment/starter.ts), over the embedded document store.
 */
import { createEmbeddedStore } from '../../local/store/document-store';
import {
  MAX_TRANSITIONS,
  readSagaRecord,
  sagaRecordId,
  updateSagaRecord,
  type SagaRecord,
} from '../../src/services/fulfillment/saga-record';
import {
  CANCEL_CONFIRMED_ORDER,
  CANCEL_EVENT,
  FULFILL_ORDER,
  REVIEW_EVENT,
  cancellationInstanceId,
  fulfillmentStarter,
} from '../../src/services/fulfillment/starter';
import type { DocumentContainer, OrchestrationClient } from '../../src/services/ports';

function orders(): DocumentContainer {
  return createEmbeddedStore().container('orders', '/orderId');
}

function initial(orderId: string): SagaRecord {
  return {
    id: sagaRecordId(orderId),
    orderId,
    kind: 'saga',
    instanceId: `fulfill-${orderId}`,
    status: 'running',
    reason: null,
    total: 100,
    steps: {},
    transitions: [],
    alerts: 0,
    cancel: null,
  };
}

describe('the saga record', () => {
  it('lives under saga:<orderId> in the order partition, and keeps at most 100 transitions', () => {
    expect(sagaRecordId('O-1')).toBe('saga:O-1');
    expect(MAX_TRANSITIONS).toBe(100);
  });

  it('reads nothing before it is written', async () => {
    await expect(readSagaRecord(orders(), 'O-1')).resolves.toBeUndefined();
  });

  it('is created from the initial record even when the change writes nothing', async () => {
    const container = orders();
    const result = await updateSagaRecord(
      container,
      'O-1',
      () => initial('O-1'),
      () => ({ next: undefined, result: 'nothing to change' }),
    );
    expect(result).toBe('nothing to change');
    expect(await readSagaRecord(container, 'O-1')).toMatchObject({ id: 'saga:O-1', status: 'running' });
  });

  it('applies the change to the initial record when absent, and to the stored record after', async () => {
    const container = orders();
    const seen: string[] = [];
    const alert = (record: SagaRecord) => {
      seen.push(`${record.status}/${record.alerts}`);
      return { next: { ...record, alerts: record.alerts + 1 }, result: record.alerts + 1 };
    };
    await expect(updateSagaRecord(container, 'O-2', () => initial('O-2'), alert)).resolves.toBe(1);
    await expect(
      updateSagaRecord(container, 'O-2', () => ({ ...initial('O-2'), alerts: 50 }), alert),
    ).resolves.toBe(2);
    expect(seen).toEqual(['running/0', 'running/1']);
    expect((await readSagaRecord(container, 'O-2'))?.alerts).toBe(2);
  });

  it('leaves a stored record alone when the change writes nothing', async () => {
    const container = orders();
    await updateSagaRecord(
      container,
      'O-3',
      () => initial('O-3'),
      (r) => ({
        next: { ...r, status: 'completed' },
        result: null,
      }),
    );
    const before = await container.read<SagaRecord>('O-3', 'saga:O-3');
    await updateSagaRecord(
      container,
      'O-3',
      () => initial('O-3'),
      () => ({ next: undefined, result: null }),
    );
    const after = await container.read<SagaRecord>('O-3', 'saga:O-3');
    expect(after?.etag).toBe(before?.etag);
    expect(after?.document.status).toBe('completed');
  });

  it('names the contention after the order when other writers keep winning', async () => {
    const container = orders();
    await updateSagaRecord(
      container,
      'O-4',
      () => initial('O-4'),
      (r) => ({ next: r, result: null }),
    );
    const racing: DocumentContainer = {
      ...container,
      read: container.read.bind(container),
      create: container.create.bind(container),
      replace: async (document, options) => {
        // Another writer always lands first: this write's etag never matches.
        const stored = await container.read<SagaRecord>('O-4', 'saga:O-4');
        await container.replace({ ...(stored!.document as SagaRecord), alerts: stored!.document.alerts + 1 });
        return container.replace(document, options);
      },
    } as DocumentContainer;
    await expect(
      updateSagaRecord(
        racing,
        'O-4',
        () => initial('O-4'),
        (r) => ({ next: { ...r }, result: null }),
      ),
    ).rejects.toMatchObject({
      kind: 'transient',
      code: 'saga-record-contention',
      message: 'saga record of O-4 kept changing under 10 consecutive writes',
    });
  });
});

describe('the starter', () => {
  it('names the orchestrations, their events and the cancellation instance', () => {
    expect(FULFILL_ORDER).toBe('fulfillOrder');
    expect(CANCEL_CONFIRMED_ORDER).toBe('cancelConfirmedOrder');
    expect(CANCEL_EVENT).toBe('cancel');
    expect(REVIEW_EVENT).toBe('review');
    expect(cancellationInstanceId('O-9')).toBe('cancel-O-9');
  });

  it('starts fulfillOrder as fulfill-<orderId> with the input', async () => {
    const started: unknown[] = [];
    const client: OrchestrationClient = {
      startNew: async (name, instanceId, input) => {
        started.push([name, instanceId, input]);
        return true;
      },
      getStatus: async () => undefined,
      raiseEvent: async () => {},
    };
    const input = { orderId: 'O-5', total: 10 } as unknown as Parameters<
      ReturnType<typeof fulfillmentStarter>['start']
    >[0];
    await fulfillmentStarter(client).start(input);
    expect(started).toEqual([['fulfillOrder', 'fulfill-O-5', input]]);
  });
});
