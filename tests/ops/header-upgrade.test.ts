/**
 * Upgrading a store whose order headers are under their orderId (tools/ops/header-upgrade.ts,
 * docs/documents.md "Upgrading"): each header moves to `order` in one batch of its partition, and
 * the orders go on from where they were.
 */
import { createEmbeddedApp, type EmbeddedApp } from '../../local/app';
import {
  ORDER_HEADER_ID,
  readOrderHeader,
  readOrderState,
  type OrderDocument,
} from '../../src/services/order-documents';
import type { Document, DocumentContainer } from '../../src/services/ports';
import { upgradeOrderHeaders } from '../../tools/ops/header-upgrade';
import { runOpsCommand } from '../../tools/ops/ops';
import { added, created, FAST, ledger } from '../support/e2e';
import { capturedOutput, opsWorld, useOpsWorlds } from '../support/ops';

useOpsWorlds();

const OPTIONS = { ...FAST, maxDeliveryCount: 2, clock: { mode: 'virtual' as const } };

/** Puts the order's header back where a store written before `order` has it: under its orderId. */
async function underItsOrderId(orders: DocumentContainer, orderId: string): Promise<void> {
  const stored = await orders.read<OrderDocument>(orderId, ORDER_HEADER_ID);
  if (stored === undefined) throw new Error(`no header for ${orderId}`);
  const old: Document = { ...stored.document, id: orderId };
  delete old._etag;
  delete old._ts;
  // A header of that time had no slot either (docs/documents.md, "Upgrading to the unique slot").
  delete old.slot;
  if (orderId !== ORDER_HEADER_ID) {
    await orders.create(old);
    await orders.delete(orderId, ORDER_HEADER_ID);
  }
}

async function run(app: EmbeddedApp, ...batches: Parameters<typeof ledger>[]): Promise<void> {
  await app.sendLedger(batches.map((args) => ledger(...args)));
  await app.drain();
}

describe('upgradeOrderHeaders', () => {
  it('moves every header under its orderId to `order`, once; the orders then go on where they were', async () => {
    const app = createEmbeddedApp({
      ...OPTIONS,
      catalog: { 'SKU-T-2': 5, 'SKU-x': 5, 'SKU-T-4': 5, 'SKU-T-22': 5 },
    });
    try {
      // Open orders, waiting for their final entries; one of them named as a record of its own.
      await run(app, [
        'B-1',
        [created('O-1', 'T-1'), added('O-1', 'T-2', 2), created('txn:x', 'T-1'), created('order', 'T-1')],
      ]);
      for (const orderId of ['O-1', 'txn:x', 'order']) await underItsOrderId(app.orders, orderId);

      const upgrade = await upgradeOrderHeaders(app.orders);
      expect({ ...upgrade, moved: upgrade.moved.sort() }).toEqual({
        moved: ['O-1', 'txn:x'],
        alreadyThere: 1,
        left: [],
      });
      expect((await readOrderHeader(app.orders, 'O-1'))?.document.id).toBe(ORDER_HEADER_ID);
      expect(await readOrderState(app.orders, 'O-1')).toMatchObject({ appliedSequence: 2, lineCount: 1 });
      expect(await app.orders.read('O-1', 'O-1')).toBeUndefined();
      expect(await upgradeOrderHeaders(app.orders)).toEqual({ moved: [], alreadyThere: 3, left: [] });

      await run(app, [
        'B-2',
        [
          added('O-1', 'T-4', 3, 1, 100, true),
          added('txn:x', 'x', 2, 1, 100, true),
          added('order', 'T-22', 2, 1, 100, true),
        ],
      ]);
      const report = await app.report();
      expect(report.deadLettered).toEqual([]);
      expect(report.parked).toEqual([]);
      for (const orderId of ['O-1', 'txn:x', 'order']) {
        expect(report.orders).toContainEqual(
          expect.objectContaining({
            orderId,
            status: 'submitted',
            saga: { status: 'completed', reason: null },
          }),
        );
      }
      expect(report.orders.find((order) => order.orderId === 'O-1')?.lines).toHaveLength(2);
    } finally {
      await app.stop();
    }
  });

  it('leaves, naming it, an order that has a header under `order` besides its old one', async () => {
    const app = createEmbeddedApp(OPTIONS);
    try {
      await run(app, ['B-1', [created('O-1', 'T-1')]]);
      const current = await app.orders.read<OrderDocument>('O-1', ORDER_HEADER_ID);
      const old: Document = { ...current!.document, id: 'O-1' };
      delete old._etag;
      delete old.slot;
      delete old._ts;
      await app.orders.create(old);

      const upgrade = await upgradeOrderHeaders(app.orders);
      expect(upgrade.moved).toEqual([]);
      expect(upgrade.left).toEqual([
        { orderId: 'O-1', reason: expect.stringMatching(/has a header under "order" besides .*merge them/) },
      ]);
      expect(await app.orders.read('O-1', 'O-1')).toBeDefined();
    } finally {
      await app.stop();
    }
  });

  it('runs as npm run ops -- headers upgrade: what moved, what was there, what was left, exit 1 when any was', async () => {
    const world = opsWorld(OPTIONS);
    await run(world.app, ['B-1', [created('O-1', 'T-1'), created('O-2', 'T-1')]]);
    await underItsOrderId(world.app.orders, 'O-1');
    const ops = async (...argv: string[]) => {
      const output = capturedOutput();
      const code = await runOpsCommand(
        world.operations,
        { orders: world.app.orders, now: world.deps.now },
        argv,
        output,
      );
      return { code, stdout: output.stdout.join('\n'), stderr: output.stderr.join('\n') };
    };
    expect(await ops('headers', 'upgrade')).toEqual({
      code: 0,
      stdout: 'moved 1 order header to "order"; 1 there already',
      stderr: '',
    });
    const again = await ops('headers', 'upgrade', '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ moved: [], alreadyThere: 2, left: [] });

    const stored = await world.app.orders.read<OrderDocument>('O-2', ORDER_HEADER_ID);
    await world.app.orders.create({
      ...stored!.document,
      id: 'O-2',
      slot: undefined,
      _etag: undefined,
      _ts: undefined,
    });
    const left = await ops('headers', 'upgrade');
    expect(left.code).toBe(1);
    expect(left.stdout).toMatch(
      /^moved 0 order headers to "order"; 2 there already\nleft O-2: order O-2 has a header under "order" besides/,
    );
    expect((await ops('headers', 'migrate')).stderr).toMatch(/^headers takes upgrade, got "migrate"/);
  });
});
