/**
 * docs/cli.md (--traces) and docs/architecture.md (tracing): one trace per order, whatever the
 * faults. `npm start -- --traces FILE` writes every span the app's own code made, through the
 * app's tracer provider setup; here that file is read back and held to the design: each order's
 * spans share the trace id derived from its order id and no other order's, every parent and link
 * is a span in the file, every delivery of an entry continues the span that sent it, every saga
 * step is in its order's trace, and a ledger batch links to the orders it carried.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../local/cli/start';
import {
  createEmbeddedApp,
  type EmbeddedApp,
  type EmbeddedAppOptions,
  type LedgerInput,
} from '../../local/app';
import type { FaultSpec } from '../../local/faults';
import type { Report } from '../../local/report';
import { startTraceFile, type SpanLine } from '../../local/trace-file';
import { TransientError } from '../../src/domain/errors';
import { STEPS } from '../../src/domain/saga';
import { orderTraceId } from '../../src/functions/order-trace';
import { readSagaRecord } from '../../src/services/fulfillment/saga-record';
import { captureCli } from '../support/cli';
import { created, added, FAST, ledger, SAMPLE_PATH } from '../support/e2e';
import { generateWorkload } from '../support/workload';

const CATALOG = join(__dirname, '..', '..', 'samples', 'catalog.json');
const EVERY_FAULT: FaultSpec = {
  duplicate: 0.2,
  crashAfterCommit: 0.2,
  transient: 0.2,
  reorder: 0.3,
  activityTransient: 0.2,
  activityResultLost: 0.2,
};

interface Run {
  spans: SpanLine[];
  report: Report;
}

const orderOf = (span: SpanLine): string | undefined => span.attributes['order.id'] as string | undefined;

function expectOneTracePerOrder({ spans, report }: Run): void {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  expect(byId.size).toBe(spans.length);

  // Every span of an order is in the order's own trace, and every span there is the order's: an
  // entry parked before it made an order (an invalid orderId) included.
  const orderIds = new Set([
    ...report.orders.map((order) => order.orderId),
    ...spans.flatMap((span) => orderOf(span) ?? []),
  ]);
  const orderOfTrace = new Map([...orderIds].map((orderId) => [orderTraceId(orderId), orderId]));
  expect(orderOfTrace.size).toBe(orderIds.size);
  const misplaced = spans.filter((span) => {
    const orderId = orderOf(span);
    return orderId === undefined ? orderOfTrace.has(span.traceId) : span.traceId !== orderTraceId(orderId);
  });
  expect(misplaced).toEqual([]);

  // Every parent and every link is a span of the file, the parent in the same trace.
  const unresolved = spans.filter(
    (span) =>
      (span.parentSpanId !== undefined && byId.get(span.parentSpanId)?.traceId !== span.traceId) ||
      span.links.some((link) => byId.get(link.spanId)?.traceId !== link.traceId),
  );
  expect(unresolved).toEqual([]);

  // Each delivery of an entry continues the span that sent it, redeliveries included.
  const deliveries = spans.filter((span) => span.name === 'process order-transactions');
  const orphans = deliveries.filter(
    (span) =>
      span.parentSpanId === undefined || byId.get(span.parentSpanId)?.name !== 'send order-transactions',
  );
  expect(orphans).toEqual([]);
  for (const { orderId } of report.orders) {
    expect({ orderId, delivered: deliveries.some((span) => orderOf(span) === orderId) }).toEqual({
      orderId,
      delivered: true,
    });
  }

  // A ledger batch has its own trace and links to the order spans that sent its entries.
  const batches = spans.filter((span) => span.name === 'process ledger');
  expect(batches.length).toBeGreaterThan(0);
  for (const batch of batches) {
    expect(orderOf(batch)).toBeUndefined();
    const linked = batch.links.map((link) => byId.get(link.spanId));
    expect(linked.every((span) => span !== undefined && orderOf(span) !== undefined)).toBe(true);
  }
  expect(
    spans
      .filter((span) => span.name === 'send order-transactions')
      .every((send) => send.links.some((link) => byId.get(link.spanId)?.name === 'process ledger')),
  ).toBe(true);

  // The saga: started in the order's trace, and every step of a completed saga there, under the start.
  for (const order of report.orders.filter((o) => o.saga !== null)) {
    const traceId = orderTraceId(order.orderId);
    const starts = spans.filter((span) => span.traceId === traceId && span.name === 'start fulfillOrder');
    expect({ orderId: order.orderId, started: starts.length > 0 }).toEqual({
      orderId: order.orderId,
      started: true,
    });
    const activities = spans.filter((span) => span.traceId === traceId && span.name.startsWith('activity '));
    expect(activities.length).toBeGreaterThan(0);
    expect(activities.every((span) => byId.get(span.parentSpanId ?? '')?.name === 'start fulfillOrder')).toBe(
      true,
    );
    if (order.saga?.status === 'completed') {
      const done = new Set(
        activities.filter((span) => span.status.code !== 'ERROR').map((span) => span.name),
      );
      expect(STEPS.filter((step) => !done.has(`activity ${step}`))).toEqual([]);
    }
  }
}

function readSpans(path: string): SpanLine[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SpanLine);
}

describe('npm start --traces', () => {
  const cli = captureCli('convoy-traces-');

  it('writes every span of the sample run, one a line: one trace per order, the batches linked to them', async () => {
    const traces = join(cli.dir, 'traces.ndjson');
    const reportPath = join(cli.dir, 'report.json');
    expect(
      await main([
        '--input',
        SAMPLE_PATH,
        '--catalog',
        CATALOG,
        '--traces',
        traces,
        '--report',
        reportPath,
        '--quiet',
      ]),
    ).toBe(0);
    const traced = {
      spans: readSpans(traces),
      report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report,
    };
    expectOneTracePerOrder(traced);
    // The verdicts are on the deliveries: O-18's early final entry buffered, O-19's park and rejection.
    const verdicts = (orderId: string) =>
      traced.spans
        .filter((span) => orderOf(span) === orderId && span.name === 'process order-transactions')
        .map((span) => span.attributes['order.entry.outcome']);
    expect(verdicts('O-18')).toContain('buffered');
    expect(verdicts('O-19')).toEqual(expect.arrayContaining(['parked', 'rejected']));
    expect(traced.spans.some((span) => orderOf(span) === 'O-19' && span.name === 'send parked')).toBe(true);
  });

  it('refuses --traces naming the file --report names', async () => {
    const path = join(cli.dir, 'same.json');
    expect(await main(['--report', path, '--traces', path, '--quiet'])).toBe(2);
    expect(cli.stderr.join('')).toBe(`--report and --traces both name ${path}; give two files\n`);
  });
});

/** Runs the inputs on an embedded app traced as `--traces` traces it; `act` runs once they are drained. */
async function tracedRun(
  inputs: readonly LedgerInput[],
  options: EmbeddedAppOptions,
  act: (app: EmbeddedApp) => Promise<void> = async () => undefined,
): Promise<Run & { app: EmbeddedApp }> {
  const dir = mkdtempSync(join(tmpdir(), 'convoy-traces-'));
  const tracing = startTraceFile(join(dir, 'traces.ndjson'));
  const app = createEmbeddedApp(options);
  try {
    await app.sendLedger(inputs);
    await app.drain();
    await act(app);
    const report = await app.report();
    await app.stop();
    await tracing.shutdown();
    return { spans: readSpans(join(dir, 'traces.ndjson')), report, app };
  } finally {
    await app.stop();
    await tracing.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every operation a saga record says ran to completion is an activity span of the order's trace. */
async function expectSagaStepsTraced({ spans, report, app }: Run & { app: EmbeddedApp }): Promise<void> {
  for (const order of report.orders.filter((o) => o.saga !== null)) {
    const record = await readSagaRecord(app.orders, order.orderId);
    const completed = Object.entries(record?.steps ?? {})
      .filter(([, step]) => step?.status === 'completed')
      .map(([name]) => `activity ${name}`);
    expect(completed.length).toBeGreaterThan(0);
    const traced = new Set(
      spans
        .filter((span) => span.traceId === orderTraceId(order.orderId) && span.status.code !== 'ERROR')
        .map((span) => span.name),
    );
    expect({ orderId: order.orderId, untraced: completed.filter((name) => !traced.has(name)) }).toEqual({
      orderId: order.orderId,
      untraced: [],
    });
  }
}

/** What the app writes to Application Insights inside a span lands in that span's trace: the order's. */
function expectEventsInOrderTraces(app: EmbeddedApp): void {
  const ofOrders = app.telemetry.events.filter((event) => typeof event.properties.orderId === 'string');
  expect(ofOrders.length).toBeGreaterThan(0);
  expect(
    ofOrders.filter((event) => event.traceId !== orderTraceId(event.properties.orderId as string)),
  ).toEqual([]);
}

/** Stock for every sku of the inputs, so that sagas complete as well as compensate. */
function stockFor(inputs: readonly LedgerInput[]): Record<string, number> {
  const skus = inputs.flatMap((message) =>
    ((message.body as { entries?: Array<{ data?: { sku?: unknown } }> }).entries ?? []).flatMap((entry) =>
      typeof entry.data?.sku === 'string' ? [entry.data.sku] : [],
    ),
  );
  return Object.fromEntries(skus.map((sku) => [sku, 1000]));
}

describe('one trace per order under faults', () => {
  it.each([3, 17])('every fault on, seed %i', async (seed) => {
    const workload = generateWorkload({ seed });
    const traced = await tracedRun(workload.inputs, {
      ...FAST,
      seed,
      faults: EVERY_FAULT,
      catalog: stockFor(workload.inputs),
    });
    expectOneTracePerOrder(traced);
    await expectSagaStepsTraced(traced);
    expectEventsInOrderTraces(traced.app);
    // The faults happened: redelivered entries and retried activities are more spans of the same traces.
    const deliveries = traced.spans.filter((span) => span.name === 'process order-transactions');
    const messages = new Set(deliveries.map((span) => span.attributes['messaging.message.id']));
    expect(deliveries.length).toBeGreaterThan(messages.size);
    const stepRuns = new Map<string, number>();
    for (const span of traced.spans.filter((s) => STEPS.some((step) => s.name === `activity ${step}`))) {
      const key = `${span.traceId} ${span.name}`;
      stepRuns.set(key, (stepRuns.get(key) ?? 0) + 1);
    }
    expect(Math.max(...stepRuns.values())).toBeGreaterThan(1);
  });

  it("a person's review is in the order's trace, and the compensations it retries", async () => {
    let refunds = 0;
    const traced = await tracedRun(
      [ledger('B-STUCK', [created('O-STUCK', 'T-1'), added('O-STUCK', 'T-2', 2, 100, 10, true)])],
      {
        ...FAST,
        // Only the primary carrier refuses so big an order; the alternate is told to refuse too below.
        catalog: { 'SKU-T-2': 1000 },
        retry: { firstIntervalMs: 5, backoffCoefficient: 1, maxIntervalMs: 5, maxAttempts: 2 },
        downstream: (builtIn) => ({
          ...builtIn,
          shipping: {
            ...builtIn.shipping,
            book: async () => {
              throw new TransientError('downstream-unavailable', 'no carrier');
            },
          },
          payments: {
            ...builtIn.payments,
            refund: async (orderId, amount) => {
              refunds += 1;
              if (refunds <= 2) throw new TransientError('downstream-unavailable', 'refunds down');
              return builtIn.payments.refund(orderId, amount);
            },
          },
        }),
      },
      async (app) => {
        expect((await readSagaRecord(app.orders, 'O-STUCK'))?.status).toBe('needs-attention');
        const response = await app.http({
          method: 'POST',
          path: 'orders/O-STUCK/review',
          body: JSON.stringify({ action: 'retry' }),
        });
        expect(response.status).toBe(202);
        await app.drain();
      },
    );
    expectOneTracePerOrder(traced);
    const inOrder = traced.spans.filter((span) => span.traceId === orderTraceId('O-STUCK'));
    const review = inOrder.find((span) => span.name === 'POST orders/{orderId}/review');
    expect(review?.attributes['http.response.status_code']).toBe(202);
    const refundsTraced = inOrder.filter((span) => span.name === 'activity refundPayment');
    expect(refundsTraced.map((span) => span.status.code)).toEqual(['ERROR', 'ERROR', 'UNSET']);
    expect(traced.report.orders[0].saga?.status).toBe('compensated');
  });
});
