/**
 * `npm start --html`: the page opened in headless Chromium (Debian's `chromium`, driven by
 * `playwright-core`) shows what the JSON report of the same run holds, and asks nothing of the network.
 * Without Chromium the test skips and says so; under CI (CI=true) a missing Chromium fails it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { main } from '../../local/cli/start';
import type { Report } from '../../local/report';
import { SAMPLE_PATH } from '../support/e2e';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const available = existsSync(CHROMIUM);
const inCi = process.env.CI === 'true';

if (!available && !inCi) {
  // Loud on purpose: a skipped picture test must not pass unseen.
  console.warn(
    `SKIPPED tests/e2e/html-report.test.ts: no Chromium at ${CHROMIUM} (apt-get install chromium)`,
  );
}

describe('npm start --html', () => {
  if (!available && inCi) {
    it('needs Chromium under CI', () => {
      throw new Error(`CI=true and no Chromium at ${CHROMIUM}: .ci/run must install Debian's chromium`);
    });
    return;
  }
  const maybe = available ? it : it.skip;
  let dir: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'convoy-html-'));
    if (available) browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  maybe(
    'the page shows the orders, entries, sagas, parked list and counts of the JSON report, offline',
    async () => {
      const html = join(dir, 'run.html');
      const reportPath = join(dir, 'run.json');
      const catalog = join(dirname(SAMPLE_PATH), 'catalog.json');
      jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
      const code = await main([
        '--input',
        SAMPLE_PATH,
        '--catalog',
        catalog,
        '--seed',
        '7',
        '--faults',
        'duplicate=0.3',
        '--report',
        reportPath,
        '--html',
        html,
      ]);
      jest.restoreAllMocks();
      expect(code).toBe(0);
      const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;

      const page = await browser!.newPage();
      const requests: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith('file:')) requests.push(request.url());
      });
      await page.goto(pathToFileURL(html).href);

      // One lane per order, each labelled with its id and status.
      const lanes = await page.$$eval('[data-lane]', (nodes) =>
        nodes.map((node) => [node.getAttribute('data-lane'), node.getAttribute('data-status')]),
      );
      expect(lanes.map(([id]) => id).sort()).toEqual(report.orders.map((order) => order.orderId).sort());
      for (const order of report.orders) {
        expect(lanes).toContainEqual([order.orderId, order.status]);
        const lane = page.locator(`[data-lane="${order.orderId}"]`);
        // Every slot the order took is a mark: applied or rejected, up to its last sequence.
        const slots = await lane
          .locator('[data-outcome="applied"], [data-outcome="rejected"]')
          .evaluateAll((nodes) => nodes.map((node) => Number(node.getAttribute('data-sequence'))));
        expect(slots.sort((a, b) => a - b)).toEqual(
          Array.from({ length: order.appliedSequence }, (_, index) => index + 1),
        );
        expect((await lane.locator('[data-outcome="buffered"]').count()) > 0).toBe(order.waitingFor !== null);
        // Each saga, with its outcome and reason and each step it ran.
        const saga = page.locator(`[data-saga="${order.orderId}"]`);
        if (order.saga === null) {
          expect(await saga.count()).toBe(0);
          continue;
        }
        expect(await saga.getAttribute('data-status')).toBe(order.saga.status);
        expect(await saga.locator('.saga-outcome').textContent()).toBe(order.saga.status);
        if (order.saga.reason !== null) {
          expect(await saga.locator('.saga-reason').textContent()).toBe(order.saga.reason);
        }
        expect(await saga.locator('[data-operation="reserveInventory"]').count()).toBe(1);
      }
      // Applied lines are on show for the order the contract's example describes.
      expect(await page.locator('[data-lane="O-17"] [data-outcome="applied"]').count()).toBe(4);
      expect(await page.locator('[data-outcome="duplicate"]').count()).toBeGreaterThan(0);

      // The parked list, row for row.
      const parked = await page.$$eval('#parked tr', (rows) =>
        rows.slice(1).map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)),
      );
      expect(parked).toEqual(
        report.parked.map((p) => [
          p.queue,
          p.messageId,
          p.sessionId ?? '',
          p.transactionId ?? '',
          p.reason,
          p.description,
        ]),
      );
      expect(await page.getAttribute('#dead-lettered', 'data-rows')).toBe(String(report.deadLettered.length));

      // The counts, and the per-entry account when the report has one.
      for (const [name, value] of Object.entries(report.stats)) {
        if (typeof value !== 'number') continue;
        expect(await page.textContent(`#stats [data-count="${name}"]`)).toBe(String(value));
      }
      const account = (report.stats as unknown as { account?: Record<string, number> }).account;
      for (const [name, value] of Object.entries(account ?? {})) {
        expect(await page.textContent(`#account [data-count="${name}"]`)).toBe(String(value));
      }
      expect(requests).toEqual([]);
      await page.close();
    },
    120_000,
  );
});
