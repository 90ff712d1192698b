/**
 * The console's reads (src/functions/http/console-http.ts) on the embedded host, over a run with a
 * gap, a dead letter, a park and a saga waiting for a person (tests/support/console-scenario.ts):
 * `GET /api/ops/overview`, `GET /api/ops/orders/{orderId}` and the page itself.
 */
import { createHash } from 'node:crypto';
import type { EmbeddedApp } from '../../local/app';
import type { EmbeddedHttpResponse } from '../../local/host/http-function';
import { orderTraceId } from '../../src/functions/order-trace';
import type { Overview } from '../../src/services/operations/overview';
import type { OrderInspection } from '../../src/services/operations/order-view';
import {
  consoleScenario,
  GAP_ORDER,
  HOSTILE_ORDER,
  PLAIN_ORDER,
  SLASHED_ORDER,
  STUCK_ORDER,
} from '../support/console-scenario';
import { createEmbeddedOperations } from '../../local/store/message-operations';
import { consoleHttp } from '../../src/functions/http/console-http';
import type { Platform } from '../../src/functions/http/actor';
import { overview } from '../../src/services/operations/overview';
import type {
  MessageOperations,
  ParkedMessage,
  QueueBacklog,
} from '../../src/services/operations/message-operations-port';
import { invokeHttp } from '../support/http';
import { EASY_AUTH, KEYS_ONLY, signedIn } from '../support/principal';

let app: EmbeddedApp;
beforeAll(async () => {
  ({ app } = await consoleScenario());
}, 60_000);
afterAll(() => app.stop());

const get = (path: string): Promise<EmbeddedHttpResponse> => app.http({ method: 'GET', path });
const json = <T>(response: EmbeddedHttpResponse): T => JSON.parse(response.body) as T;

describe('GET /api/ops/overview', () => {
  let overview: Overview;
  beforeAll(async () => {
    const response = await get('ops/overview');
    expect(response.status).toBe(200);
    overview = json<Overview>(response);
  });

  it('lists every queue with its counts, and the oldest age only where a message is active', () => {
    expect(overview.queues.map((queue) => queue.queue)).toEqual(['ledger', 'order-transactions', 'parked']);
    const transactions = overview.queues.find((queue) => queue.queue === 'order-transactions');
    expect(transactions).toMatchObject({ active: 0, deadLettered: 1, oldestAgeSeconds: null, sessions: [] });
    const parked = overview.queues.find((queue) => queue.queue === 'parked');
    expect(parked?.active).toBe(3);
    expect(parked?.oldestAgeSeconds).toEqual(expect.any(Number));
  });

  it('shows the order waiting on its gap, since its missing entry was held, and where it is held', () => {
    expect(overview.gaps).toEqual([
      {
        orderId: GAP_ORDER,
        appliedSequence: 1,
        waitingFor: 2,
        buffered: 2,
        bufferedSequences: [3, 4],
        since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        heldAs: 'deadletter',
      },
    ]);
  });

  it('groups parked and dead-lettered messages by reason, with their orders', () => {
    expect(overview.parked).toEqual([
      expect.objectContaining({
        reason: 'invalid',
        count: 3,
        // A park the ledger makes is named by what it parks (docs/messages.md).
        messageIds: Array.from({ length: 3 }, () => expect.stringMatching(/^invalid:/)),
        orderIds: [GAP_ORDER, HOSTILE_ORDER, SLASHED_ORDER],
      }),
    ]);
    expect(overview.deadLettered).toEqual([
      expect.objectContaining({
        queue: 'order-transactions',
        reason: 'MaxDeliveryCountExceeded',
        count: 1,
        orderIds: [GAP_ORDER],
      }),
    ]);
  });

  it('lists the saga waiting for a person, with its instance, reason and since when', () => {
    expect(overview.sagasNeedingAttention).toEqual([
      expect.objectContaining({
        orderId: STUCK_ORDER,
        reason: expect.stringContaining('refundPayment'),
        since: expect.stringMatching(/^\d{4}-/),
      }),
    ]);
    expect(overview.truncated).toEqual([]);
  });
});

describe('GET /api/ops/orders/{orderId}', () => {
  it("shows an order's state, records, held messages in sequence order, and trace id", async () => {
    const response = await get(`ops/orders/${encodeURIComponent(GAP_ORDER)}`);
    expect(response.status).toBe(200);
    const view = json<OrderInspection>(response);
    expect(view).toMatchObject({
      orderId: GAP_ORDER,
      order: { status: 'open', appliedSequence: 1, waitingFor: 2 },
      saga: null,
      traceId: orderTraceId(GAP_ORDER),
    });
    expect(view.order?.buffered.map((entry) => entry.sequence)).toEqual([3, 4]);
    expect(view.records.map((record) => [record.sequence, record.outcome])).toEqual([
      [1, 'applied'],
      [3, 'buffered'],
      [4, 'buffered'],
    ]);
    expect(view.deadLettered.map((message) => message.entrySequence)).toEqual([2]);
    expect(view.parked.map((message) => [message.messageId, message.entrySequence])).toEqual([
      [expect.stringMatching(/^invalid:/), 5],
    ]);
  });

  it("shows a saga's timeline, oldest first", async () => {
    const view = json<OrderInspection>(await get(`ops/orders/${STUCK_ORDER}`));
    expect(view.saga?.status).toBe('needs-attention');
    const statuses = view.saga?.timeline
      .filter((event) => event.kind === 'status')
      .map((event) => event.what);
    expect(statuses).toEqual(['running', 'compensating', 'needs-attention']);
    const times = view.saga?.timeline.map((event) => event.at) ?? [];
    expect(times).toEqual([...times].sort());
    expect(view.saga?.timeline.filter((event) => event.what.startsWith('refundPayment'))).toEqual([
      expect.objectContaining({ kind: 'step', what: 'refundPayment started' }),
      expect.objectContaining({ kind: 'step', detail: expect.stringContaining('refund unavailable') }),
    ]);
  });

  it('answers 404 for an order nothing knows, 400 naming the rule for an id no order can have', async () => {
    expect((await get('ops/orders/O-NONE')).status).toBe(404);
    const bad = await get(`ops/orders/${encodeURIComponent('O#1')}`);
    expect(bad.status).toBe(400);
    expect(json<{ error: string }>(bad).error).toMatch(/orderId/);
    expect((await get(`ops/orders/${PLAIN_ORDER}`)).status).toBe(200);
  });
});

describe('GET /api/ops/console', () => {
  it('is one page that runs only its own inline script and sends no referrer', async () => {
    const response = await get('ops/console');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    const script = /<script>([\s\S]*)<\/script>/.exec(response.body)?.[1] ?? '';
    const hash = createHash('sha256').update(script).digest('base64');
    expect(response.headers['content-security-policy']).toContain(`script-src 'sha256-${hash}'`);
    expect(response.headers['content-security-policy']).toContain("connect-src 'self'");
    // No external asset, and no markup built from data.
    expect(response.body).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//);
    expect(response.body).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });
});

describe('who may read', () => {
  const definitions = (platform: Platform) =>
    consoleHttp(
      () => ({ operations: createEmbeddedOperations(app.broker), orders: app.orders, now: Date.now }),
      platform,
    );

  it('takes the function key where no identity provider is configured, no key where the platform signs in', () => {
    expect(definitions(KEYS_ONLY).map((d) => `${d.name} ${d.authLevel}`)).toEqual([
      'opsConsole function',
      'opsOverview function',
      'opsInspectOrder function',
    ]);
    expect(new Set(definitions(EASY_AUTH).map((d) => d.authLevel))).toEqual(new Set(['anonymous']));
  });

  it.each(['opsConsole', 'opsOverview', 'opsInspectOrder'])(
    '%s behind App Service authentication: 401 with no principal, 403 without Operations.Read, else 200',
    async (name) => {
      const call = (headers?: Record<string, string>) =>
        invokeHttp(definitions(EASY_AUTH), name, { params: { orderId: GAP_ORDER }, headers });
      expect((await call()).status).toBe(401);
      // A name alone is whatever the caller wrote.
      expect((await call({ 'x-ms-client-principal-name': 'mallory' })).status).toBe(401);
      expect((await call(signedIn('writer', ['Operations.Write']))).status).toBe(403);
      expect((await call(signedIn('reader', ['Operations.Read']))).status).toBe(200);
    },
  );
});

describe('the overview’s bounds, on a broker that holds many', () => {
  const at = Date.UTC(2026, 0, 1);
  const parked = (index: number, reason: string): ParkedMessage => ({
    kind: 'parked',
    messageId: `m-${String(index).padStart(3, '0')}`,
    sessionId: null,
    body: { orderId: `O-${index % 3}`, sequence: index },
    correlationId: null,
    subject: reason,
    applicationProperties: {},
    sequenceNumber: String(index + 1),
    enqueuedTimeUtc: at + index * 1000,
    deliveryCount: 0,
    park: {
      reason,
      description: '',
      fromQueue: 'order-transactions',
      fromSessionId: `O-${index % 3}`,
      transactionId: null,
    },
  });
  const many: MessageOperations = {
    listParked: async () => ({
      messages: [...Array.from({ length: 30 }, (_, i) => parked(29 - i, 'rejected')), parked(100, 'invalid')],
      truncated: true,
    }),
    listDeadLettered: async () => ({ messages: [], truncated: false }),
    backlog: async (queue): Promise<QueueBacklog> => ({
      queue,
      activeMessages: queue === 'order-transactions' ? 60 : 0,
      deadLetteredMessages: 0,
      oldestEnqueuedTimeUtc: queue === 'order-transactions' ? at : null,
      sessions:
        queue === 'order-transactions'
          ? Array.from({ length: 60 }, (_, i) => ({
              sessionId: `S-${i}`,
              pending: 1,
              oldestEnqueuedTimeUtc: at + i * 1000,
            }))
          : [],
      truncated: queue === 'order-transactions',
    }),
    findParked: async () => undefined,
    findDeadLettered: async () => undefined,
    replayParked: async () => ({ delivered: false }),
    replayDeadLettered: async () => ({ delivered: false }),
    discardParked: async () => ({ discarded: false }),
    discardDeadLettered: async () => ({ discarded: false }),
    queueInfo: async () => ({ requiresSession: false, duplicateDetectionWindowMs: null }),
  };

  it('lists 20 message ids a reason, oldest first, 50 sessions a queue, ages from the given clock, and what stopped at a bound', async () => {
    const view = await overview({ operations: many, orders: app.orders, now: () => at + 90_000 });
    const rejected = view.parked.find((group) => group.reason === 'rejected');
    expect(rejected).toMatchObject({
      count: 30,
      oldest: new Date(at).toISOString(),
      newest: new Date(at + 29_000).toISOString(),
      orderIds: ['O-0', 'O-1', 'O-2'],
    });
    expect(rejected?.messageIds).toEqual(
      Array.from({ length: 20 }, (_, i) => `m-${String(i).padStart(3, '0')}`),
    );
    expect(view.parked.map((group) => group.reason)).toEqual(['rejected', 'invalid']);
    const transactions = view.queues.find((queue) => queue.queue === 'order-transactions');
    expect(transactions).toMatchObject({ oldestAgeSeconds: 90, sessionCount: 60, truncated: true });
    expect(transactions?.sessions).toHaveLength(50);
    expect(transactions?.sessions[1]).toEqual({ sessionId: 'S-1', pending: 1, oldestAgeSeconds: 89 });
    expect(view.truncated).toEqual(['parked', 'order-transactions sessions']);
    // The gap's missing entry is held nowhere this broker knows: since when is not recorded.
    expect(view.gaps).toEqual([expect.objectContaining({ orderId: GAP_ORDER, since: null, heldAs: null })]);
  });
});
