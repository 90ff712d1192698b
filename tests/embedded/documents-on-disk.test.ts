/**
 * The app with `documentsOnDisk`: the same run reports the same as with the
 * documents in memory, its store's texts are in a file of a temporary directory while it runs,
 * and `stop()` removes that directory.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createEmbeddedApp, type EmbeddedApp } from '../../local/app';
import { added, created, FAST, ledger } from '../support/e2e';

const ORDERS = ['D-1', 'D-2', 'D-3'];
const CATALOG = Object.fromEntries(ORDERS.map((id) => [`SKU-${id}-t2`, 5]));

async function run(app: EmbeddedApp): Promise<Awaited<ReturnType<EmbeddedApp['report']>>> {
  await app.sendLedger([
    ledger(
      'B-D',
      ORDERS.flatMap((id) => [created(id, `${id}-t1`), added(id, `${id}-t2`, 2, 1, 100, true)]),
    ),
  ]);
  await app.drain();
  return app.report();
}

describe('documentsOnDisk', () => {
  let temporary = '';

  beforeEach(() => {
    // The app's directory is made where this test alone can see it.
    temporary = mkdtempSync(join(os.tmpdir(), 'documents-on-disk-test-'));
    jest.spyOn(os, 'tmpdir').mockReturnValue(temporary);
  });

  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(temporary, { recursive: true, force: true });
  });

  it('reports the same run, keeps the texts in a file while it runs, and stop() removes its directory', async () => {
    const inMemory = createEmbeddedApp({ ...FAST, catalog: CATALOG, clock: { mode: 'virtual' } });
    expect(readdirSync(temporary)).toEqual([]);
    const onDisk = createEmbeddedApp({
      ...FAST,
      documentsOnDisk: true,
      catalog: CATALOG,
      clock: { mode: 'virtual' },
    });
    try {
      const expected = await run(inMemory);
      const report = await run(onDisk);
      expect(report).toEqual(expected);
      const [directory, ...others] = readdirSync(temporary);
      expect(others).toEqual([]);
      expect(directory).toMatch(/^embedded-store-/);
      expect(statSync(join(temporary, directory, 'documents')).size).toBeGreaterThan(0);
    } finally {
      await inMemory.stop();
      await onDisk.stop();
    }
    expect(readdirSync(temporary)).toEqual([]);
    await expect(onDisk.orders.read('D-1', 'D-1')).rejects.toMatchObject({ code: 'store-closed' });
  });
});
