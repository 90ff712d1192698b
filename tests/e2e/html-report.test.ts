/**
 * `npm start --html`: the page of the sample's run and of a 2,000-order run, checked against the
 * JSON report of the same run and its input. The size bound holds without a browser; the rest opens
 * the page in headless Chromium (Debian's `chromium`, driven by `playwright-core`), offline.
 * Without Chromium those tests skip and say so; under CI (CI=true) a missing Chromium fails.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import {
  chromiumAvailable,
  failsWithoutChromiumUnderCi,
  launchChromium,
  warnWhenSkipped,
} from '../support/chromium';
import { main } from '../../local/cli/start';
import { ENTRY_OUTCOMES } from '../../local/cli/run-picture';
import { entriesOf } from '../../local/entry-account';
import type { Report } from '../../local/report';
import { SAMPLE_PATH } from '../support/e2e';
import { generatePictureWorkload } from '../support/picture-workload';

/** The size a 2,000-order run's page stays under. */
const MAX_PAGE_BYTES = 2_000_000;
const LARGE_ORDERS = 2000;
const VIEWPORT = { width: 1280, height: 720 };

warnWhenSkipped('the browser tests of tests/e2e/html-report.test.ts');

interface Run {
  input: string;
  html: string;
  report: Report;
}

async function run(
  dir: string,
  name: string,
  input: string,
  catalog: string,
  flags: string[] = [],
): Promise<Run> {
  const html = join(dir, `${name}.html`);
  const reportPath = join(dir, `${name}.json`);
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    const code = await main([
      '--input',
      input,
      '--catalog',
      catalog,
      ...flags,
      '--report',
      reportPath,
      '--html',
      html,
    ]);
    expect(code).toBe(0);
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
  return { input, html, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

/** Each entry of the input as it names itself: its orderId (a string, else none) and transactionId. */
function inputEntries(input: string): Array<{ orderId: string | null; transactionId: unknown }> {
  return readFileSync(input, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => entriesOf((JSON.parse(line) as { body: unknown }).body) ?? [])
    .map((raw) => {
      const entry = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
      return {
        orderId: typeof entry.orderId === 'string' ? entry.orderId : null,
        transactionId: entry.transactionId,
      };
    });
}

/** Every order the page should list: the report's, and those named only by entries that made none. */
function namedOrders({ input, report }: Run): Set<string> {
  const ids = new Set(report.orders.map((order) => order.orderId));
  for (const { orderId } of inputEntries(input)) if (orderId !== null) ids.add(orderId);
  return ids;
}

/**
 * The orders with a problem, from the report and the input alone: waiting on a gap, a saga that did
 * not complete, an entry parked or dead-lettered (on order-transactions its session is the order;
 * from the ledger, the order its entry names).
 */
function problemOrders(r: Run): Set<string> {
  const problems = new Set<string>();
  for (const order of r.report.orders) {
    if (order.waitingFor !== null || (order.saga !== null && order.saga.status !== 'completed'))
      problems.add(order.orderId);
  }
  const ordersOf = new Map<unknown, string[]>();
  for (const { orderId, transactionId } of inputEntries(r.input)) {
    if (orderId !== null) ordersOf.set(transactionId, [...(ordersOf.get(transactionId) ?? []), orderId]);
  }
  for (const held of [...r.report.parked, ...r.report.deadLettered]) {
    if (held.queue === 'order-transactions' && held.sessionId !== null) problems.add(held.sessionId);
    else if ('transactionId' in held && held.transactionId !== null)
      for (const orderId of ordersOf.get(held.transactionId) ?? []) problems.add(orderId);
  }
  return problems;
}

/** The `data-order` values inside the element with this id, as the HTML text has them (ids here need no escaping). */
function ordersIn(html: string, id: string): string[] {
  const start = html.indexOf(`id="${id}"`);
  const end = html.indexOf('</section>', start);
  if (start < 0) return [];
  return [...html.slice(start, end).matchAll(/ data-order="([^"]*)"/g)].map((match) => match[1]);
}

describe('npm start --html', () => {
  let dir: string;
  let sample: Run;
  let large: Run;
  let browser: Browser | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'convoy-html-'));
    sample = await run(dir, 'sample', SAMPLE_PATH, join(dirname(SAMPLE_PATH), 'catalog.json'), [
      '--seed',
      '7',
      '--faults',
      'duplicate=0.3',
    ]);
    const workload = generatePictureWorkload({ orders: LARGE_ORDERS, seed: 11 });
    const input = join(dir, 'large.ndjson');
    const catalog = join(dir, 'large-catalog.json');
    writeFileSync(input, `${workload.lines.join('\n')}\n`);
    writeFileSync(catalog, JSON.stringify(workload.catalog));
    large = await run(dir, 'large', input, catalog);
    if (chromiumAvailable) browser = await launchChromium();
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`a ${LARGE_ORDERS}-order run: the page stays under ${MAX_PAGE_BYTES} bytes, lists every order and the problem ones first`, () => {
    const { report } = large;
    // The workload holds every kind of problem the page lists.
    expect(report.orders).toHaveLength(LARGE_ORDERS);
    for (const outcome of ['duplicate', 'parked', 'buffered'] as const)
      expect(report.stats.account[outcome]).toBeGreaterThan(0);
    expect(report.orders.some((order) => order.saga?.status === 'compensated')).toBe(true);

    expect(statSync(large.html).size).toBeLessThan(MAX_PAGE_BYTES);
    const html = readFileSync(large.html, 'utf8');
    expect(html).not.toContain('id="account-mismatch"');
    const problems = problemOrders(large);
    expect(problems.size).toBeGreaterThan(0);
    expect(ordersIn(html, 'problem-list').sort()).toEqual([...problems].sort());
    const others = ordersIn(html, 'orders');
    expect([...ordersIn(html, 'problem-list'), ...others].sort()).toEqual([...namedOrders(large)].sort());
    // Every problem order comes before the first of the others.
    expect(html.indexOf('id="problems"')).toBeLessThan(html.indexOf('id="orders"'));
  });

  if (failsWithoutChromiumUnderCi()) return;
  const maybe = chromiumAvailable ? it : it.skip;

  async function open(path: string): Promise<{ page: Page; requests: string[] }> {
    const page = await browser!.newPage({ viewport: VIEWPORT });
    const requests: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith('file:')) requests.push(request.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(pathToFileURL(path).href);
    expect(errors).toEqual([]);
    return { page, requests };
  }

  /** The visible order ids the filter leaves, and the count it shows. */
  async function filtered(page: Page): Promise<{ shown: string[]; count: string | null }> {
    const shown = await page.$$eval('[data-order]', (nodes) =>
      nodes
        .filter((node) => !node.hasAttribute('hidden'))
        .map((node) => node.getAttribute('data-order') ?? ''),
    );
    return { shown: [...new Set(shown)].sort(), count: await page.textContent('#filter-count') };
  }

  maybe(
    'the sample: a lane per order on a time axis with every entry of the account, each saga, the lists and counts, offline',
    async () => {
      const { report } = sample;
      const { page, requests } = await open(sample.html);

      // One lane per order, the report's and those only its parked entries name, each with its status.
      const lanes = await page.$$eval('[data-lane]', (nodes) =>
        nodes.map((node) => [node.getAttribute('data-lane'), node.getAttribute('data-status')]),
      );
      expect(lanes.map(([id]) => id).sort()).toEqual([...namedOrders(sample)].sort());
      expect(await page.locator('#convoy .axis .tick').count()).toBeGreaterThanOrEqual(3);
      for (const order of report.orders) {
        expect(lanes).toContainEqual([order.orderId, order.status]);
        const lane = page.locator(`[data-lane="${order.orderId}"]`);
        // Every slot the order took is a chip: applied, or parked as rejected, up to its last sequence.
        const slots = await lane
          .locator('[data-outcome="applied"], [data-outcome="parked"].rejected')
          .evaluateAll((nodes) => nodes.map((node) => Number(node.getAttribute('data-sequence'))));
        expect(slots.sort((a, b) => a - b)).toEqual(
          Array.from({ length: order.appliedSequence }, (_, index) => index + 1),
        );
        expect((await lane.locator('[data-outcome="buffered"]').count()) > 0).toBe(order.waitingFor !== null);
        const saga = page.locator(`[data-saga-of="${order.orderId}"]`);
        if (order.saga === null) {
          expect(await saga.count()).toBe(0);
          continue;
        }
        expect(await saga.getAttribute('data-status')).toBe(order.saga.status);
        expect(await saga.locator('.saga-outcome').textContent()).toBe(order.saga.status);
        if (order.saga.reason !== null)
          expect(await saga.locator('.saga-reason').textContent()).toBe(order.saga.reason);
        expect(await saga.locator('[data-operation="reserveInventory"]').count()).toBe(1);
      }
      expect(await page.locator('[data-lane="O-17"] [data-outcome="applied"]').count()).toBe(4);

      // Every entry of the account is a chip on a lane; the repeats the broker dropped sit apart, untimed.
      for (const outcome of ENTRY_OUTCOMES) {
        expect([outcome, await page.locator(`#lanes [data-outcome="${outcome}"]`).count()]).toEqual([
          outcome,
          report.stats.account[outcome],
        ]);
      }
      expect(await page.locator('#lanes .untimed [data-outcome="duplicate"]').count()).toBe(
        report.stats.account.duplicate,
      );
      // With the duplicate fault, redeliveries the consumer answered from its idempotency record.
      expect(await page.locator('#lanes [data-redelivery]').count()).toBeGreaterThan(0);

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

      // The counts and the per-entry account, and the legend's account.
      for (const [name, value] of Object.entries(report.stats)) {
        if (typeof value !== 'number') continue;
        expect(await page.textContent(`#stats [data-count="${name}"]`)).toBe(String(value));
      }
      for (const [name, value] of Object.entries(report.stats.account)) {
        expect(await page.textContent(`#account [data-count="${name}"]`)).toBe(String(value));
      }
      for (const outcome of ENTRY_OUTCOMES) {
        expect(await page.textContent(`#outcome-legend [data-count="${outcome}"]`)).toBe(
          report.stats.account[outcome].toLocaleString('en-US'),
        );
      }
      expect(await page.locator('#saga-legend li').count()).toBeGreaterThan(4);
      expect(requests).toEqual([]);
      await page.close();
    },
    120_000,
  );

  maybe(
    `${LARGE_ORDERS} orders: the first screen shows the aggregates and the problem orders; the legends, the filter, every entry`,
    async () => {
      const { report } = large;
      const { page, requests } = await open(large.html);

      // The first screen: the account with its legend, the three aggregates, the filter and the first problem orders.
      const onFirstScreen = async (selector: string): Promise<boolean> => {
        const box = await page.locator(selector).first().boundingBox();
        return box !== null && box.y >= 0 && box.y + box.height <= VIEWPORT.height && box.width > 0;
      };
      for (const selector of [
        '#outcome-legend',
        '#saga-legend',
        '#throughput',
        '#load',
        '#reasons',
        '#filter',
        '#problems h2',
        '#problem-list > details',
      ])
        expect([selector, await onFirstScreen(selector)]).toEqual([selector, true]);
      expect(Number(await page.getAttribute('#throughput', 'data-buckets'))).toBeGreaterThan(10);
      expect(Number(await page.getAttribute('#load', 'data-samples'))).toBeGreaterThan(10);
      expect(await page.locator('#throughput rect').count()).toBeGreaterThan(10);
      expect(await page.locator('#load polyline').count()).toBe(3);
      const reasons = await page.$$eval('#reasons [data-reason]', (nodes) =>
        nodes.map((node) => node.getAttribute('data-reason')),
      );
      const parkReasons = new Set(report.parked.filter((p) => p.transactionId !== null).map((p) => p.reason));
      for (const reason of parkReasons) expect(reasons).toContain(`parked: ${reason}`);
      expect(reasons).toContain('sagas: compensated');

      // The legends: every outcome of the account with its count.
      for (const outcome of ENTRY_OUTCOMES) {
        expect(await page.textContent(`#outcome-legend [data-count="${outcome}"]`)).toBe(
          report.stats.account[outcome].toLocaleString('en-US'),
        );
      }

      // Every entry somewhere: in its problem order's table, counted in its order's row, or with no order.
      const columns = await page.$$eval('#order-table tr:first-child th', (cells) =>
        cells.map((cell) => cell.getAttribute('data-outcome')),
      );
      for (const outcome of ENTRY_OUTCOMES) {
        const inProblems = await page
          .locator(`#problem-list [data-entry][data-outcome="${outcome}"]`)
          .count();
        const unordered = await page.locator(`#unordered [data-entry][data-outcome="${outcome}"]`).count();
        const column = columns.indexOf(outcome) + 1;
        const counted = await page.$$eval(`#order-table tr td:nth-child(${column})`, (cells) =>
          cells.reduce((sum, cell) => sum + Number(cell.textContent || 0), 0),
        );
        expect([outcome, inProblems + unordered + counted]).toEqual([outcome, report.stats.account[outcome]]);
      }

      // The filter: by part of an order id, by outcome, by saga; cleared, everything again.
      const all = await filtered(page);
      expect(all.shown).toEqual([...namedOrders(large)].sort());
      const someId = report.orders[Math.floor(report.orders.length / 2)].orderId;
      await page.fill('#filter-id', someId);
      const byId = await filtered(page);
      expect(byId.shown).toEqual([...namedOrders(large)].filter((id) => id.includes(someId)).sort());
      expect(byId.shown).toContain(someId);
      expect(byId.count).toBe(`${byId.shown.length} order${byId.shown.length === 1 ? '' : 's'}`);

      await page.fill('#filter-id', '');
      await page.selectOption('#filter-outcome', 'outcomes:buffered');
      const buffered = await filtered(page);
      expect(buffered.shown).toEqual(
        report.orders
          .filter((order) => order.waitingFor !== null)
          .map((order) => order.orderId)
          .sort(),
      );
      await page.selectOption('#filter-outcome', 'saga:compensated');
      expect((await filtered(page)).shown).toEqual(
        report.orders
          .filter((order) => order.saga?.status === 'compensated')
          .map((order) => order.orderId)
          .sort(),
      );
      await page.selectOption('#filter-outcome', 'problems:');
      expect((await filtered(page)).shown).toEqual([...problemOrders(large)].sort());
      await page.selectOption('#filter-outcome', '');
      expect((await filtered(page)).shown).toEqual(all.shown);
      expect(requests).toEqual([]);
      await page.close();
    },
    300_000,
  );
});
