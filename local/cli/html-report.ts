/**
 * `--html`: one self-contained page picturing a run (no font, image or style from the network; one
 * inline script, allowed by its hash, for the filter). It reads the same at 10 orders and at 10,000:
 * first the per-entry account with its legend, the run over time (throughput, sessions and backlog)
 * and the outcomes by reason; then the problem orders, most pressing first, each with its entries;
 * then, up to `MAX_LANES` orders, the convoy as lanes on a time axis and each saga's steps, or above
 * that one row of counts per order; then the entries that name no order, the parked and
 * dead-lettered lists and the counts. A filter by order id and by outcome narrows every order list.
 */
import { createHash } from 'node:crypto';
import type { LoadSample } from '../timeline';
import {
  ENTRY_OUTCOMES,
  PROBLEMS,
  type PictureEntry,
  type PictureOrder,
  type PictureOutcome,
  type PictureSaga,
  type Problem,
  type RunPicture,
} from './run-picture';

/** Orders drawn as lanes at most; above, one row of counts each. */
export const MAX_LANES = 100;

const ESCAPES = new Map([
  ['&', '&amp;'],
  ['<', '&lt;'],
  ['>', '&gt;'],
  ['"', '&quot;'],
  ["'", '&#39;'],
]);

export function escapeHtml(value: string | number | null | undefined): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES.get(c) ?? c);
}

/** Each outcome's meaning in the legend: the record makes an outcome the account adds fail to compile until it has one. */
const OUTCOME_MEANING: Readonly<Record<PictureOutcome, string>> = {
  applied: 'took its slot, in sequence',
  duplicate: 'a repeat of an earlier entry: no effect',
  droppedByDuplicateDetection: 'dropped with its ledger message, whose messageId an earlier one had',
  parked: 'set aside with a reason (rejected, invalid, conflicting, misrouted)',
  buffered: 'still waiting for a gap to fill',
  deadLettered: 'transient failures exhausted',
  lost: 'no outcome found: the account misses it',
};

/** Short names for the legend and the charts. */
const OUTCOME_LABEL: Readonly<Record<PictureOutcome, string>> = {
  applied: 'applied',
  duplicate: 'duplicate',
  droppedByDuplicateDetection: 'dropped',
  parked: 'parked',
  buffered: 'buffered',
  deadLettered: 'dead-lettered',
  lost: 'lost',
};

const PROBLEM_LABEL = new Map<Problem, string>([
  ['lost', 'entry lost'],
  ['dead-lettered', 'dead-lettered'],
  ['needs-attention', 'saga needs attention'],
  ['saga-unfinished', 'saga unfinished'],
  ['waiting', 'waiting on a gap'],
  ['compensated', 'saga compensated'],
  ['cancelled', 'saga cancelled'],
  ['parked', 'parked'],
]);

const SAGA_STATUSES = ['completed', 'compensated', 'needs-attention', 'running', 'compensating', 'cancelled'];

/** The page's style; the long lists below the first screen are laid out only when scrolled to (`content-visibility`), which halves the time a 10,000-order page takes to open. */
const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0 1.2em 2em;color:#222}
h1{font-size:1.3em;margin:.5em 0 .1em}h2{font-size:1.1em;margin:1.2em 0 .3em}
p{margin:.3em 0}small,.muted{color:#666}
[hidden]{display:none!important}
#orders,#parked{content-visibility:auto;contain-intrinsic-size:auto 3000px}
table{border-collapse:collapse;margin:.3em 0}td,th{border:1px solid #ddd;padding:1px 6px;text-align:left;vertical-align:top}
td.n,th.n{text-align:right}
.id{unicode-bidi:isolate;overflow-wrap:anywhere}
.badge{display:inline-block;border-radius:3px;padding:0 4px;margin:0 2px 1px 0;font-size:11px;color:#fff;background:#555}
.sw{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.3em;vertical-align:-1px}
.applied{background:#2e7d32}.duplicate{background:#90a4ae}.parked{background:#8e24aa}.parked.rejected{background:#c62828}
.droppedByDuplicateDetection{background:#cfd8dc;color:#37474f!important}.buffered{background:#d9a400}.deadLettered{background:#000}.lost{background:#e91e63}.answered{background:#fff;border:1px solid #607d8b}
.saga-completed{background:#2e7d32}.saga-compensated{background:#ef6c00}.saga-needs-attention{background:#c62828}
.saga-running,.saga-compensating{background:#1565c0}.saga-cancelled{background:#6d4c41}
.step-completed{background:#2e7d32}.step-failed{background:#c62828}.step-compensation{background:#ef6c00}.step-running{background:#1565c0}
.legend{display:flex;flex-wrap:wrap;gap:.2em 1.2em;padding:0;margin:.2em 0;list-style:none}
.bar{display:flex;height:14px;border-radius:3px;overflow:hidden;background:#eee;margin:.3em 0}
.bar span{display:block;height:100%;min-width:2px}
.charts{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:1em;margin:.4em 0}
figure{margin:0;border:1px solid #e5e5e5;border-radius:4px;padding:.3em .5em}
figcaption{font-size:.85em;color:#444}
svg{display:block;width:100%;height:auto}
svg text{font:10px system-ui,sans-serif;fill:#555}
.reasons{font-size:11px;line-height:1.3;columns:2;column-gap:1em;max-height:175px;overflow:auto}
.reasons section{break-inside:avoid}
.reasons div{display:grid;grid-template-columns:minmax(5em,9em) 1fr 3.5em;align-items:center;gap:.3em}
.reasons b{font-weight:600;display:block;margin-top:.2em}
.reasons span:first-child{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.reasons i{display:block;height:9px;border-radius:2px}
.reasons .n{text-align:right}
#filter{display:flex;flex-wrap:wrap;gap:.4em 1em;align-items:center;margin:.2em 0 .4em}
.order{border-bottom:1px solid #eee}
.order>summary{display:grid;grid-template-columns:11em 10em 15em minmax(0,1fr);gap:.5em;align-items:center;cursor:pointer;padding:1px 0}
#order-table td:nth-child(n+3):nth-child(-n+7),#order-table th:nth-child(n+3):nth-child(-n+7){text-align:right}
#order-table td:first-child,.entries td:nth-child(2),.entries td:nth-child(6){unicode-bidi:isolate;overflow-wrap:anywhere}
.entries td:nth-child(1),.entries td:nth-child(5){text-align:right}
.badge.dead-lettered,.badge.lost,.badge.needs-attention{background:#c62828}.badge.waiting{background:#b38600}
.badge.compensated{background:#ef6c00}.badge.parked{background:#8e24aa}.badge.saga-unfinished{background:#1565c0}
.chip{display:inline-block;min-width:14px;height:15px;padding:0 2px;margin:0 1px 1px 0;border-radius:3px;font-size:10px;line-height:15px;text-align:center;color:#fff}
.chip.answered{color:#607d8b}
.detail{margin:.2em 0 .6em 1.5em}
.axis,.lane,.saga>summary{display:grid;grid-template-columns:13em 1fr 9em;align-items:center}
.lane,.saga>summary{border-bottom:1px solid #f0f0f0;min-height:20px}
.saga>summary{cursor:pointer;list-style:none}
.label{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;unicode-bidi:isolate;padding-right:.5em}
.track{position:relative;height:18px;background:#fafafa}
.axis .track{height:16px;background:none;border-bottom:1px solid #999}
.tick{position:absolute;bottom:0;height:5px;border-left:1px solid #999;font-size:10px;color:#555}
.tick span{position:absolute;bottom:5px;left:-2em;width:4em;text-align:center}
.track .chip{position:absolute;top:1px;transform:translateX(-50%)}
.wait{position:absolute;top:8px;height:2px;background:#d9a400}
.op{position:absolute;top:3px;height:12px;min-width:3px;border-radius:2px;opacity:.85}
.untimed .chip{position:static}
`;

// ---------------------------------------------------------------------------------------------
// Numbers, times and the time axis

const count = (value: number): string => value.toLocaleString('en-US');

function seconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

/** A step of 1, 2 or 5 times a power of ten that cuts `span` into at most `most` parts. */
export function niceStep(span: number, most: number): number {
  const rough = Math.max(span, 1) / Math.max(most, 1);
  const power = 10 ** Math.floor(Math.log10(rough));
  return ([1, 2, 5, 10].find((factor) => factor * power >= rough) ?? 10) * power;
}

function tickLabel(ms: number, step: number): string {
  if (step < 1000) return `${+(ms / 1000).toFixed(3)} s`;
  if (step < 60_000) return `${+(ms / 1000).toFixed(1)} s`;
  return `${+(ms / 60_000).toFixed(1)} min`;
}

function ticks(durationMs: number, most: number): number[] {
  const step = niceStep(durationMs, most);
  const list: number[] = [];
  for (let at = 0; at <= durationMs + 1e-9; at += step) list.push(at);
  return list;
}

function percent(at: number, durationMs: number): string {
  const ratio = durationMs <= 0 ? 0 : Math.min(1, Math.max(0, at / durationMs));
  return `${(ratio * 100).toFixed(2)}%`;
}

function timeAxis(durationMs: number): string {
  const step = niceStep(durationMs, 10);
  const marks = ticks(durationMs, 10)
    .map(
      (at) =>
        `<span class="tick" style="left:${percent(at, durationMs)}"><span>${tickLabel(at, step)}</span></span>`,
    )
    .join('');
  return `<div class="axis" aria-label="time axis"><div class="label muted">time since start</div><div class="track">${marks}</div><div class="label muted">no time</div></div>`;
}

// ---------------------------------------------------------------------------------------------
// Charts: inline SVG, one viewBox each

const CHART = { width: 360, height: 130, left: 34, right: 8, top: 8, bottom: 18 } as const;
const plotWidth = CHART.width - CHART.left - CHART.right;

function xAxis(durationMs: number, bottom: number): string {
  const step = niceStep(durationMs, 5);
  return ticks(durationMs, 5)
    .map((at) => {
      const x = CHART.left + (durationMs <= 0 ? 0 : (at / durationMs) * plotWidth);
      return `<line x1="${x.toFixed(1)}" y1="${bottom}" x2="${x.toFixed(1)}" y2="${bottom + 3}" stroke="#999"/><text x="${x.toFixed(1)}" y="${bottom + 13}" text-anchor="middle">${tickLabel(at, step)}</text>`;
    })
    .join('');
}

function yLabel(value: number, y: number): string {
  return `<text x="${CHART.left - 3}" y="${y + 3}" text-anchor="end">${count(value)}</text>`;
}

const THROUGHPUT_OUTCOMES: readonly PictureOutcome[] = ['applied', 'parked', 'buffered', 'duplicate'];
const COLORS = new Map<string, string>([
  ['applied', '#2e7d32'],
  ['parked', '#8e24aa'],
  ['buffered', '#d9a400'],
  ['duplicate', '#90a4ae'],
  ['sessions', '#1565c0'],
  ['entriesWaiting', '#ef6c00'],
  ['ledgerWaiting', '#6d4c41'],
]);

/** Entries meeting their outcome per time bucket, stacked by outcome; redeliveries answered as duplicates count as duplicate. */
function throughputChart(picture: RunPicture): string {
  // Buckets of a round width, some 60 of them over the run.
  const width = niceStep(picture.durationMs, 60);
  const buckets = Math.max(1, Math.ceil(Math.max(picture.durationMs, 1) / width));
  const stacks = THROUGHPUT_OUTCOMES.map(() => new Array<number>(buckets).fill(0));
  const add = (outcome: PictureOutcome, at: number | null): void => {
    const row = THROUGHPUT_OUTCOMES.indexOf(outcome);
    if (row < 0 || at === null) return;
    stacks[row][Math.min(buckets - 1, Math.floor(at / width))] += 1;
  };
  let untimed = 0;
  for (const entry of allEntries(picture)) {
    if (entry.at === null) untimed += 1;
    add(entry.outcome, entry.at);
  }
  for (const order of picture.orders)
    for (const answer of order.answeredDuplicates) add('duplicate', answer.at);
  const totals = Array.from({ length: buckets }, (_, b) => stacks.reduce((sum, row) => sum + row[b], 0));
  const most = Math.max(1, ...totals);
  const bottom = CHART.height - CHART.bottom;
  const plotHeight = bottom - CHART.top;
  const scale = plotWidth / Math.max(picture.durationMs, width);
  const bars: string[] = [];
  for (let b = 0; b < buckets; b++) {
    let y = bottom;
    THROUGHPUT_OUTCOMES.forEach((outcome, row) => {
      const value = stacks[row][b];
      if (value === 0) return;
      const h = (value / most) * plotHeight;
      y -= h;
      bars.push(
        `<rect x="${(CHART.left + b * width * scale).toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(Math.min(width, picture.durationMs - b * width) * scale - 0.5, 0.5).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLORS.get(outcome)}"><title>${outcome} ${value}</title></rect>`,
      );
    });
  }
  const perSecond = (most * 1000) / width;
  return (
    `<figure id="throughput" data-buckets="${buckets}"><figcaption>Throughput: entries meeting their outcome per ${seconds(width)} (most ${count(most)}, about ${count(Math.round(perSecond))}/s)${untimed > 0 ? `; ${count(untimed)} without a time are not drawn` : ''}</figcaption>` +
    `<svg viewBox="0 0 ${CHART.width} ${CHART.height}" role="img" aria-label="throughput over time">` +
    `<line x1="${CHART.left}" y1="${bottom}" x2="${CHART.width - CHART.right}" y2="${bottom}" stroke="#999"/>` +
    yLabel(most, CHART.top) +
    yLabel(0, bottom) +
    bars.join('') +
    xAxis(picture.durationMs, bottom) +
    '</svg></figure>'
  );
}

function polyline(
  samples: readonly LoadSample[],
  value: (sample: LoadSample) => number,
  most: number,
  durationMs: number,
  top: number,
  bottom: number,
  color: string,
): string {
  if (samples.length === 0) return '';
  const points = samples
    .map((sample) => {
      const x = CHART.left + (durationMs <= 0 ? 0 : Math.min(1, sample.at / durationMs) * plotWidth);
      const y = bottom - (value(sample) / Math.max(most, 1)) * (bottom - top);
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(' ');
  return `<polyline points="${points}" fill="none" stroke="${color}" stroke-width="1.5"/>`;
}

/** Order sessions held over time above, messages waiting (order-transactions and ledger) below. */
function loadChart(picture: RunPicture): string {
  const samples = picture.load;
  const mostSessions = Math.max(0, ...samples.map((s) => s.orderSessions));
  const mostWaiting = Math.max(0, ...samples.map((s) => Math.max(s.entriesWaiting, s.ledgerWaiting)));
  const mostSagas = Math.max(0, ...samples.map((s) => s.sagasInFlight));
  const bottom = CHART.height - CHART.bottom;
  const middle = CHART.top + (bottom - CHART.top) / 2;
  const upperBottom = middle - 6;
  const lowerTop = middle + 6;
  const d = picture.durationMs;
  return (
    `<figure id="load" data-samples="${samples.length}"><figcaption>Order sessions in use (<span class="sw" style="background:${COLORS.get('sessions')}"></span>most ${count(mostSessions)}) and backlog: entries waiting on order-transactions (<span class="sw" style="background:${COLORS.get('entriesWaiting')}"></span>most ${count(mostWaiting)}), ledger messages (<span class="sw" style="background:${COLORS.get('ledgerWaiting')}"></span>); sagas in flight at most ${count(mostSagas)}</figcaption>` +
    `<svg viewBox="0 0 ${CHART.width} ${CHART.height}" role="img" aria-label="sessions in use and backlog over time">` +
    `<line x1="${CHART.left}" y1="${upperBottom}" x2="${CHART.width - CHART.right}" y2="${upperBottom}" stroke="#ccc"/>` +
    `<line x1="${CHART.left}" y1="${bottom}" x2="${CHART.width - CHART.right}" y2="${bottom}" stroke="#999"/>` +
    yLabel(mostSessions, CHART.top) +
    yLabel(mostWaiting, lowerTop) +
    yLabel(0, bottom) +
    polyline(
      samples,
      (s) => s.orderSessions,
      mostSessions,
      d,
      CHART.top,
      upperBottom,
      COLORS.get('sessions')!,
    ) +
    polyline(
      samples,
      (s) => s.entriesWaiting,
      mostWaiting,
      d,
      lowerTop,
      bottom,
      COLORS.get('entriesWaiting')!,
    ) +
    polyline(
      samples,
      (s) => s.ledgerWaiting,
      mostWaiting,
      d,
      lowerTop,
      bottom,
      COLORS.get('ledgerWaiting')!,
    ) +
    xAxis(d, bottom) +
    (samples.length === 0
      ? `<text x="${CHART.width / 2}" y="${middle}" text-anchor="middle">no samples</text>`
      : '') +
    '</svg></figure>'
  );
}

function tally<K>(keys: Iterable<K>): Map<K, number> {
  const counts = new Map<K, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

/** Rows of a group, each with a bar scaled to the group's largest. */
function reasonGroup(title: string, rows: ReadonlyArray<[string, number, string]>): string {
  if (rows.length === 0) return '';
  const most = Math.max(1, ...rows.map(([, n]) => n));
  return (
    `<section><b>${escapeHtml(title)}</b>` +
    rows
      .map(
        ([name, n, swatch]) =>
          `<div data-reason="${escapeHtml(`${title}: ${name}`)}"><span title="${escapeHtml(name)}">${escapeHtml(name)}</span><i class="${swatch}" style="width:${((n / most) * 100).toFixed(1)}%"></i><span class="n">${count(n)}</span></div>`,
      )
      .join('') +
    '</section>'
  );
}

function reasonsPanel(picture: RunPicture): string {
  const entries = [...allEntries(picture)];
  const byOutcome = tally(entries.map((entry) => entry.outcome));
  const of = (outcome: PictureOutcome): PictureEntry[] =>
    entries.filter((entry) => entry.outcome === outcome);
  const rowsOf = (outcome: PictureOutcome, swatch: string): Array<[string, number, string]> =>
    [...tally(of(outcome).map((entry) => entry.reason ?? 'unknown'))]
      .sort((a, b) => b[1] - a[1])
      .map(([reason, n]) => [reason, n, swatch]);
  const sagas = tally(picture.orders.flatMap((order) => (order.saga === null ? [] : [order.saga.status])));
  // A saga's reason names the step, then the order's particulars: grouped by the step.
  const sagaReasons = tally(
    picture.orders.flatMap((order) =>
      order.saga === null || order.saga.status === 'completed' || order.saga.reason === null
        ? []
        : [order.saga.reason.split(':')[0]],
    ),
  );
  const answered = picture.orders.reduce((sum, order) => sum + order.answeredDuplicates.length, 0);
  return (
    '<figure id="reasons"><figcaption>Outcomes by reason</figcaption><div class="reasons">' +
    reasonGroup(
      'entries',
      [...ENTRY_OUTCOMES, 'lost' as const]
        .filter((outcome) => (byOutcome.get(outcome) ?? 0) > 0)
        .map((outcome) => [OUTCOME_LABEL[outcome], byOutcome.get(outcome) ?? 0, outcome]),
    ) +
    reasonGroup('parked', rowsOf('parked', 'parked')) +
    reasonGroup('duplicate', rowsOf('duplicate', 'duplicate')) +
    reasonGroup('dead-lettered', rowsOf('deadLettered', 'deadLettered')) +
    reasonGroup(
      'buffered',
      of('buffered').length > 0 ? [['waiting for a gap', of('buffered').length, 'buffered']] : [],
    ) +
    reasonGroup(
      'redeliveries',
      answered > 0 ? [['answered duplicate by the consumer (409)', answered, 'answered']] : [],
    ) +
    reasonGroup(
      'ledger messages',
      picture.stats.ledgerMessagesParkedWhole > 0
        ? [['parked whole', picture.stats.ledgerMessagesParkedWhole, 'parked']]
        : [],
    ) +
    reasonGroup(
      'sagas',
      [...sagas].sort((a, b) => b[1] - a[1]).map(([status, n]) => [status, n, `saga-${status}`]),
    ) +
    reasonGroup(
      'sagas not completed',
      [...sagaReasons].sort((a, b) => b[1] - a[1]).map(([reason, n]) => [reason, n, 'saga-compensated']),
    ) +
    '</div></figure>'
  );
}

function* allEntries(picture: RunPicture): Generator<PictureEntry> {
  for (const order of picture.orders) yield* order.entries;
  yield* picture.unordered;
}

// ---------------------------------------------------------------------------------------------
// The account and the legends

function accountSection(picture: RunPicture): string {
  const onPage = tally([...allEntries(picture)].map((entry) => entry.outcome));
  const account = picture.account;
  const rows = [...ENTRY_OUTCOMES, ...(onPage.has('lost') ? ['lost' as const] : [])];
  const total = Math.max(1, account.entries);
  const segments = ENTRY_OUTCOMES.map(
    (outcome) =>
      `<span class="${outcome}" style="width:${((account[outcome] / total) * 100).toFixed(2)}%" title="${outcome}: ${count(account[outcome])}"></span>`,
  ).join('');
  const legend = rows
    .map(
      (outcome) =>
        `<li data-outcome-legend="${outcome}"><span class="sw ${outcome}"></span><b>${OUTCOME_LABEL[outcome]}</b> <span data-count="${outcome}">${count(outcome === 'lost' ? (onPage.get('lost') ?? 0) : account[outcome])}</span> <small>${escapeHtml(OUTCOME_MEANING[outcome])}</small></li>`,
    )
    .join('');
  const agrees = ENTRY_OUTCOMES.every((outcome) => (onPage.get(outcome) ?? 0) === account[outcome]);
  return (
    `<div id="entry-account" data-entries="${account.entries}"><b>${count(account.entries)} entries</b>, each in one outcome (the report's account):` +
    `<div class="bar">${segments}</div><ul class="legend" id="outcome-legend">${legend}</ul>` +
    (agrees
      ? ''
      : `<p id="account-mismatch"><b>The entries on this page do not add up to the report's account:</b> ${ENTRY_OUTCOMES.map((o) => `${o} ${onPage.get(o) ?? 0} here, ${account[o]} there`).join('; ')}</p>`) +
    '</div>'
  );
}

function sagaLegend(): string {
  const steps: Array<[string, string]> = [
    ['step-completed', 'step completed'],
    ['step-failed', 'step failed'],
    ['step-compensation', 'compensation'],
    ['step-running', 'running or retrying'],
  ];
  return (
    '<ul class="legend" id="saga-legend"><li><b>sagas</b></li>' +
    steps.map(([css, name]) => `<li><span class="sw ${css}"></span>${name}</li>`).join('') +
    SAGA_STATUSES.map((status) => `<li><span class="sw saga-${status}"></span>${status}</li>`).join('') +
    '</ul>'
  );
}

// ---------------------------------------------------------------------------------------------
// Orders

function outcomesOf(order: PictureOrder): string {
  return [...new Set(order.entries.map((entry) => entry.outcome))].join(' ');
}

/** What the filter reads: the order's id, its entries' outcomes, its problems and its saga's status. */
function filterAttributes(order: PictureOrder): string {
  return (
    ` data-order="${escapeHtml(order.orderId)}" data-outcomes="${outcomesOf(order)}"` +
    (order.problems.length === 0 ? '' : ` data-problems="${order.problems.join(' ')}"`) +
    (order.saga === null ? '' : ` data-saga="${escapeHtml(order.saga.status)}"`)
  );
}

function entryTitle(entry: PictureEntry): string {
  return [
    entry.sequence === null ? 'sequence ?' : `sequence ${entry.sequence}`,
    entry.transactionId ?? '',
    entry.outcome,
    entry.reason ?? '',
    entry.repeats === null ? '' : `of ${entry.repeats}`,
    entry.at === null ? 'no time' : `at ${seconds(entry.at)}`,
    `from ${entry.ledgerMessageId} entries[${entry.index}]`,
  ]
    .filter((part) => part !== '')
    .join(', ');
}

function chipClass(entry: PictureEntry): string {
  return entry.reason === 'rejected' ? `${entry.outcome} rejected` : entry.outcome;
}

/** An entry as a chip on a lane: its outcome, sequence and, on hover, the rest. */
function chip(entry: PictureEntry, style = ''): string {
  return (
    `<span class="chip ${chipClass(entry)}" data-outcome="${entry.outcome}" data-sequence="${entry.sequence ?? ''}"` +
    `${style === '' ? '' : ` style="${style}"`} title="${escapeHtml(entryTitle(entry))}">${escapeHtml(entry.sequence ?? '?')}</span>`
  );
}

/** An entry as a small chip in a problem order's line; its details are in the order's table. */
function smallChip(entry: PictureEntry): string {
  return `<i class="chip ${chipClass(entry)}">${escapeHtml(entry.sequence ?? '?')}</i>`;
}

function entriesTable(entries: readonly PictureEntry[]): string {
  if (entries.length === 0) return '<p class="muted">no entries</p>';
  return (
    '<table class="entries"><tr><th>seq</th><th>transactionId</th><th>outcome</th><th>reason</th><th>time</th><th>from</th></tr>' +
    entries
      .map(
        (entry) =>
          `<tr data-entry data-outcome="${entry.outcome}"><td>${escapeHtml(entry.sequence)}</td><td>${escapeHtml(entry.transactionId)}</td>` +
          `<td><i class="sw ${chipClass(entry)}"></i>${entry.outcome}</td><td>${escapeHtml(entry.reason)}${entry.repeats === null ? '' : ` of ${escapeHtml(entry.repeats)}`}</td>` +
          `<td>${entry.at === null ? '' : seconds(entry.at)}</td><td>${escapeHtml(entry.ledgerMessageId)} entries[${entry.index}]</td></tr>`,
      )
      .join('') +
    '</table>'
  );
}

function sagaDetail(saga: PictureSaga): string {
  const steps = saga.operations
    .map(
      (op) =>
        `<tr data-operation="${escapeHtml(op.name)}"><td>${op.kind}</td><td>${escapeHtml(op.name)}</td><td>${escapeHtml(op.status)}</td>` +
        `<td class="n">${op.attempts}</td><td>${op.start === null ? '' : seconds(op.start)}–${op.end === null ? '' : seconds(op.end)}</td><td>${escapeHtml(op.error)}</td></tr>`,
    )
    .join('');
  const transitions = saga.transitions
    .map(
      (t) =>
        `<li>${t.at === null ? '' : seconds(t.at)}: ${escapeHtml(t.status)}${t.reason === null ? '' : ` (${escapeHtml(t.reason)})`}</li>`,
    )
    .join('');
  return (
    `<p>saga <span class="saga-outcome">${escapeHtml(saga.status)}</span>${saga.reason === null ? '' : ` — <span class="saga-reason">${escapeHtml(saga.reason)}</span>`}</p>` +
    `<table><tr><th>kind</th><th>operation</th><th>status</th><th>attempts</th><th>time</th><th>error</th></tr>${steps}</table><ol>${transitions}</ol>`
  );
}

function statusOf(order: PictureOrder): string {
  return order.status ?? 'no order';
}

/** A problem order: one line (id, status, problems, its entries as chips, saga), its detail on opening. */
function problemOrder(order: PictureOrder): string {
  const answered = order.answeredDuplicates.length;
  const saga = order.saga;
  return (
    `<details class="order problem"${filterAttributes(order)}><summary>` +
    `<span class="label" title="${escapeHtml(order.orderId)}">${escapeHtml(order.orderId)}</span>` +
    `<span>${escapeHtml(statusOf(order))}${order.waitingFor === null ? '' : `, waits for ${order.waitingFor}`}</span>` +
    `<span>${order.problems.map((p) => `<span class="badge ${p}">${escapeHtml(PROBLEM_LABEL.get(p))}</span>`).join('')}</span>` +
    `<span class="label">${order.entries.map(smallChip).join('')}` +
    `${answered === 0 ? '' : ` <small>${answered} redelivered, answered duplicate</small>`}` +
    `${saga === null ? '' : ` <span class="badge saga-${escapeHtml(saga.status)}">saga ${escapeHtml(saga.status)}</span>${saga.reason === null ? '' : ` <small>${escapeHtml(saga.reason)}</small>`}`}</span>` +
    `</summary><div class="detail">${entriesTable(order.entries)}${saga === null ? '' : sagaDetail(saga)}</div></details>`
  );
}

function problemsSection(picture: RunPicture): string {
  const rank = (order: PictureOrder): number => PROBLEMS.indexOf(order.problems[0]);
  const problems = picture.orders
    .filter((order) => order.problems.length > 0)
    .sort((a, b) => rank(a) - rank(b));
  return (
    `<section id="problems" data-count="${problems.length}"><h2>Problem orders: ${count(problems.length)} of ${count(picture.orders.length)}</h2>` +
    '<p class="muted">Most pressing first: entries lost or dead-lettered, sagas needing a person or unfinished, orders waiting on a gap, sagas compensated, entries parked. Open one for its entries and saga.</p>' +
    (problems.length === 0
      ? '<p>none</p>'
      : `<div id="problem-list">${problems.map(problemOrder).join('\n')}</div>`) +
    '</section>'
  );
}

function filterForm(picture: RunPicture): string {
  const options: Array<[string, string]> = [
    ['', 'any outcome'],
    ['problems:', 'any problem'],
    ...ENTRY_OUTCOMES.map((o): [string, string] => [`outcomes:${o}`, `an entry ${o}`]),
    ...PROBLEMS.map((p): [string, string] => [`problems:${p}`, PROBLEM_LABEL.get(p) ?? p]),
    ...SAGA_STATUSES.map((s): [string, string] => [`saga:${s}`, `saga ${s}`]),
  ];
  return (
    '<form id="filter" role="search"><label>order id <input type="search" id="filter-id" placeholder="part of an id" autocomplete="off"></label>' +
    `<label>outcome <select id="filter-outcome">${options.map(([value, label]) => `<option value="${escapeHtml(value)}">${escapeHtml(label)}</option>`).join('')}</select></label>` +
    `<output id="filter-count">${count(picture.orders.length)} orders</output></form>`
  );
}

function lane(order: PictureOrder, durationMs: number): string {
  const timed = order.entries.filter((entry) => entry.at !== null);
  const untimed = order.entries.filter((entry) => entry.at === null);
  const marks = timed
    .map((entry) => {
      const wait =
        entry.bufferedAt === null
          ? ''
          : `<span class="wait" style="left:${percent(entry.bufferedAt, durationMs)};width:calc(${percent(entry.at!, durationMs)} - ${percent(entry.bufferedAt, durationMs)})"></span>`;
      return wait + chip(entry, `left:${percent(entry.at!, durationMs)}`);
    })
    .join('');
  const answered = order.answeredDuplicates
    .map(
      (answer) =>
        `<span class="chip answered" data-redelivery style="left:${percent(answer.at, durationMs)}" title="${escapeHtml(`sequence ${answer.sequence ?? '?'} redelivered, answered duplicate at ${seconds(answer.at)}`)}">${escapeHtml(answer.sequence ?? '?')}</span>`,
    )
    .join('');
  return (
    `<div class="lane"${filterAttributes(order)} data-lane="${escapeHtml(order.orderId)}" data-status="${escapeHtml(statusOf(order))}">` +
    `<div class="label" title="${escapeHtml(order.orderId)}">${escapeHtml(order.orderId)} <small>${escapeHtml(statusOf(order))}</small></div>` +
    `<div class="track">${marks}${answered}</div><div class="untimed">${untimed.map((entry) => chip(entry)).join('')}</div></div>`
  );
}

function sagaRow(order: PictureOrder, durationMs: number): string {
  const saga = order.saga;
  if (saga === null) return '';
  const bars = saga.operations
    .map((op) => {
      const start = op.start ?? 0;
      const end = op.end ?? durationMs;
      const css =
        op.kind === 'compensation'
          ? 'step-compensation'
          : op.status === 'completed'
            ? 'step-completed'
            : op.status === 'failed'
              ? 'step-failed'
              : 'step-running';
      return (
        `<span class="op ${css}" style="left:${percent(start, durationMs)};width:calc(${percent(end, durationMs)} - ${percent(start, durationMs)})"` +
        ` title="${escapeHtml(`${op.name}: ${op.status}, ${op.attempts} attempt(s)${op.error === null ? '' : `, ${op.error}`}`)}"></span>`
      );
    })
    .join('');
  return (
    `<details class="saga"${filterAttributes(order)} data-saga-of="${escapeHtml(order.orderId)}" data-status="${escapeHtml(saga.status)}">` +
    `<summary><span class="label" title="${escapeHtml(order.orderId)}">${escapeHtml(order.orderId)} <span class="badge saga-${escapeHtml(saga.status)}">${escapeHtml(saga.status)}</span></span>` +
    `<span class="track">${bars}</span><span class="muted">steps ▸</span></summary>` +
    `<div class="detail">${sagaDetail(saga)}</div></details>`
  );
}

function lanesSection(picture: RunPicture): string {
  return (
    '<section id="convoy"><h2>The convoy: one lane per order</h2>' +
    '<p class="muted">Each chip is an entry, labelled with its sequence number, placed when it met its outcome: within a lane the chips run in sequence order (FIFO per order); lanes side by side show orders in parallel. A yellow line is the time an entry waited in the buffer; a white chip a redelivery the consumer answered as a duplicate. Entries no handler saw (a repeat the broker dropped, a dead letter) sit at the right, without a time.</p>' +
    timeAxis(picture.durationMs) +
    `<div id="lanes">${picture.orders.map((order) => lane(order, picture.durationMs)).join('\n')}</div>` +
    '<h2>Sagas: steps and compensations over time</h2>' +
    timeAxis(picture.durationMs) +
    `<div id="sagas">${picture.orders.map((order) => sagaRow(order, picture.durationMs)).join('\n')}</div></section>`
  );
}

/** Above `MAX_LANES`: the orders without a problem, one row of counts each (problem orders are listed above). */
function ordersTable(picture: RunPicture): string {
  const others = picture.orders.filter((order) => order.problems.length === 0);
  const header = [
    '<th>order</th><th>status</th>',
    ...ENTRY_OUTCOMES.map((o) => `<th data-outcome="${o}" title="${o}">${OUTCOME_LABEL[o]}</th>`),
    '<th>saga</th>',
  ].join('');
  // A row of a few bytes per order: at 10,000 orders this table is most of the page.
  const rows = others.map((order) => {
    const counts = tally(order.entries.map((entry) => entry.outcome));
    return (
      `<tr${filterAttributes(order)}><td>${escapeHtml(order.orderId)}</td><td>${escapeHtml(statusOf(order))}</td>` +
      ENTRY_OUTCOMES.map((o) => `<td>${counts.get(o) ?? ''}</td>`).join('') +
      `<td>${escapeHtml(order.saga?.status ?? '')}</td></tr>`
    );
  });
  return (
    `<section id="orders" data-count="${others.length}"><h2>The other orders: ${count(others.length)}, their entries counted by outcome</h2>` +
    `<table id="order-table"><tr>${header}</tr>${rows.join('\n')}</table></section>`
  );
}

function unorderedSection(picture: RunPicture): string {
  if (picture.unordered.length === 0) return '';
  return (
    `<section id="unordered" data-count="${picture.unordered.length}"><h2>Entries that name no order: ${count(picture.unordered.length)}</h2>` +
    entriesTable(picture.unordered) +
    '</section>'
  );
}

// ---------------------------------------------------------------------------------------------
// Lists and counts

function table(
  id: string,
  header: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number | null>>,
): string {
  if (rows.length === 0) return `<p id="${id}" data-rows="0">none</p>`;
  return (
    `<table id="${id}" data-rows="${rows.length}"><tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>` +
    rows.map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`).join('') +
    '</table>'
  );
}

function countsTable(id: string, counts: object): string {
  const rows = Object.entries(counts).filter(([, value]) => typeof value === 'number');
  return (
    `<table id="${id}">` +
    rows
      .map(
        ([name, value]) =>
          `<tr><th>${escapeHtml(name)}</th><td class="n" data-count="${escapeHtml(name)}">${escapeHtml(value as number)}</td></tr>`,
      )
      .join('') +
    '</table>'
  );
}

// ---------------------------------------------------------------------------------------------
// The filter: hides the order rows, problem orders and lanes that do not match

const FILTER_SCRIPT = `(() => {
  const id = document.getElementById('filter-id');
  const outcome = document.getElementById('filter-outcome');
  const shown = document.getElementById('filter-count');
  const rows = Array.from(document.querySelectorAll('[data-order]'));
  const apply = () => {
    const text = id.value.trim().toLowerCase();
    const [field, value] = outcome.value.split(':');
    const orders = new Set();
    for (const row of rows) {
      const values = field ? (row.getAttribute('data-' + field) || '').split(' ').filter(Boolean) : [];
      const match =
        (text === '' || row.getAttribute('data-order').toLowerCase().includes(text)) &&
        (!field || (value ? values.includes(value) : values.length > 0));
      row.hidden = !match;
      if (match) orders.add(row.getAttribute('data-order'));
    }
    shown.textContent = orders.size + (orders.size === 1 ? ' order' : ' orders');
  };
  id.addEventListener('input', apply);
  outcome.addEventListener('change', apply);
})();`;

const SCRIPT_HASH = createHash('sha256').update(FILTER_SCRIPT).digest('base64');

export function renderHtml(picture: RunPicture): string {
  const problems = picture.orders.filter((order) => order.problems.length > 0).length;
  const asLanes = picture.orders.length <= MAX_LANES;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${SCRIPT_HASH}'">
<title>Run of ${escapeHtml(picture.input)}</title><style>${STYLE}</style></head>
<body>
<h1>Run of <span class="id">${escapeHtml(picture.input)}</span></h1>
<p id="summary">${count(picture.orders.length)} orders, ${count(problems)} with a problem; ${count(picture.account.entries)} entries in ${count(picture.stats.ledgerMessages)} ledger messages; ${count(picture.parked.length)} parked and ${count(picture.deadLettered.length)} dead-lettered messages; ${seconds(picture.durationMs)} from the first message to the end.</p>
<section id="overview">
${accountSection(picture)}
${sagaLegend()}
<div class="charts">${throughputChart(picture)}${loadChart(picture)}${reasonsPanel(picture)}</div>
</section>
${filterForm(picture)}
${problemsSection(picture)}
${asLanes ? lanesSection(picture) : ordersTable(picture)}
${unorderedSection(picture)}
<h2>Parked messages</h2>
${table(
  'parked',
  ['queue', 'messageId', 'sessionId', 'transactionId', 'reason', 'description'],
  picture.parked.map((p) => [p.queue, p.messageId, p.sessionId, p.transactionId, p.reason, p.description]),
)}
<h2>Dead-lettered messages</h2>
${table(
  'dead-lettered',
  ['queue', 'messageId', 'sessionId', 'reason', 'description', 'deliveries'],
  picture.deadLettered.map((d) => [
    d.queue,
    d.messageId,
    d.sessionId,
    d.reason,
    d.description,
    d.deliveryCount,
  ]),
)}
<h2>Per-entry account</h2>
${countsTable('account', picture.account)}
<h2>Counts</h2>
${countsTable('stats', picture.stats)}
<script>${FILTER_SCRIPT}</script>
</body></html>
`;
}
