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
import { consoleScenario, GAP_ORDER, PLAIN_ORDER, STUCK_ORDER } from '../support/console-scenario';

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
    expect(parked?.active).toBe(1);
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
        count: 1,
        // A park the ledger makes is named by what it parks (docs/messages.md).
        messageIds: [expect.stringMatching(/^invalid:/)],
        orderIds: [GAP_ORDER],
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
