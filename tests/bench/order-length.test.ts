/**
 * The order-length table: the store meter's counts and charges on known operations, the targets on
 * recorded numbers (PASS and FAIL, deterministically; no timing is asserted), and one tiny run.
 */
import { createEmbeddedStore } from '../../local/store/document-store';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../../src/services/order-documents';
import {
  formatOrderLengthTable,
  orderLengthRowOf,
  orderLengthTargets,
  runOrderLengthTable,
  type OrderLengthRow,
} from '../../bench/order-length';
import { meteredContainer, type MeterTotals } from '../../bench/store-meter';
import { createCharge, readCharge, replaceCharge } from '../../bench/request-units';
import { BENCH_DEFAULTS, formatBench, parseBenchArgs, runBench } from '../../bench/bench';

const metered = () =>
  meteredContainer(createEmbeddedStore().container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH), ['kind']);

const size = (document: object): number => Buffer.byteLength(JSON.stringify(document), 'utf8');

describe('the store meter', () => {
  it('counts operations by kind, batch items included, and the bytes written and read', async () => {
    const { container, meter } = metered();
    const order = { id: 'O-1', orderId: 'O-1', kind: 'order', lines: [] as number[] };
    const marker = { id: 'm-1', orderId: 'O-1', kind: 'inbox', ttl: 60 };
    const batch = await container.batch('O-1', [
      { op: 'create', document: marker },
      { op: 'create', document: order },
    ]);
    expect(batch.ok).toBe(true);
    const grown = { ...order, lines: [1, 2, 3] };
    const stored = await container.read('O-1', 'O-1');
    await container.replace(grown, { ifMatch: stored?.etag });
    await container.create(marker); // 409: refused, nothing written
    const totals = meter.totals();
    expect(totals.requests).toBe(4);
    expect(totals.operations).toEqual({ create: 3, replace: 1, upsert: 0, delete: 0, read: 1, query: 0 });
    expect(totals.bytesWritten).toBe(size(marker) + size(order) + size(grown));
    // A read returns the item with the system properties the store adds (_etag, _ts).
    expect(totals.bytesRead).toBe(size(stored?.document ?? {}));
    expect(totals.bytesRead).toBeGreaterThan(size(order));
    // Four indexed terms per item: id, _ts, /orderId/?, /kind/?; a replace changes _ts only.
    const expected =
      createCharge(size(marker), 4) +
      createCharge(size(order), 4) +
      readCharge(size(stored?.document ?? {})) +
      replaceCharge(size(order), size(grown), 1, 1) +
      1;
    expect(totals.requestUnits).toBeCloseTo(expected, 9);
    // The marker expires once, in the background.
    expect(totals.ttlRequestUnits).toBeGreaterThan(0);
    expect(totals.overheadMs).toBeGreaterThanOrEqual(0);
  });

  it('charges a replace that changes an indexed field for its terms', async () => {
    const { container, meter } = metered();
    await container.create({ id: 'x', orderId: 'O-2', kind: 'a' });
    const before = meter.totals().requestUnits;
    await container.upsert({ id: 'x', orderId: 'O-2', kind: 'b' });
    const doc = size({ id: 'x', orderId: 'O-2', kind: 'b' });
    expect(meter.totals().requestUnits - before).toBeCloseTo(replaceCharge(doc, doc, 2, 2), 9);
  });
});

const row = (entriesPerOrder: number, cpu: number, written: number, ru: number): OrderLengthRow => {
  const totals: MeterTotals = {
    requests: 10_000,
    operations: { create: 10_000, replace: 10_000, upsert: 0, delete: 0, read: 0, query: 0 },
    bytesWritten: written * 10_000,
    bytesRead: 0,
    requestUnits: ru * 10_000,
    ttlRequestUnits: 5 * 10_000,
    overheadMs: 0,
  };
  return orderLengthRowOf(entriesPerOrder, 10_000 / entriesPerOrder, 10_000, cpu * 10_000, totals, {
    ordersWrong: 0,
    doubleEffects: 0,
    orderingViolations: 0,
  });
};

describe('the order-length targets', () => {
  it('fail on numbers that grow with the order, as on the order document that holds every transaction', () => {
    // Recorded on main before the redesign: bytes written per entry grow by about 200 B per entry.
    const grown = [
      row(10, 34, 2_400, 10.5),
      row(50, 40, 10_000, 12),
      row(200, 89, 40_000, 22),
      row(1000, 453, 200_000, 83),
    ];
    const targets = orderLengthTargets(grown);
    const byName = (part: string) => targets.find((target) => target.target.includes(part));
    expect(byName('CPU per entry')?.pass).toBe(false);
    expect(byName('bytes written per entry')?.pass).toBe(false);
    expect(byName('estimated RU per entry')?.pass).toBe(false);
    expect(byName('store calls per entry')?.pass).toBe(true);
    expect(byName('bytes written per entry')?.detail).toBe(
      '10: 2400, 50: 10000, 200: 40000, 1000: 200000 (83.33x)',
    );
  });

  it('pass on numbers flat within 1.5x, and fail just past it', () => {
    const flat = [row(10, 40, 900, 12), row(1000, 59, 1_300, 17.9)];
    expect(orderLengthTargets(flat).every((target) => target.pass)).toBe(true);
    const past = [row(10, 40, 900, 12), row(1000, 61, 900, 12)];
    expect(orderLengthTargets(past).find((target) => target.target.includes('CPU'))?.pass).toBe(false);
  });

  it('fail the correctness target on a wrong order, and print nothing without rows', () => {
    const wrong = { ...row(10, 40, 900, 12), ordersWrong: 1 };
    expect(orderLengthTargets([wrong]).find((target) => target.target.includes('reference'))?.pass).toBe(
      false,
    );
    expect(orderLengthTargets([])).toEqual([]);
  });
});

describe('the order-length table in the bench', () => {
  it('runs each length on about the same number of entries, correct, with deterministic counts', async () => {
    const options = { ...BENCH_DEFAULTS, orderLengths: [4, 20], orderLengthEntries: 80, warmupOrders: 0 };
    const first = await runOrderLengthTable(options, () => undefined);
    const again = await runOrderLengthTable(options, () => undefined);
    expect(first.map((r) => [r.entriesPerOrder, r.orders, r.entries])).toEqual([
      [4, 20, 80],
      [20, 4, 80],
    ]);
    for (const [i, r] of first.entries()) {
      expect(r).toMatchObject({ ordersWrong: 0, doubleEffects: 0, orderingViolations: 0 });
      expect(r.operationsPerEntry.create).toBeGreaterThanOrEqual(1);
      expect(r.requestUnitsPerEntry).toBeGreaterThan(5);
      // Everything but the CPU time is a count: the same on every run.
      expect({ ...again[i], cpuMicrosPerEntry: 0 }).toEqual({ ...r, cpuMicrosPerEntry: 0 });
    }
    const printed = formatOrderLengthTable(options, first);
    expect(printed).toContain('order-length table');
    expect(printed).toContain('RU/entry');
  });

  it('--only order-length runs the table alone and prints its targets only', async () => {
    const parsed = parseBenchArgs([
      '--only',
      'order-length',
      '--order-lengths',
      '3,6',
      '--order-length-entries',
      '24',
    ]);
    expect(parsed.options).toEqual({ only: 'order-length', orderLengths: [3, 6], orderLengthEntries: 24 });
    const result = await runBench({ ...parsed.options, warmupOrders: 0 });
    expect(result.rows).toEqual([]);
    expect(result.sessions).toBeNull();
    expect(result.orderLength?.map((r) => r.entriesPerOrder)).toEqual([3, 6]);
    expect(result.targets.every((target) => target.target.startsWith('order length:'))).toBe(true);
    const printed = formatBench(result);
    expect(printed).toContain('order-length table');
    expect(printed).not.toContain('design');
    expect(printed).toMatch(/^(PASS|FAIL) {2}order length: estimated RU per entry/m);
  });

  it('refuses a bad --only or --order-lengths, and 0 skips the table', () => {
    expect(() => parseBenchArgs(['--only', 'sessions'])).toThrow('--only must be order-length');
    expect(() => parseBenchArgs(['--order-lengths', '10,1001'])).toThrow('over 1000');
    expect(() => parseBenchArgs(['--order-lengths', '1'])).toThrow('--order-lengths');
    expect(parseBenchArgs(['--order-lengths', '0']).options).toEqual({ orderLengths: [] });
  });
});
