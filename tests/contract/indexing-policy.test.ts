/**
 * A query may filter only on what the container's indexing policy indexes (src/adapters/indexing-policy.ts,
 * the list bicep/modules/cosmos.bicep is checked against in bicep-consistency.test.ts): both stores
 * refuse any other field, so a new query without an index fails the tests that run it.
 */
import type { Container } from '@azure/cosmos';
import { createCosmosContainer } from '../../src/adapters/azure/cosmos-store';
import { createEmbeddedStore } from '../../local/store/document-store';
import { QUERIED_FIELDS, includedPaths, queriedFieldsOf } from '../../src/adapters/indexing-policy';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../../src/services/order-documents';
import { PermanentError } from '../../src/domain/errors';
import { createEmbeddedApp } from '../../local/app';

describe('queries keep to the indexed fields', () => {
  const queried = queriedFieldsOf(ORDERS_CONTAINER);

  it('lists every container of the app, and refuses a name it does not know', () => {
    expect([...QUERIED_FIELDS.keys()].sort()).toEqual(['downstream', 'inventory', 'operations', 'orders']);
    expect(queried).toEqual(['kind', 'slot', 'status']);
    expect(() => queriedFieldsOf('order')).toThrow(PermanentError);
  });

  it('includes the partition key and the queried fields, once each', () => {
    expect(includedPaths('orderId', ['kind'])).toEqual(['/orderId/?', '/kind/?']);
    expect(includedPaths('orderId', ['orderId', 'kind'])).toEqual(['/orderId/?', '/kind/?']);
    expect(includedPaths('sku', [])).toEqual(['/sku/?']);
  });

  it('the embedded store answers a query on an indexed field and refuses any other', async () => {
    const orders = createEmbeddedStore().container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH, {
      queriedFields: queried,
    });
    await orders.create({ id: 'O-1', orderId: 'O-1', kind: 'order', customerId: 'C-1' });
    await expect(orders.query({ where: { kind: 'order' } })).resolves.toHaveLength(1);
    await expect(orders.query({ partitionKey: 'O-1', where: { orderId: 'O-1' } })).resolves.toHaveLength(1);
    await expect(orders.query({ where: { customerId: 'C-1' } })).rejects.toMatchObject({
      code: 'unindexed-query',
      message: expect.stringContaining('"customerId"'),
    });
  });

  it('the Cosmos adapter refuses the same query before it sends anything', async () => {
    const sent: unknown[] = [];
    const stub = {
      id: ORDERS_CONTAINER,
      items: {
        query: (spec: unknown) => {
          sent.push(spec);
          return { fetchAll: () => Promise.resolve({ resources: [] }) };
        },
      },
    };
    const orders = createCosmosContainer(stub as unknown as Container, ORDERS_PARTITION_KEY_PATH, {
      queriedFields: queried,
    });
    await expect(orders.query({ where: { customerId: 'C-1' } })).rejects.toMatchObject({
      code: 'unindexed-query',
    });
    expect(sent).toEqual([]);
    await expect(orders.query({ partitionKey: 'O-1', where: { kind: 'inbox' } })).resolves.toEqual([]);
    expect(sent).toHaveLength(1);
  });

  it("the embedded app's containers keep to the list", async () => {
    const app = createEmbeddedApp();
    try {
      await expect(app.orders.query({ where: { kind: 'order' } })).resolves.toEqual([]);
      await expect(app.orders.query({ where: { customerId: 'C-1' } })).rejects.toMatchObject({
        code: 'unindexed-query',
      });
    } finally {
      await app.stop();
    }
  });
});
