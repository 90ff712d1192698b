/**
 * `npm run ops -- orders copy`: an `orders` container written before the unique slot, copied into
 * one with it (docs/documents.md, "Upgrading to the unique slot"), on which the consumer goes on.
 */
import { createEmbeddedStore } from '../../local/store/document-store';
import { entryDigest } from '../../src/domain/digest';
import { createOrderCache } from '../../src/services/convoy/order-cache';
import { applyEntry } from '../../src/services/idempotent-consumer';
import {
  ORDER_GAP_ID,
  ORDERS_PARTITION_KEY_PATH,
  readOrderState,
  type OrderDocument,
} from '../../src/services/order-documents';
import type { Document, DocumentContainer } from '../../src/services/ports';
import { copyOrders } from '../../tools/ops/orders-copy';
import { runOpsCommand } from '../../tools/ops/ops';
import { createEmbeddedOperations } from '../../local/store/message-operations';
import { createEmbeddedBroker } from '../../local/broker/broker';
import { appOrdersContainer } from '../support/orders-container';
import { added, created, deliveredEntry } from '../support/e2e';

const ignore = (): void => {};

/** O-1 as a version before the unique slot left it: entries 1 and 2 applied, 4 waiting for 3. */
async function previousLayout(orders: DocumentContainer): Promise<void> {
  const four = added('O-1', 'T-4', 4, 1, 100);
  const header: OrderDocument = {
    id: 'order',
    kind: 'order',
    orderId: 'O-1',
    status: 'open',
    customerId: 'C-O-1',
    currency: 'EUR',
    lineCount: 1,
    total: 100,
    appliedSequence: 2,
    finalSequence: null,
    buffered: [{ messageId: 'M-4', digest: entryDigest(four), entry: four, properties: {} }],
    correlationId: null,
    outbox: null,
  };
  const records: Document[] = [
    {
      id: 'txn:T-1',
      kind: 'transaction',
      orderId: 'O-1',
      transactionId: 'T-1',
      digest: entryDigest(created('O-1', 'T-1')),
      sequence: 1,
      outcome: 'applied',
    },
    {
      id: 'txn:T-2',
      kind: 'transaction',
      orderId: 'O-1',
      transactionId: 'T-2',
      digest: entryDigest(added('O-1', 'T-2', 2)),
      sequence: 2,
      outcome: 'applied',
      line: { sku: 'SKU-T-2', quantity: 1, unitPrice: 100 },
    },
    {
      id: 'txn:T-4',
      kind: 'transaction',
      orderId: 'O-1',
      transactionId: 'T-4',
      digest: entryDigest(four),
      sequence: 4,
      outcome: 'buffered',
    },
    { id: 'saga:O-1', kind: 'saga', orderId: 'O-1', status: 'running' },
  ];
  for (const document of [header, ...records]) await orders.create(document);
}

describe('orders copy', () => {
  it('gives every document its slot and a waiting order its gap document; the consumer goes on from there; a second run changes nothing', async () => {
    const store = createEmbeddedStore();
    const source = store.container('orders-previous', ORDERS_PARTITION_KEY_PATH);
    await previousLayout(source);
    const target = appOrdersContainer(store);

    const copy = await copyOrders(source, target);
    expect(copy).toEqual({ orders: 1, documents: 6, gaps: 1, left: [] });
    const slots = (await target.query<Document>({ partitionKey: 'O-1' }))
      .map(({ document }) => [document.id, document.slot])
      .sort();
    expect(slots).toEqual([
      ['gap', 3],
      ['order', 'order'],
      ['saga:O-1', 'saga'],
      ['txn:T-1', 1],
      ['txn:T-2', 2],
      ['txn:T-4', 4],
    ]);
    expect(await copyOrders(source, target)).toEqual(copy);

    // Entry 3 arrives at a fresh consumer: it fills the gap and releases 4.
    const deps = {
      orders: target,
      sender: { send: async () => undefined },
      fulfillment: { start: async () => undefined },
      telemetry: { trace: ignore, event: ignore, metric: ignore },
      cache: createOrderCache(),
    };
    expect(await applyEntry(deps, deliveredEntry(added('O-1', 'T-3', 3, 1, 100)))).toMatchObject({
      kind: 'applied',
      applied: 2,
    });
    expect(await readOrderState(target, 'O-1')).toMatchObject({
      appliedSequence: 4,
      buffered: [],
      total: 300,
    });
    expect(await target.read('O-1', ORDER_GAP_ID)).toBeUndefined();
  });

  it('leaves a header still under its orderId, and a document of a kind it does not know, naming them', async () => {
    const store = createEmbeddedStore();
    const source = store.container('orders-previous', ORDERS_PARTITION_KEY_PATH);
    await source.create({ id: 'O-2', kind: 'order', orderId: 'O-2', buffered: [], appliedSequence: 0 });
    await source.create({ id: 'order', kind: 'order', orderId: 'O-3', buffered: [], appliedSequence: 0 });
    await source.create({ id: 'note', kind: 'note', orderId: 'O-3' });
    const copy = await copyOrders(source, appOrdersContainer(store));
    expect(copy.left).toEqual([
      {
        orderId: 'O-2',
        id: 'O-2',
        reason: 'a header under its orderId: run `npm run ops -- headers upgrade` on the source first',
      },
      { orderId: 'O-3', id: 'note', reason: 'a document of kind "note" this version does not write' },
    ]);
  });
});

describe('npm run ops -- orders copy', () => {
  const ops = async (argv: string[], container?: (name: string) => DocumentContainer) => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const output = { out: (text: string) => stdout.push(text), err: (text: string) => stderr.push(text) };
    const code = await runOpsCommand(
      createEmbeddedOperations(createEmbeddedBroker()),
      { orders: appOrdersContainer(), now: Date.now, container },
      argv,
      output,
    );
    return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
  };

  it('copies the named source into the named target, saying what it copied', async () => {
    const store = createEmbeddedStore();
    await previousLayout(store.container('orders-previous', ORDERS_PARTITION_KEY_PATH));
    appOrdersContainer(store);
    const container = (name: string): DocumentContainer => store.container(name, ORDERS_PARTITION_KEY_PATH);
    expect(await ops(['orders', 'copy', 'orders-previous', 'orders'], container)).toEqual({
      code: 0,
      stdout: 'copied 1 orders, 6 documents (1 gap documents) from orders-previous to orders',
      stderr: '',
    });
  });

  it.each([
    [['orders', 'copy', 'orders']],
    [['orders', 'copy', 'orders', 'orders']],
    [['orders', 'move', 'a', 'b']],
  ])('refuses %j in one line, exit 2', async (argv) => {
    const result = await ops(argv);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toMatch(
      /^orders (copy needs two different container names|takes copy)/,
    );
  });
});
