/**
 * `--html`: one self-contained page picturing a run (no script, font, image or style from the
 * network). The convoy as lanes, one per order, each entry a mark at the time it met its outcome,
 * labelled with its sequence number; each saga's steps and compensations on the same time axis;
 * the parked and dead-lettered messages; the counts and the per-entry account.
 */
import type { EntryOutcome, PictureOrder, RunPicture } from './run-picture';

/** Lanes drawn at most; the JSON report holds every order. */
export const MAX_LANES = 500;

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

const OUTCOME_LEGEND: ReadonlyArray<[EntryOutcome, string]> = [
  ['applied', 'applied: took its slot, in sequence'],
  ['duplicate', 'duplicate: a repeat, no effect'],
  ['buffered', 'buffered: waiting for a gap to fill'],
  ['rejected', 'rejected: took its slot, broke a business rule (parked)'],
  ['parked', 'parked: misrouted, conflicting or invalid'],
  ['dead-lettered', 'dead-lettered: transient failures exhausted'],
];

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}
.lane,.saga-row{display:grid;grid-template-columns:14em 1fr;align-items:center;border-bottom:1px solid #eee;min-height:22px}
.label{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;unicode-bidi:isolate;padding-right:.5em}
.track{position:relative;height:20px;background:#fafafa}
.mark{position:absolute;top:2px;min-width:14px;height:16px;border-radius:3px;font-size:10px;line-height:16px;text-align:center;color:#fff;transform:translateX(-50%)}
.wait{position:absolute;top:9px;height:2px;background:#d9a400}
.applied{background:#2e7d32}.duplicate{background:#78909c}.buffered{background:#d9a400}
.rejected{background:#c62828}.parked{background:#8e24aa}.dead-lettered{background:#000}
.op{position:absolute;top:3px;height:14px;min-width:3px;border-radius:2px;opacity:.85}
.op.step.completed{background:#2e7d32}.op.step.failed{background:#c62828}.op.compensation{background:#ef6c00}
.op.running,.op.retrying{background:#1565c0}
.legend span.mark{position:static;display:inline-block;transform:none;margin-right:.3em}
.legend li{list-style:none;margin:.2em 0}
details{margin:.3em 0}
`;

function percent(at: number | null, durationMs: number): string {
  const ratio = at === null || durationMs <= 0 ? 1 : Math.min(1, Math.max(0, at / durationMs));
  return `${(ratio * 100).toFixed(2)}%`;
}

function laneOf(order: PictureOrder, durationMs: number): string {
  const marks = order.entries
    .map((entry) => {
      const title = [
        entry.sequence === null ? 'sequence ?' : `sequence ${entry.sequence}`,
        entry.transactionId ?? '',
        entry.outcome,
        entry.reason ?? '',
        entry.at === null ? '' : `at ${entry.at} ms`,
      ]
        .filter((part) => part !== '')
        .join(', ');
      const wait =
        entry.bufferedAt === null || entry.at === null
          ? ''
          : `<span class="wait" style="left:${percent(entry.bufferedAt, durationMs)};width:calc(${percent(entry.at, durationMs)} - ${percent(entry.bufferedAt, durationMs)})"></span>`;
      return (
        `${wait}<span class="mark ${entry.outcome}" data-outcome="${entry.outcome}" data-sequence="${entry.sequence ?? ''}"` +
        ` style="left:${percent(entry.at, durationMs)}" title="${escapeHtml(title)}">${entry.sequence ?? '?'}</span>`
      );
    })
    .join('');
  return (
    `<div class="lane" data-lane="${escapeHtml(order.orderId)}" data-status="${escapeHtml(order.status)}">` +
    `<div class="label" title="${escapeHtml(order.orderId)}">${escapeHtml(order.orderId)} <small>${escapeHtml(order.status)}</small></div>` +
    `<div class="track">${marks}</div></div>`
  );
}

function sagaOf(order: PictureOrder, durationMs: number): string {
  const saga = order.saga;
  if (saga === null) return '';
  const bars = saga.operations
    .map((op) => {
      const start = op.start ?? 0;
      const end = op.end ?? durationMs;
      return (
        `<span class="op ${op.kind} ${escapeHtml(op.status)}" style="left:${percent(start, durationMs)};width:calc(${percent(end, durationMs)} - ${percent(start, durationMs)})"` +
        ` title="${escapeHtml(`${op.name}: ${op.status}, ${op.attempts} attempt(s)${op.error === null ? '' : `, ${op.error}`}`)}"></span>`
      );
    })
    .join('');
  const steps = saga.operations
    .map(
      (op) =>
        `<tr data-operation="${escapeHtml(op.name)}"><td>${op.kind}</td><td>${escapeHtml(op.name)}</td><td>${escapeHtml(op.status)}</td>` +
        `<td>${op.attempts}</td><td>${escapeHtml(op.start)}–${escapeHtml(op.end)} ms</td><td>${escapeHtml(op.error)}</td></tr>`,
    )
    .join('');
  const transitions = saga.transitions
    .map(
      (t) =>
        `<li>${escapeHtml(t.at)} ms: ${escapeHtml(t.status)}${t.reason === null ? '' : ` (${escapeHtml(t.reason)})`}</li>`,
    )
    .join('');
  return (
    `<div class="saga" data-saga="${escapeHtml(order.orderId)}" data-status="${escapeHtml(saga.status)}">` +
    `<div class="saga-row"><div class="label">${escapeHtml(order.orderId)} <small class="saga-status">${escapeHtml(saga.status)}</small></div>` +
    `<div class="track">${bars}</div></div>` +
    `<details><summary>${escapeHtml(order.orderId)}: <span class="saga-outcome">${escapeHtml(saga.status)}</span>` +
    `${saga.reason === null ? '' : ` — <span class="saga-reason">${escapeHtml(saga.reason)}</span>`}</summary>` +
    `<table><tr><th>kind</th><th>operation</th><th>status</th><th>attempts</th><th>time</th><th>error</th></tr>${steps}</table>` +
    `<ol>${transitions}</ol></details></div>`
  );
}

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
          `<tr><th>${escapeHtml(name)}</th><td data-count="${escapeHtml(name)}">${escapeHtml(value as number)}</td></tr>`,
      )
      .join('') +
    '</table>'
  );
}

export function renderHtml(picture: RunPicture): string {
  const lanes = picture.orders.slice(0, MAX_LANES);
  const account = (picture.stats as { account?: object }).account;
  const legend = OUTCOME_LEGEND.map(
    ([outcome, meaning]) => `<li><span class="mark ${outcome}">n</span>${escapeHtml(meaning)}</li>`,
  ).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Run of ${escapeHtml(picture.input)}</title><style>${STYLE}</style></head>
<body>
<h1>Run of ${escapeHtml(picture.input)}</h1>
<p>${picture.orders.length} orders, ${picture.parked.length} parked, ${picture.deadLettered.length} dead-lettered, in ${(picture.durationMs / 1000).toFixed(2)} s. Time runs left to right over the whole run.</p>
<h2>Per-entry account</h2>
${account === undefined ? '<p id="account">this report has no per-entry account</p>' : countsTable('account', account)}
<h2>Counts</h2>
${countsTable('stats', picture.stats)}
<h2>The convoy: one lane per order</h2>
<p>Each mark is an entry, labelled with its sequence number, placed when it met its outcome: within a lane the marks run in sequence order (FIFO per order); lanes side by side show orders in parallel. A yellow line is the time an entry waited in the buffer.</p>
<ul class="legend">${legend}</ul>
${picture.orders.length > lanes.length ? `<p>The first ${lanes.length} of ${picture.orders.length} orders; the JSON report holds every one.</p>` : ''}
<div id="lanes">${lanes.map((order) => laneOf(order, picture.durationMs)).join('\n')}</div>
<h2>Sagas: steps and compensations over time</h2>
<div id="sagas">${lanes.map((order) => sagaOf(order, picture.durationMs)).join('\n')}</div>
<h2>Parked</h2>
${table(
  'parked',
  ['queue', 'messageId', 'sessionId', 'transactionId', 'reason', 'description'],
  picture.parked.map((p) => [p.queue, p.messageId, p.sessionId, p.transactionId, p.reason, p.description]),
)}
<h2>Dead-lettered</h2>
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
</body></html>
`;
}
