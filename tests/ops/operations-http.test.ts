/** The operations HTTP functions (src/functions/http/operations-http.ts), called as the Functions host would. */
import type { HttpResponseInit } from '@azure/functions';
import { TransientError } from '../../src/domain/errors';
import { operationsHttp } from '../../src/functions/http/operations-http';
import type { OperationsHttpDeps } from '../../src/functions/http/operations-http';
import type { Platform } from '../../src/functions/http/actor';
import { EASY_AUTH, KEYS_ONLY, signedIn } from '../support/principal';
import { added, entryMessageFor, messageIdOf } from '../support/e2e';
import { invokeHttp } from '../support/http';
import {
  moveClockPastDuplicateWindow,
  opsWorld,
  useOpsWorlds,
  parkedReasons,
  type OpsWorld,
} from '../support/ops';

const logged: unknown[][] = [];

useOpsWorlds();
afterEach(() => {
  logged.length = 0;
});

function call(
  deps: OperationsHttpDeps,
  name: string,
  params: Record<string, string>,
  body?: string,
  headers?: Record<string, string>,
  platform: Platform = KEYS_ONLY,
): Promise<HttpResponseInit> {
  return invokeHttp(
    operationsHttp(() => deps, platform),
    name,
    { params, body, logged, headers },
  );
}

const misrouted = added('O-A', 'T-A2', 2);
const id = messageIdOf(misrouted);

async function withMisroutedParked(): Promise<OpsWorld> {
  const w = opsWorld();
  await w.app.broker.send('order-transactions', [entryMessageFor(misrouted, 'O-B')]);
  await w.app.drain();
  return w;
}

describe('operations HTTP functions', () => {
  it('defines the routes: reads behind a function key, replays (they move messages) behind the admin key', () => {
    const definitions = operationsHttp(() => opsWorld().deps, KEYS_ONLY);
    expect(definitions.map((d) => [d.name, d.methods.join(), d.route])).toEqual([
      ['opsListParked', 'GET', 'ops/parked'],
      ['opsShowParked', 'GET', 'ops/parked/{messageId}'],
      ['opsShowParkedByQuery', 'GET', 'ops/parked-message'],
      ['opsReplayParked', 'POST', 'ops/parked/{messageId}/replay'],
      ['opsReplayParkedByQuery', 'POST', 'ops/parked-message/replay'],
      ['opsListDeadLettered', 'GET', 'ops/deadletter/{queue}'],
      ['opsShowDeadLettered', 'GET', 'ops/deadletter/{queue}/{messageId}'],
      ['opsShowDeadLetteredByQuery', 'GET', 'ops/deadletter-message/{queue}'],
      ['opsReplayDeadLettered', 'POST', 'ops/deadletter/{queue}/{messageId}/replay'],
      ['opsReplayDeadLetteredByQuery', 'POST', 'ops/deadletter-message/{queue}/replay'],
      ['opsSessions', 'GET', 'ops/sessions/{queue}'],
      ['opsBulkReplay', 'POST', 'ops/replay'],
      ['opsOrderReplay', 'POST', 'ops/orders/{orderId}/replay'],
      ['opsDiscard', 'POST', 'ops/discard'],
      ['opsArchive', 'GET', 'ops/archive'],
      ['opsAudit', 'GET', 'ops/audit'],
    ]);
    expect(definitions.map((d) => [d.name, d.authLevel])).toEqual([
      ['opsListParked', 'function'],
      ['opsShowParked', 'function'],
      ['opsShowParkedByQuery', 'function'],
      ['opsReplayParked', 'admin'],
      ['opsReplayParkedByQuery', 'admin'],
      ['opsListDeadLettered', 'function'],
      ['opsShowDeadLettered', 'function'],
      ['opsShowDeadLetteredByQuery', 'function'],
      ['opsReplayDeadLettered', 'admin'],
      ['opsReplayDeadLetteredByQuery', 'admin'],
      ['opsSessions', 'function'],
      ['opsBulkReplay', 'admin'],
      ['opsOrderReplay', 'admin'],
      ['opsDiscard', 'admin'],
      ['opsArchive', 'function'],
      ['opsAudit', 'function'],
    ]);
    // With App Service authentication on, the platform lets in only signed-in callers and the app
    // role decides: the host asks for no key.
    expect(new Set(operationsHttp(() => opsWorld().deps, EASY_AUTH).map((d) => d.authLevel))).toEqual(
      new Set(['anonymous']),
    );
  });

  it('lists parked messages without their bodies and shows one in full with what a replay would do', async () => {
    const world = await withMisroutedParked();
    const list = await call(world.deps, 'opsListParked', {});
    expect(list.status).toBe(200);
    expect(list.jsonBody).toMatchObject({
      truncated: false,
      messages: [
        {
          messageId: id,
          park: { reason: 'misrouted', fromQueue: 'order-transactions', fromSessionId: 'O-B' },
        },
      ],
    });
    expect(list.jsonBody.messages[0]).not.toHaveProperty('body');

    const show = await call(world.deps, 'opsShowParked', { messageId: id });
    expect(show).toMatchObject({
      status: 200,
      jsonBody: {
        messageId: id,
        body: misrouted,
        applicationProperties: { parkReason: 'misrouted', transactionId: 'T-A2' },
        replay: {
          queue: 'order-transactions',
          sessionId: 'O-B',
          prediction: { outcome: 'parked', reason: 'misrouted' },
        },
      },
    });
    await expect(call(world.deps, 'opsShowParked', { messageId: 'nope' })).resolves.toMatchObject({
      status: 404,
    });
  });

  it('answers a refused replay with 409 and the reason, a bad body with 400, and replays when forced', async () => {
    const world = await withMisroutedParked();
    const refused = await call(world.deps, 'opsReplayParked', { messageId: id });
    expect(refused).toMatchObject({
      status: 409,
      jsonBody: { refusal: 'would-park-again', error: expect.stringContaining('as misrouted again') },
    });
    for (const body of ['{"force": "yes"}', '{"forced": true}', '[true]', 'not json']) {
      await expect(call(world.deps, 'opsReplayParked', { messageId: id }, body)).resolves.toMatchObject({
        status: 400,
      });
    }
    await expect(call(world.deps, 'opsReplayParked', { messageId: 'nope' }, '')).resolves.toMatchObject({
      status: 404,
    });

    moveClockPastDuplicateWindow();
    const replayed = await call(
      world.deps,
      'opsReplayParked',
      { messageId: id },
      '{"force": true}',
      signedIn('oncall@contoso.com', ['Operations.Write']),
      EASY_AUTH,
    );
    expect(replayed).toMatchObject({
      status: 200,
      jsonBody: { replayed: true, forced: true, queue: 'order-transactions', sessionId: 'O-B' },
    });
    await world.app.drain();
    expect(Object.values(await parkedReasons(world.operations))).toEqual(['misrouted']);
    // Who did it: the platform's authenticated principal, else the admin key that let the call in;
    // a malformed request did nothing and is not audited.
    const audit = await world.deps.journal.audited(0, Date.now());
    // Records of one millisecond have no order among them: compared by status.
    expect(
      audit
        .map((record) => [record.action, record.by, record.status, record.messages[0].action])
        .sort((a, b) => Number(a[2]) - Number(b[2])),
    ).toEqual([
      ['replay-one', 'entra:oncall@contoso.com', 200, 'replayed'],
      ['replay-one', 'admin-key', 404, 'skipped'],
      ['replay-one', 'admin-key', 409, 'skipped'],
    ]);
  });

  it('checks the queue name of dead-letter and session routes', async () => {
    const world = opsWorld();
    const { deps } = world;
    await expect(call(deps, 'opsListDeadLettered', { queue: 'bogus' })).resolves.toMatchObject({
      status: 400,
      jsonBody: { error: expect.stringContaining('ledger, order-transactions, parked') },
    });
    await expect(call(deps, 'opsListDeadLettered', { queue: 'order-transactions' })).resolves.toEqual({
      status: 200,
      jsonBody: { messages: [], truncated: false },
    });
    await expect(
      call(deps, 'opsShowDeadLettered', { queue: 'ledger', messageId: 'B-1' }),
    ).resolves.toMatchObject({
      status: 404,
    });
    await expect(
      call(deps, 'opsReplayDeadLettered', { queue: 'ledger', messageId: 'B-1' }, '{"force": true}'),
    ).resolves.toMatchObject({ status: 404 });
    await expect(
      call(deps, 'opsReplayDeadLettered', { queue: 'nope', messageId: 'B-1' }, '{"force": true}'),
    ).resolves.toMatchObject({ status: 400 });
    await expect(call(deps, 'opsSessions', { queue: 'order-transactions' })).resolves.toMatchObject({
      status: 200,
      jsonBody: {
        queue: 'order-transactions',
        activeMessages: 0,
        deadLetteredMessages: 0,
        sessions: [],
        truncated: false,
      },
    });
    await expect(call(deps, 'opsSessions', { queue: 'nope' })).resolves.toMatchObject({ status: 400 });
  });

  it('answers 503 when the broker fails in a way that may clear', async () => {
    const world = opsWorld();
    const failing: OperationsHttpDeps = {
      ...world.deps,
      operations: {
        ...world.operations,
        listParked: async () => {
          throw new TransientError('bus-unavailable', 'peeking parked failed: timeout');
        },
      },
    };
    await expect(call(failing, 'opsListParked', {})).resolves.toEqual({
      status: 503,
      jsonBody: { error: 'peeking parked failed: timeout', code: 'bus-unavailable' },
    });
  });
});
