/**
 * cancelOrder and reviewSaga (src/services/fulfillment/orders-api.ts) over saga records written as
 * the saga leaves them (no orchestration runs): where the point of no return is read from, a decision
 * already taken on an episode, the review's delivery, and the exact refusals.
 */
import {
  cancelOrder,
  MAX_REVIEW_NOTE_LENGTH,
  parseReview,
  reviewSaga,
  type OrdersApiDeps,
} from '../../src/services/fulfillment/orders-api';
import {
  MAX_TRANSITIONS,
  readSagaRecord,
  sagaRecordId,
  type OperationRecord,
  type ReviewRecord,
  type SagaRecord,
} from '../../src/services/fulfillment/saga-record';
import { RecordingOrchestrations } from '../support/orchestrations';
import { NOW, NOW_ISO, line, orderDocument, storeOrderDocuments, world, type World } from '../support/saga';

const EPISODE = 'fulfill-O-1#1';
const EARLIER = '2024-05-01T11:00:00.000Z';

interface Harness {
  w: World;
  orchestrations: RecordingOrchestrations;
  deps: OrdersApiDeps;
}

/** A submitted order O-1 of total 250, and its saga record as given. */
async function harness(saga?: Partial<SagaRecord>): Promise<Harness> {
  const w = world();
  const orchestrations = new RecordingOrchestrations();
  const lines = [line('SKU-A', 5, 30), line('SKU-B', 2, 50)];
  await storeOrderDocuments(w.orders, orderDocument('O-1', 'submitted', lines), lines);
  if (saga !== undefined) expect((await w.orders.create(sagaRecord(saga))).status).toBe(201);
  return {
    w,
    orchestrations,
    deps: { orders: w.orders, orchestrations, cancellationFeePercent: 10, now: () => NOW },
  };
}

function sagaRecord(change: Partial<SagaRecord>): SagaRecord {
  return {
    id: sagaRecordId('O-1'),
    orderId: 'O-1',
    kind: 'saga',
    instanceId: 'fulfill-O-1',
    status: 'running',
    reason: null,
    total: 250,
    steps: {},
    transitions: [{ at: EARLIER, status: 'running', reason: null }],
    alerts: 0,
    cancel: null,
    ...change,
  };
}

function completed(compensation: OperationRecord['compensation']): OperationRecord {
  return {
    status: 'completed',
    attempts: 1,
    result: null,
    error: null,
    code: null,
    compensation,
    startedAt: EARLIER,
    endedAt: EARLIER,
  };
}

async function record(h: Harness): Promise<SagaRecord | undefined> {
  return readSagaRecord(h.w.orders, 'O-1');
}

/** Replaces the saga record as the orchestration would, between two steps of a request. */
async function patch(h: Harness, change: Partial<SagaRecord>): Promise<void> {
  const stored = await h.w.orders.read<SagaRecord>('O-1', sagaRecordId('O-1'));
  if (stored === undefined) throw new Error('no saga record');
  expect((await h.w.orders.replace({ ...stored.document, ...change }, { ifMatch: stored.etag })).status).toBe(
    200,
  );
}

describe('cancelOrder: the point of no return', () => {
  it('a completed saga keeps the fee even when its record holds no step', async () => {
    const h = await harness({ status: 'completed' });
    await expect(cancelOrder(h.deps, 'O-1')).resolves.toStrictEqual({
      kind: 'accepted',
      orderId: 'O-1',
      afterPointOfNoReturn: true,
      fee: 25,
    });
    expect(h.orchestrations.started.map((s) => [s.name, s.instanceId])).toEqual([
      ['cancelConfirmedOrder', 'cancel-O-1'],
    ]);
  });

  it('a running saga that recorded reaching the point keeps the fee before confirmOrder completed', async () => {
    const h = await harness({
      pointOfNoReturnAt: EARLIER,
      steps: {
        reserveInventory: completed('releaseInventory'),
        chargePayment: completed('refundPayment'),
        createShipment: completed('cancelShipment'),
      },
    });
    await expect(cancelOrder(h.deps, 'O-1')).resolves.toStrictEqual({
      kind: 'accepted',
      orderId: 'O-1',
      afterPointOfNoReturn: true,
      fee: 25,
    });
    expect((await record(h))?.cancel).toEqual({
      requestedAt: NOW_ISO,
      afterPointOfNoReturn: true,
      fee: 25,
      delivered: true,
      requestedBy: null,
    });
  });

  it('a running saga short of the point takes no fee', async () => {
    const h = await harness({
      pointOfNoReturnAt: null,
      steps: { reserveInventory: completed('releaseInventory') },
    });
    await expect(cancelOrder(h.deps, 'O-1')).resolves.toStrictEqual({
      kind: 'accepted',
      orderId: 'O-1',
      afterPointOfNoReturn: false,
      fee: null,
    });
  });
});

describe('parseReview: each refusal, word for word', () => {
  it.each([
    [{}, 'action must be "retry" or "resolved", got nothing'],
    [{ action: 'redo' }, 'action must be "retry" or "resolved", got "redo"'],
    [{ action: 'retry', note: 42 }, 'note must be a string when present'],
    [
      { action: 'retry', note: 'n'.repeat(MAX_REVIEW_NOTE_LENGTH + 1) },
      `note must be at most ${MAX_REVIEW_NOTE_LENGTH} characters, got ${MAX_REVIEW_NOTE_LENGTH + 1}`,
    ],
  ])('%j', (body, error) => {
    expect(parseReview(body)).toStrictEqual({ ok: false, error });
  });

  it(`takes a note of exactly ${MAX_REVIEW_NOTE_LENGTH} characters`, () => {
    const note = 'n'.repeat(MAX_REVIEW_NOTE_LENGTH);
    expect(parseReview({ action: 'resolved', note })).toStrictEqual({ ok: true, action: 'resolved', note });
  });
});

describe('reviewSaga over the record', () => {
  const attention: Partial<SagaRecord> = { status: 'needs-attention', reason: 'refund failed' };

  it('refuses a saga not started, saying so', async () => {
    const h = await harness();
    await expect(reviewSaga(h.deps, 'O-1', { action: 'retry' })).resolves.toStrictEqual({
      kind: 'not-now',
      reason: 'the fulfillment of order O-1 is not started; only one that needs attention takes a review',
    });
  });

  it('passes the decision with its episode, records it, and marks it delivered once raised', async () => {
    const h = await harness({ ...attention, review: { episode: EPISODE, decision: null } });
    await expect(reviewSaga(h.deps, 'O-1', { action: 'retry' }, 'admin-key')).resolves.toStrictEqual({
      kind: 'passed',
      orderId: 'O-1',
      action: 'retry',
      instanceId: 'fulfill-O-1',
    });
    // Strict: no `note` key at all when none was given.
    expect(h.orchestrations.events).toStrictEqual([
      { instanceId: 'fulfill-O-1', eventName: 'review', data: { action: 'retry', episode: EPISODE } },
    ]);
    const after = await record(h);
    expect(after?.review).toEqual({
      episode: EPISODE,
      decision: { action: 'retry', episode: EPISODE, at: NOW_ISO, delivered: true },
    });
    expect(after?.reviews).toEqual([{ at: NOW_ISO, by: 'admin-key', action: 'retry', note: null }]);
  });

  it('marks a decision of a record from before episodes delivered too', async () => {
    const h = await harness(attention);
    await reviewSaga(h.deps, 'O-1', { action: 'resolved', note: 'by hand' });
    expect(h.orchestrations.events.map((e) => e.data)).toStrictEqual([
      { action: 'resolved', note: 'by hand' },
    ]);
    expect((await record(h))?.review).toEqual({
      episode: null,
      decision: { action: 'resolved', note: 'by hand', at: NOW_ISO, delivered: true },
    });
  });

  it('keeps a decision whose event failed undelivered, and delivers it again on the same review', async () => {
    const h = await harness({ ...attention, review: { episode: EPISODE, decision: null } });
    h.orchestrations.failNext.raiseEvent = new Error('task hub unavailable');
    await expect(reviewSaga(h.deps, 'O-1', { action: 'resolved', note: 'x' })).rejects.toThrow(
      'task hub unavailable',
    );
    expect((await record(h))?.review?.decision).toEqual({
      action: 'resolved',
      note: 'x',
      episode: EPISODE,
      at: NOW_ISO,
      delivered: false,
    });

    await expect(
      reviewSaga({ ...h.deps, now: () => NOW + 60_000 }, 'O-1', { action: 'resolved', note: 'x' }),
    ).resolves.toStrictEqual({
      kind: 'passed',
      orderId: 'O-1',
      action: 'resolved',
      instanceId: 'fulfill-O-1',
    });
    expect(h.orchestrations.events).toStrictEqual([
      {
        instanceId: 'fulfill-O-1',
        eventName: 'review',
        data: { action: 'resolved', note: 'x', episode: EPISODE },
      },
    ]);
    const after = await record(h);
    // Delivered now; taken once, at the first call.
    expect(after?.review?.decision).toEqual({
      action: 'resolved',
      note: 'x',
      episode: EPISODE,
      at: NOW_ISO,
      delivered: true,
    });
    expect(after?.reviews).toHaveLength(1);
  });

  it('delivers an undelivered decision without a note or an episode again as it was taken', async () => {
    const h = await harness({
      ...attention,
      review: { episode: null, decision: { action: 'retry', at: EARLIER, delivered: false } },
    });
    await expect(reviewSaga(h.deps, 'O-1', { action: 'retry' })).resolves.toMatchObject({ kind: 'passed' });
    expect(h.orchestrations.events.map((e) => e.data)).toStrictEqual([{ action: 'retry' }]);
    expect((await record(h))?.review?.decision).toEqual({ action: 'retry', at: EARLIER, delivered: true });
  });

  it.each([
    ['delivered already', { action: 'retry' as const, delivered: true }, { action: 'retry' }],
    ['another action', { action: 'resolved' as const, delivered: false }, { action: 'retry' }],
    [
      'another note',
      { action: 'retry' as const, note: 'a', delivered: false },
      { action: 'retry', note: 'b' },
    ],
    ['a note where none was', { action: 'retry' as const, delivered: false }, { action: 'retry', note: 'b' }],
  ])(
    'refuses a second decision on the episode (%s), naming the first and when',
    async (_what, decided, body) => {
      const h = await harness({
        ...attention,
        review: { episode: EPISODE, decision: { ...decided, episode: EPISODE, at: EARLIER } },
      });
      await expect(reviewSaga(h.deps, 'O-1', body)).resolves.toStrictEqual({
        kind: 'not-now',
        reason: `a decision ("${decided.action}") was already taken on this episode of order O-1 at ${EARLIER}; wait for the saga to act on it`,
      });
      expect(h.orchestrations.events).toEqual([]);
    },
  );

  it('leaves a decision of a later episode undelivered when the saga moved on before it was marked', async () => {
    const h = await harness({ ...attention, review: { episode: EPISODE, decision: null } });
    const later = {
      episode: 'fulfill-O-1#2',
      decision: { action: 'resolved' as const, episode: 'fulfill-O-1#2', at: NOW_ISO, delivered: false },
    };
    // The saga acts on the review, needs attention again, and a second review is taken on that.
    h.orchestrations.afterEvent = () => patch(h, { review: later });
    await reviewSaga(h.deps, 'O-1', { action: 'retry' });
    expect((await record(h))?.review).toEqual(later);
  });

  it(`keeps the latest ${MAX_TRANSITIONS} reviews`, async () => {
    const old: ReviewRecord[] = Array.from({ length: MAX_TRANSITIONS }, (_, n) => ({
      at: EARLIER,
      by: null,
      action: 'retry',
      note: `r${n}`,
    }));
    const h = await harness({ ...attention, reviews: old });
    await reviewSaga(h.deps, 'O-1', { action: 'resolved', note: 'last' });
    const reviews = (await record(h))?.reviews ?? [];
    expect(reviews).toHaveLength(MAX_TRANSITIONS);
    expect(reviews[0].note).toBe('r1');
    expect(reviews.at(-1)).toEqual({ at: NOW_ISO, by: null, action: 'resolved', note: 'last' });
  });
});
