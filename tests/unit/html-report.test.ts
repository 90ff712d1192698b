/** The page of `npm start --html` (local/cli/html-report.ts), rendered from pictures made here. */
import { createHash } from 'node:crypto';
import { MAX_LANES, niceStep, renderHtml } from '../../local/cli/html-report';
import type { PictureEntry, PictureOrder, Problem, RunPicture } from '../../local/cli/run-picture';
import type { EntryAccount } from '../../local/entry-account';

function entry(
  orderId: string | null,
  sequence: number,
  outcome: PictureEntry['outcome'],
  at = 10,
): PictureEntry {
  return {
    ledgerMessageId: 'B-1',
    index: sequence - 1,
    orderId,
    transactionId: `${orderId ?? 'none'}-T${sequence}`,
    sequence,
    outcome,
    reason: outcome === 'parked' ? 'rejected' : null,
    repeats: null,
    at,
    bufferedAt: null,
    heldAs: null,
  };
}

function order(orderId: string, entries: PictureEntry[], problems: Problem[] = []): PictureOrder {
  return {
    orderId,
    status: 'submitted',
    total: 100,
    currency: 'EUR',
    appliedSequence: entries.length,
    waitingFor: null,
    entries,
    answeredDuplicates: [],
    saga: null,
    problems,
  };
}

/** The account that the orders' entries add up to. */
function accountOf(orders: readonly PictureOrder[]): EntryAccount {
  const account: EntryAccount = {
    entries: 0,
    applied: 0,
    duplicate: 0,
    parked: 0,
    buffered: 0,
    deadLettered: 0,
    droppedByDuplicateDetection: 0,
  };
  for (const { entries } of orders) {
    for (const { outcome } of entries) {
      account.entries += 1;
      if (outcome !== 'lost') account[outcome] += 1;
    }
  }
  return account;
}

function picture(orders: PictureOrder[], account: EntryAccount = accountOf(orders)): RunPicture {
  return {
    input: 'ledger.ndjson',
    durationMs: 1000,
    account,
    orders,
    unordered: [],
    parked: [],
    deadLettered: [],
    stats: {
      messages: 0,
      applied: account.applied,
      duplicates: 0,
      parked: 0,
      deadLettered: 0,
      buffered: 0,
      ledgerMessages: 1,
      ledgerMessagesParkedWhole: 0,
      redeliveries: 0,
      account,
      deadLetteredAfterOutcome: 0,
      recordConflicts: { duplicate: 0, digestMismatch: 0 },
    },
    load: [{ at: 0, orderSessions: 1, entriesWaiting: 3, ledgerWaiting: 0, sagasInFlight: 0 }],
  };
}

const attributeValues = (html: string, name: string): string[] =>
  [...html.matchAll(new RegExp(` ${name}="([^"]*)"`, 'g'))].map((match) => match[1]);

describe('the HTML report', () => {
  it('puts ids in the page as text, escaped, whatever they hold', () => {
    const hostile = `<img src=x onerror="alert(1)">'&`;
    const html = renderHtml(
      picture([
        order(hostile, [entry(hostile, 1, 'applied')]),
        order('__proto__', [entry('__proto__', 1, 'applied')]),
      ]),
    );
    expect(html).not.toContain(hostile);
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;');
    expect(attributeValues(html, 'data-lane')).toEqual([
      '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;',
      '__proto__',
    ]);
  });

  it(`draws a lane per order up to ${MAX_LANES} orders, and above lists them one row each`, () => {
    const orders = (n: number): PictureOrder[] =>
      Array.from({ length: n }, (_, i) => order(`O-${i}`, [entry(`O-${i}`, 1, 'applied')]));
    const lanes = renderHtml(picture(orders(MAX_LANES)));
    expect(attributeValues(lanes, 'data-lane')).toHaveLength(MAX_LANES);
    expect(lanes).not.toContain('id="order-table"');

    const rows = renderHtml(picture(orders(MAX_LANES + 1)));
    expect(attributeValues(rows, 'data-lane')).toHaveLength(0);
    expect(rows.match(/<tr data-order=/g)).toHaveLength(MAX_LANES + 1);
  });

  it('lists the problem orders first, most pressing first, whatever their ids', () => {
    const html = renderHtml(
      picture([
        order('A', [entry('A', 1, 'parked')], ['parked']),
        order('B', [entry('B', 1, 'buffered')], ['waiting']),
        order('C', [entry('C', 1, 'applied')]),
        order('D', [entry('D', 1, 'deadLettered')], ['dead-lettered']),
      ]),
    );
    const list = html.slice(
      html.indexOf('id="problem-list"'),
      html.indexOf('</section>', html.indexOf('id="problem-list"')),
    );
    expect(attributeValues(list, 'data-order')).toEqual(['D', 'B', 'A']);
  });

  it('says so when its entries do not add up to the account, and only then', () => {
    const orders = [order('O-1', [entry('O-1', 1, 'applied'), entry('O-1', 2, 'parked')])];
    expect(renderHtml(picture(orders))).not.toContain('id="account-mismatch"');
    const account = { ...accountOf(orders), applied: 2 };
    expect(renderHtml(picture(orders, account))).toContain('id="account-mismatch"');
  });

  it('allows its one inline script by the script hash, and asks for nothing else', () => {
    const html = renderHtml(picture([order('O-1', [entry('O-1', 1, 'applied')])]));
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]);
    expect(scripts).toHaveLength(1);
    const hash = createHash('sha256').update(scripts[0]).digest('base64');
    expect(html).toContain(`default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${hash}'`);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('cuts a time span into round steps', () => {
    expect(niceStep(1000, 10)).toBe(100);
    expect(niceStep(95_000, 60)).toBe(2000);
    expect(niceStep(434, 10)).toBe(50);
    expect(niceStep(0, 10)).toBeCloseTo(0.1);
  });
});
