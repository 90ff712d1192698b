/**
 * Ids the Node worker converts. On Azure `@azure/functions` runs every string of
 * the trigger metadata through `tryJsonParse` (azure-functions-nodejs-library
 * `src/converters/fromRpcTypedData.ts`): a sessionId "12345678901234567890" reaches the handler as
 * the number 12345678901234567000, "007" as 7, "true" as a boolean, "null" as null. The embedded host
 * now invokes through that very code, so these orders go through what Azure would do to them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { main } from '../../local/cli/start';
import { createEmbeddedApp } from '../../local/app';
import type { Report } from '../../local/report';
import { created, added, FAST, ledger, runToEnd } from '../support/e2e';
import { expectAccountAddsUp } from '../support/account';

const IDS = ['12345', '007', '1e3', '1.50', '12345678901234567890', 'true', 'null'];
const CATALOG = Object.fromEntries(IDS.map((id) => [`SKU-${id}-t2`, 10]));

describe('ids the worker converts', () => {
  it('end as ordinary ids do: every order applied and submitted, its saga completed, nothing parked', async () => {
    const entries = IDS.flatMap((id) => [created(id, `${id}`), added(id, `${id}-t2`, 2, 1, 100, true)]);
    const inputs = [ledger('null', entries)];
    const { report, submitted } = await runToEnd(inputs, {
      ...FAST,
      catalog: CATALOG,
      clock: { mode: 'virtual' },
    });

    expect(report.parked).toEqual([]);
    expect(report.deadLettered).toEqual([]);
    expect([...new Set(submitted)].sort()).toEqual([...IDS].sort());
    const byId = new Map(report.orders.map((order) => [order.orderId, order]));
    for (const id of IDS) {
      expect(byId.get(id)).toMatchObject({ orderId: id, status: 'submitted', saga: { status: 'completed' } });
    }
  });

  it('keeps a ledger batch whose id the worker converts: a broken body is parked under its own id', async () => {
    const inputs = IDS.map((id) => ({ messageId: id, sessionId: 'main', body: { batchId: id } }));
    const { report } = await runToEnd(inputs, FAST);

    expect(report.parked.map((parked) => parked.messageId).sort()).toEqual([...IDS].sort());
  });

  it('start their sagas through the app durable client, and the HTTP API answers for them', async () => {
    const app = createEmbeddedApp({ ...FAST, catalog: CATALOG, clock: { mode: 'virtual' } });
    try {
      const entries = IDS.flatMap((id) => [created(id, `${id}`), added(id, `${id}-t2`, 2, 1, 100, true)]);
      await app.sendLedger([ledger('null', entries)]);
      await app.drain();
      expectAccountAddsUp(await app.report());
      // Each start is a status query and a start on the served management API (durable-client.ts).
      expect(app.durable.stats().managementRequests).toBeGreaterThanOrEqual(2 * IDS.length);
      expect(app.durable.stats().instancesStarted).toBe(IDS.length);
      for (const id of IDS) {
        const response = await app.http({ method: 'GET', path: `orders/${encodeURIComponent(id)}` });
        expect(response.status).toBe(200);
        expect(JSON.parse(response.body)).toMatchObject({ orderId: id, saga: { status: 'completed' } });
      }
      const cancel = await app.http({
        method: 'POST',
        path: `orders/${encodeURIComponent('12345678901234567890')}/cancel`,
      });
      expect(cancel.status).toBe(202);
      await app.drain();
      expect(app.durable.stats().instancesStarted).toBe(IDS.length + 1);
      expect((await app.http({ method: 'GET', path: 'nowhere' })).status).toBe(404);
    } finally {
      await app.stop();
    }
  });

  it('pass through npm start: samples/converted-ids.ndjson ends with every order completed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'converted-ids-'));
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const reportPath = join(dir, 'report.json');
      const samples = resolve(__dirname, '..', '..', 'samples');
      const argv = [
        '--input',
        join(samples, 'converted-ids.ndjson'),
        '--catalog',
        join(samples, 'catalog.json'),
      ];
      expect(await main([...argv, '--report', reportPath, '--quiet'])).toBe(0);
      const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
      expect(report.orders.map((order) => [order.orderId, order.saga?.status]).sort()).toEqual(
        [...IDS].sort().map((id) => [id, 'completed']),
      );
      // The two broken batches, parked under their own ids.
      expect(report.parked.map((parked) => parked.messageId).sort()).toEqual([
        '12345678901234567890',
        'true',
      ]);
    } finally {
      write.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
