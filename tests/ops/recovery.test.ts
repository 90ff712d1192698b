/**
 * Recovering in bulk on the embedded runtime, through the app's own HTTP functions
 * (src/functions/http/operations-http.ts): an order's held entries replayed in sequence order, a
 * bulk replay by reason, time and order, dry runs that move nothing, discard into the archive, two
 * of each racing, and the audit of every action.
 */
import type { HttpResponseInit } from '@azure/functions';
import { operationsHttp } from '../../src/functions/http/operations-http';
import { readOrderState } from '../../src/services/order-documents';
import { parkedMessage } from '../../src/services/convoy/parking';
import type { Entry } from '../../src/domain/entry';
import { added, created, entryMessageFor, messageIdOf } from '../support/e2e';
import { invokeHttp } from '../support/http';
import { opsWorld, useOpsWorlds, type OpsWorld } from '../support/ops';
import { EASY_AUTH, KEYS_ONLY, signedIn } from '../support/principal';
import type { Platform } from '../../src/functions/http/actor';

useOpsWorlds();

/**
 * The entries' messages, sent in this order with the host stopped, each dead-lettered on its one
 * delivery (maxDeliveryCount 1): the dead-letter queue then holds them in the order sent.
 */
async function deadLettered(entries: readonly Entry[]): Promise<OpsWorld> {
  const world = opsWorld({ maxDeliveryCount: 1 });
  const { broker, host } = world.app;
  await host.stop();
  for (const entry of entries) {
    await broker.send('order-transactions', [entryMessageFor(entry)]);
    const receiver = broker.acceptNextSession('order-transactions')!;
    receiver.abandon(receiver.receive()!);
    receiver.close();
  }
  expect(broker.deadLetters('order-transactions').map((m) => m.messageId)).toEqual(entries.map(messageIdOf));
  return world;
}

function post(
  world: OpsWorld,
  name: string,
  body: unknown,
  options: { params?: Record<string, string>; headers?: Record<string, string>; platform?: Platform } = {},
): Promise<HttpResponseInit> {
  return invokeHttp(
    operationsHttp(() => world.deps, options.platform ?? KEYS_ONLY),
    name,
    {
      params: options.params ?? {},
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: options.headers,
    },
  );
}

const sequencesIn = (world: OpsWorld): number[] =>
  world.app.broker.peek('order-transactions').map((m) => (m.body as Entry).sequence);

const order = [created('O-R', 'T-R1', 1), added('O-R', 'T-R2', 2), added('O-R', 'T-R3', 3, 1, 100, true)];

describe('replaying one order in sequence order', () => {
  it('lists in a dry run what would move and moves nothing', async () => {
    // Dead-lettered out of order: 3, then 1, then 2.
    const world = await deadLettered([order[2], order[0], order[1]]);
    const answer = await post(world, 'opsOrderReplay', { dryRun: true }, { params: { orderId: 'O-R' } });
    expect(answer.status).toBe(200);
    expect(answer.jsonBody).toMatchObject({
      dryRun: true,
      matched: 3,
      messages: [1, 2, 3].map((sequence) => ({
        orderId: 'O-R',
        sequence,
        heldIn: 'order-transactions',
        reason: 'MaxDeliveryCountExceeded',
        action: 'would-replay',
      })),
    });
    expect(world.app.broker.deadLetters('order-transactions')).toHaveLength(3);
    expect(sequencesIn(world)).toEqual([]);
  });

  it('sends the held entries into the order session by sequence, and the consumer applies them all', async () => {
    const world = await deadLettered([order[2], order[0], order[1], created('O-other', 'T-O1')]);
    const answer = await post(world, 'opsOrderReplay', undefined, { params: { orderId: 'O-R' } });
    expect(answer.status).toBe(200);
    expect(answer.jsonBody).toMatchObject({
      dryRun: false,
      matched: 3,
      messages: [1, 2, 3].map((sequence) => ({ sequence, action: 'replayed' })),
    });
    // Sent in sequence order, the other order's entry left where it is.
    expect(sequencesIn(world)).toEqual([1, 2, 3]);
    expect(world.app.broker.deadLetters('order-transactions').map((m) => m.messageId)).toEqual([
      messageIdOf(created('O-other', 'T-O1')),
    ]);
    world.app.host.start();
    await world.app.drain();
    await expect(readOrderState(world.app.orders, 'O-R')).resolves.toMatchObject({
      appliedSequence: 3,
      buffered: [],
    });
  });

  it('runs through the embedded host by its route, the order id percent-encoded', async () => {
    const world = await deadLettered([created('O 1', 'T-S1')]);
    const response = await world.app.http({
      method: 'POST',
      path: `ops/orders/${encodeURIComponent('O 1')}/replay`,
      body: '{"dryRun": true}',
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({
      matched: 1,
      messages: [{ orderId: 'O 1', action: 'would-replay' }],
    });
  });

  it('refuses a body it does not know, naming the field', async () => {
    const world = opsWorld();
    await expect(
      post(world, 'opsOrderReplay', { dryrun: true }, { params: { orderId: 'O-R' } }),
    ).resolves.toEqual({
      status: 400,
      jsonBody: { error: 'unknown field dryrun; the fields are dryRun' },
    });
  });
});

describe('bulk replay', () => {
  it('asks for a selection, and names the fields it takes', async () => {
    const world = opsWorld();
    await expect(post(world, 'opsBulkReplay', { source: 'deadletter' })).resolves.toEqual({
      status: 400,
      jsonBody: {
        error: 'give at least one of reason, from, to, orderId: a bulk replay never takes everything unasked',
      },
    });
    for (const [body, field] of [
      [{ source: 'dead', reason: 'x' }, 'source'],
      [{ source: 'parked', queue: 'ledger', reason: 'x' }, 'queue'],
      [{ source: 'deadletter', queue: 'parked', reason: 'x' }, 'queue'],
      [{ source: 'parked', from: 'yesterday' }, 'from'],
      [{ source: 'parked', reason: '' }, 'reason'],
      [{ source: 'parked', reason: 'x', dryRun: 'yes' }, 'dryRun'],
      [{ source: 'parked', reason: 'x', everything: true }, 'everything'],
    ] as const) {
      const answer = await post(world, 'opsBulkReplay', body);
      expect(answer.status).toBe(400);
      expect((answer.jsonBody as { error: string }).error).toContain(field);
    }
  });

  it('selects by reason, time range and order; a dry run moves nothing', async () => {
    const world = await deadLettered([created('O-A', 'T-A1'), created('O-B', 'T-B1')]);
    const letters = world.app.broker.deadLetters('order-transactions');
    const from = new Date(letters[0].enqueuedTimeUtc).toISOString();

    const byOrder = await post(world, 'opsBulkReplay', {
      source: 'deadletter',
      orderId: 'O-B',
      dryRun: true,
    });
    expect(byOrder.jsonBody).toMatchObject({
      matched: 1,
      messages: [{ orderId: 'O-B', action: 'would-replay' }],
    });
    const none = await post(world, 'opsBulkReplay', {
      source: 'deadletter',
      reason: 'SomethingElse',
      dryRun: true,
    });
    expect(none.jsonBody).toMatchObject({ matched: 0, messages: [] });
    const beforeAll = await post(world, 'opsBulkReplay', {
      source: 'deadletter',
      to: new Date(letters[0].enqueuedTimeUtc - 1).toISOString(),
      dryRun: true,
    });
    expect(beforeAll.jsonBody).toMatchObject({ matched: 0 });
    expect(world.app.broker.deadLetters('order-transactions')).toHaveLength(2);

    const replayed = await post(world, 'opsBulkReplay', {
      source: 'deadletter',
      queue: 'order-transactions',
      reason: 'MaxDeliveryCountExceeded',
      from,
    });
    expect(replayed.jsonBody).toMatchObject({
      dryRun: false,
      matched: 2,
      messages: [
        { orderId: 'O-A', action: 'replayed' },
        { orderId: 'O-B', action: 'replayed' },
      ],
    });
    expect(world.app.broker.deadLetters('order-transactions')).toHaveLength(0);
    world.app.host.start();
    await world.app.drain();
    for (const orderId of ['O-A', 'O-B']) {
      await expect(readOrderState(world.app.orders, orderId)).resolves.toMatchObject({ appliedSequence: 1 });
    }
  });

  it('two bulk replays at once move each message once: the one that takes a copy sends it', async () => {
    const world = await deadLettered(order);
    const body = { source: 'deadletter', orderId: 'O-R' };
    const answers = await Promise.all([
      post(world, 'opsBulkReplay', body),
      post(world, 'opsBulkReplay', body),
    ]);
    const actions = answers.flatMap(
      (answer) => (answer.jsonBody as { messages: Array<{ messageId: string; action: string }> }).messages,
    );
    const replayed = actions.filter((m) => m.action === 'replayed').map((m) => m.messageId);
    expect([...replayed].sort()).toEqual(order.map(messageIdOf).sort());
    expect(actions.filter((m) => m.action !== 'replayed').every((m) => m.action === 'skipped')).toBe(true);
    expect(sequencesIn(world).sort()).toEqual([1, 2, 3]);
    world.app.host.start();
    await world.app.drain();
    await expect(readOrderState(world.app.orders, 'O-R')).resolves.toMatchObject({ appliedSequence: 3 });
  });
});

describe('discard', () => {
  it('needs a why, and archives each message whole (who, why, when) before removing it', async () => {
    const world = await deadLettered([created('O-D', 'T-D1'), created('O-K', 'T-K1')]);
    await expect(
      post(world, 'opsDiscard', { source: 'deadletter', messageIds: [messageIdOf(created('O-D', 'T-D1'))] }),
    ).resolves.toEqual({
      status: 400,
      jsonBody: { error: 'why is required: a non-empty string saying why these messages are discarded' },
    });
    const dry = await post(world, 'opsDiscard', {
      source: 'deadletter',
      orderId: 'O-D',
      why: 'test order',
      dryRun: true,
    });
    expect(dry.jsonBody).toMatchObject({
      dryRun: true,
      matched: 1,
      messages: [{ orderId: 'O-D', action: 'would-discard' }],
    });
    expect(world.app.broker.deadLetters('order-transactions')).toHaveLength(2);

    const discarded = await post(world, 'opsDiscard', {
      source: 'deadletter',
      orderId: 'O-D',
      why: 'test order',
    });
    expect(discarded.jsonBody).toMatchObject({
      matched: 1,
      messages: [{ orderId: 'O-D', action: 'discarded' }],
    });
    expect(world.app.broker.deadLetters('order-transactions').map((m) => (m.body as Entry).orderId)).toEqual([
      'O-K',
    ]);

    const archive = await invokeHttp(
      operationsHttp(() => world.deps, KEYS_ONLY),
      'opsArchive',
      {
        params: {},
        query: { orderId: 'O-D' },
      },
    );
    expect(archive).toMatchObject({
      status: 200,
      jsonBody: {
        archived: [
          {
            orderId: 'O-D',
            messageId: messageIdOf(created('O-D', 'T-D1')),
            heldIn: 'order-transactions',
            by: 'admin-key',
            why: 'test order',
            archivedAt: expect.any(String),
            message: { body: created('O-D', 'T-D1'), deadLetterReason: 'MaxDeliveryCountExceeded' },
          },
        ],
      },
    });
  });

  it('two discards at once archive and remove each message once', async () => {
    const world = await deadLettered(order);
    const body = { source: 'deadletter', orderId: 'O-R', why: 'duplicate order' };
    const answers = await Promise.all([post(world, 'opsDiscard', body), post(world, 'opsDiscard', body)]);
    const discarded = answers
      .flatMap(
        (answer) => (answer.jsonBody as { messages: Array<{ messageId: string; action: string }> }).messages,
      )
      .filter((m) => m.action === 'discarded');
    expect(discarded).toHaveLength(3);
    expect(world.app.broker.deadLetters('order-transactions')).toHaveLength(0);
    await expect(world.deps.journal.archived('O-R')).resolves.toHaveLength(3);
  });
});

describe('a replay and a discard at once', () => {
  it('move each message one way only: replayed or archived and removed, never both', async () => {
    const world = await deadLettered(order);
    const [replayed, discarded] = await Promise.all([
      post(world, 'opsBulkReplay', { source: 'deadletter', orderId: 'O-R' }),
      post(world, 'opsDiscard', { source: 'deadletter', orderId: 'O-R', why: 'race' }),
    ]);
    const actions = (answer: HttpResponseInit, action: string): string[] =>
      (answer.jsonBody as { messages: Array<{ messageId: string; action: string }> }).messages
        .filter((m) => m.action === action)
        .map((m) => m.messageId);
    const sent = actions(replayed, 'replayed');
    const archived = actions(discarded, 'discarded');
    expect([...sent, ...archived].sort()).toEqual(order.map(messageIdOf).sort());
    expect(sent.filter((id) => archived.includes(id))).toEqual([]);
    expect(world.app.broker.deadLetters('order-transactions')).toHaveLength(0);
    expect(world.app.broker.peek('order-transactions')).toHaveLength(sent.length);
    await expect(world.deps.journal.archived('O-R')).resolves.toHaveLength(archived.length);
  });
});

describe('parked messages', () => {
  /** Entries parked from order-transactions, `rejected`, as the consumer parks them. */
  async function parked(entries: readonly Entry[]): Promise<OpsWorld> {
    const world = opsWorld();
    await parkIn(world, entries);
    return world;
  }

  async function parkIn(world: OpsWorld, entries: readonly Entry[]): Promise<void> {
    await world.app.broker.send(
      'parked',
      entries.map((entry) =>
        parkedMessage({
          fromQueue: 'order-transactions',
          messageId: messageIdOf(entry),
          sessionId: entry.orderId,
          body: entry,
          transactionId: entry.transactionId,
          applicationProperties: { transactionId: entry.transactionId, sequence: entry.sequence },
          reason: 'rejected',
          description: 'for a test',
        }),
      ),
    );
  }

  it('discards by reason into the archive, the parked copy kept whole with where it was held', async () => {
    const entry = added('O-P', 'T-P2', 2);
    const world = await parked([entry]);
    const answer = await post(world, 'opsDiscard', {
      source: 'parked',
      reason: 'rejected',
      why: 'order withdrawn',
    });
    expect(answer.jsonBody).toMatchObject({
      matched: 1,
      messages: [
        { messageId: messageIdOf(entry), heldIn: 'parked', orderId: 'O-P', sequence: 2, action: 'discarded' },
      ],
    });
    expect(world.app.broker.peek('parked')).toHaveLength(0);
    await expect(world.deps.journal.archived('O-P')).resolves.toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/^parked:\d+$/),
        heldIn: 'parked',
        why: 'order withdrawn',
        message: expect.objectContaining({
          body: entry,
          park: expect.objectContaining({ reason: 'rejected' }),
        }),
      }),
    ]);
  });

  it('replays an order whose first entry was dead-lettered and whose second was parked, in sequence order', async () => {
    const world = await deadLettered([created('O-M', 'T-M1')]);
    await parkIn(world, [added('O-M', 'T-M2', 2)]);
    const answer = await post(world, 'opsOrderReplay', {}, { params: { orderId: 'O-M' } });
    expect(answer.jsonBody).toMatchObject({
      matched: 2,
      messages: [
        { sequence: 1, heldIn: 'order-transactions', action: 'replayed' },
        { sequence: 2, heldIn: 'parked', action: 'replayed' },
      ],
    });
    expect(sequencesIn(world)).toEqual([1, 2]);
    world.app.host.start();
    await world.app.drain();
    await expect(readOrderState(world.app.orders, 'O-M')).resolves.toMatchObject({
      appliedSequence: 2,
      buffered: [],
    });
  });
});

describe('the audit and who may act', () => {
  it('audits every action with who the platform vouched for, what, which messages and the outcome', async () => {
    const world = await deadLettered([created('O-U', 'T-U1')]);
    const writer = signedIn('oncall@contoso.com', ['Operations.Write', 'Operations.Read']);
    await post(
      world,
      'opsBulkReplay',
      { source: 'deadletter', orderId: 'O-U', dryRun: true },
      { headers: writer, platform: EASY_AUTH },
    );
    await post(
      world,
      'opsOrderReplay',
      {},
      { params: { orderId: 'O-U' }, headers: writer, platform: EASY_AUTH },
    );
    const audit = await invokeHttp(
      operationsHttp(() => world.deps, EASY_AUTH),
      'opsAudit',
      {
        params: {},
        headers: writer,
      },
    );
    expect(audit.status).toBe(200);
    // Records of one millisecond have no order among them.
    const records = (audit.jsonBody as { audit: unknown[] }).audit;
    expect(records).toHaveLength(2);
    expect(records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: 'replay',
          by: 'entra:oncall@contoso.com',
          request: { source: 'deadletter', orderId: 'O-U', dryRun: true },
          outcome: 'dry-run',
          messages: [expect.objectContaining({ orderId: 'O-U', action: 'would-replay' })],
        }),
        expect.objectContaining({
          action: 'ordered-replay',
          by: 'entra:oncall@contoso.com',
          outcome: 'done',
          messages: [
            expect.objectContaining({ messageId: messageIdOf(created('O-U', 'T-U1')), action: 'replayed' }),
          ],
        }),
      ]),
    );
  });

  it('lets a signed-in caller act only in the app roles they hold', async () => {
    const world = await deadLettered([created('O-V', 'T-V1')]);
    const reader = signedIn('reader@contoso.com', ['Operations.Read']);
    const body = { source: 'deadletter', orderId: 'O-V' };
    await expect(
      post(world, 'opsBulkReplay', body, { headers: reader, platform: EASY_AUTH }),
    ).resolves.toMatchObject({
      status: 403,
      jsonBody: { error: expect.stringContaining('Operations.Write') },
    });
    await expect(
      post(world, 'opsDiscard', { ...body, why: 'x' }, { headers: reader, platform: EASY_AUTH }),
    ).resolves.toMatchObject({ status: 403 });
    const reads = operationsHttp(() => world.deps, EASY_AUTH);
    await expect(
      invokeHttp(reads, 'opsListDeadLettered', { params: { queue: 'order-transactions' }, headers: reader }),
    ).resolves.toMatchObject({ status: 200 });
    await expect(
      invokeHttp(reads, 'opsListParked', { params: {}, headers: signedIn('someone@contoso.com', []) }),
    ).resolves.toMatchObject({
      status: 403,
      jsonBody: { error: expect.stringContaining('Operations.Read') },
    });
    // A name alone, with no client principal, is not the platform's word.
    await expect(
      invokeHttp(reads, 'opsListParked', {
        params: {},
        headers: { 'x-ms-client-principal-name': 'mallory' },
      }),
    ).resolves.toMatchObject({ status: 401 });
    expect(world.app.broker.deadLetters('order-transactions')).toHaveLength(1);
    await expect(world.deps.journal.audited(0, Date.now())).resolves.toEqual([]);
  });

  it('with authentication off, believes no X-MS-CLIENT-PRINCIPAL header: the admin key is who acted', async () => {
    const world = await deadLettered([created('O-W', 'T-W1')]);
    await post(
      world,
      'opsBulkReplay',
      { source: 'deadletter', orderId: 'O-W', dryRun: true },
      { headers: signedIn('mallory@contoso.com', ['Operations.Write']) },
    );
    await expect(world.deps.journal.audited(0, Date.now())).resolves.toEqual([
      expect.objectContaining({
        by: 'admin-key',
        vouchedBy: expect.stringContaining('no identity provider is configured'),
      }),
    ]);
  });
});
