/**
 * The operators' console in a browser (headless Chromium, Debian's `chromium`, driven by
 * `playwright-core`), against the embedded runtime served as `npm start -- --serve` serves it
 * (local/serve.ts), over a run with a gap behind a held entry, a park and a saga waiting for a person
 * (tests/support/console-scenario.ts). An operator finds the parked entry and inspects it, replays
 * that order's held messages in order (a dry run, then the replay), and resolves the review; each
 * effect is checked in the store. Without Chromium the test skips and says so; under CI (CI=true) a
 * missing Chromium fails, as tests/e2e/html-report.test.ts does.
 */
import type { Browser, Page } from 'playwright-core';
import { serveApp, type Served } from '../../local/serve';
import { readOrderState } from '../../src/services/order-documents';
import { readSagaRecord } from '../../src/services/fulfillment/saga-record';
import type { EmbeddedApp } from '../../local/app';
import {
  consoleScenario,
  GAP_ORDER,
  HOSTILE_ORDER,
  SLASHED_ORDER,
  STUCK_ORDER,
  type ConsoleScenario,
} from '../support/console-scenario';
import {
  chromiumAvailable,
  failsWithoutChromiumUnderCi,
  launchChromium,
  warnWhenSkipped,
} from '../support/chromium';

warnWhenSkipped('the browser test of tests/e2e/console-browser.test.ts');

/** Polls `read` until `done` holds of its value, or fails after `ms` naming the last value. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > until) throw new Error(`still not there after ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

/**
 * Clicks Refresh and waits until the page shows an overview at least as new as the one the click
 * fetched (a refresh still in flight from an earlier action may land first, or after it).
 */
async function refreshed(page: Page): Promise<void> {
  const [response] = await Promise.all([
    page.waitForResponse((answer) => answer.url().includes('/api/ops/overview')),
    page.getByRole('button', { name: 'Refresh' }).click(),
  ]);
  const { at } = (await response.json()) as { at: string };
  // ISO 8601 times in UTC sort as text.
  await eventually(
    () => page.locator('#refreshed').textContent(),
    (text) => text !== null && text.startsWith('as of ') && text.slice('as of '.length) >= at,
  );
}

describe('the operators’ console in a browser', () => {
  if (failsWithoutChromiumUnderCi()) return;
  const maybe = chromiumAvailable ? it : it.skip;

  let scenario: ConsoleScenario;
  let app: EmbeddedApp;
  let served: Served;
  let browser: Browser | undefined;
  let page: Page;
  /** Every request the page made that did not go to the served app, and every script error. */
  const elsewhere: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    scenario = await consoleScenario();
    app = scenario.app;
    served = await serveApp(app);
    if (!chromiumAvailable) return;
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('request', (request) => {
      if (!request.url().startsWith(served.url)) elsewhere.push(request.url());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await served.close();
    await app.stop();
  });

  maybe(
    'finds the parked entry, replays its order’s held messages in order, resolves a review; each effect is in the store',
    async () => {
      // The state the run left: the order waits on entry 2, its saga has not started.
      expect(await readOrderState(app.orders, GAP_ORDER)).toMatchObject({ appliedSequence: 1 });
      expect((await readSagaRecord(app.orders, STUCK_ORDER))?.status).toBe('needs-attention');

      // `?code=` on the page's own URL goes with every call as x-functions-key.
      const keys = new Set<string | undefined>();
      page.on('request', (request) => {
        if (request.url().includes('/api/') && !request.url().includes('/ops/console'))
          keys.add(request.headers()['x-functions-key']);
      });
      await page.goto(`${served.url}/api/ops/console?code=local-key`);

      // 1. The parked entry, found by its reason, inspected: it is an entry of the gap order.
      const invalid = page.locator('#parked [data-reason="invalid"]');
      await invalid.locator('[data-inspect]').first().click();
      await expect(invalid.locator('[data-inspected]').textContent()).resolves.toContain(
        `"orderId": "${GAP_ORDER}"`,
      );

      // 2. Its order: open it from the park, dry-run the ordered replay, then confirm it.
      await invalid.locator(`[data-open-order="${GAP_ORDER}"]`).click();
      const view = page.locator(`[data-order-view="${GAP_ORDER}"]`);
      await expect(view.locator('[data-trace-id]').textContent()).resolves.toMatch(/^[0-9a-f]{32}$/);
      // Its held messages in the order the consumer needs them: the dead-lettered entry 2, the park of 5.
      await expect(
        view.locator('[data-held]').evaluateAll((rows) => rows.map((row) => row.firstChild?.textContent)),
      ).resolves.toEqual(['2', '5']);
      await page.locator(`#gaps [data-gap="${GAP_ORDER}"]`).waitFor();
      scenario.fix();
      await view.getByRole('button', { name: 'Replay held messages in order (dry run)' }).click();
      const dryRun = view.locator(`[data-dry-run="${GAP_ORDER}"]`);
      await expect(dryRun.textContent()).resolves.toContain('would-replay');
      await dryRun.getByRole('button', { name: /^Confirm replay/ }).click();
      await view.locator(`[data-replayed="${GAP_ORDER}"]`).waitFor();
      const applied = await eventually(
        () => readOrderState(app.orders, GAP_ORDER),
        (state) => state?.appliedSequence === 4,
      );
      expect(applied).toMatchObject({ appliedSequence: 4, finalSequence: 4, buffered: [] });

      // 3. The saga waiting for a person: its review, confirmed, retries the refund, which now works.
      await refreshed(page);
      const saga = page.locator(`#sagas [data-saga="${STUCK_ORDER}"]`);
      await saga.getByRole('textbox').fill('refund service restored');
      // A refresh that lands while the operator writes the note, or confirms, leaves both as they are.
      await refreshed(page);
      await expect(saga.getByRole('textbox').inputValue()).resolves.toBe('refund service restored');
      await saga.getByRole('button', { name: 'Retry', exact: true }).click();
      await refreshed(page);
      await saga.getByRole('button', { name: 'Confirm retry' }).click();
      await page
        .locator('#status')
        .getByText(/review "retry" passed/)
        .waitFor();
      const record = await eventually(
        () => readSagaRecord(app.orders, STUCK_ORDER),
        (found) => found?.status === 'compensated',
      );
      expect(record?.reviews).toEqual([
        expect.objectContaining({ action: 'retry', note: 'refund service restored', by: expect.any(String) }),
      ]);
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.locator('#sagas').getByText('no saga waits for a person').waitFor();

      // 4. An order id that is markup is shown as its text, in a list and in its view: no element of it.
      const hostile = page.locator('#parked').getByRole('button', { name: HOSTILE_ORDER, exact: true });
      await expect(hostile.textContent()).resolves.toBe(HOSTILE_ORDER);
      await hostile.click();
      // The view is redrawn when the order's fetch answers: wait for it rather than read the old one.
      await page.locator('[data-order-view] h3', { hasText: `Order ${HOSTILE_ORDER}` }).waitFor();
      await expect(page.locator(`[data-order-view]`).getAttribute('data-order-view')).resolves.toBe(
        HOSTILE_ORDER,
      );
      await expect(page.locator('[data-order-view] h3').first().textContent()).resolves.toBe(
        `Order ${HOSTILE_ORDER}`,
      );
      await expect(page.locator('img').count()).resolves.toBe(0);
      await expect(page.title()).resolves.not.toBe('pwned');
      // An id no order can have is listed but not offered to open: its URL would name another id.
      await expect(page.locator('#parked [data-not-an-order]').textContent()).resolves.toBe(SLASHED_ORDER);
      await expect(page.locator('#parked button', { hasText: SLASHED_ORDER }).count()).resolves.toBe(0);

      expect([...keys]).toEqual(['local-key']);
      expect(elsewhere).toEqual([]);
      expect(errors).toEqual([]);
    },
    120_000,
  );
});
