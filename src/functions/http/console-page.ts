/**
 * The operators' console: one self-contained page (inline style and script, no external asset), so
 * that it ships inside the function app and works wherever the app runs. It reads
 * `GET ops/overview` and `GET ops/orders/{orderId}` and acts through the functions that exist:
 * inspect (`GET ops/parked-message?messageId=`, `GET ops/deadletter-message/{queue}?messageId=`), an order's
 * ordered replay (`POST ops/orders/{orderId}/replay`, a dry run first) and a saga's review
 * (`POST orders/{orderId}/review`). URLs are relative to the page's own, every id in a path is
 * percent-encoded, and `?code=KEY` on the page's URL is sent as `x-functions-key` on every call.
 *
 * Data only ever reaches the page as text (`textContent`, `setAttribute`): no markup is built from
 * it. The script's hash is its Content-Security-Policy allowance (./console-http.ts).
 */
import { createHash } from 'node:crypto';

const STYLE = `
:root{color-scheme:light dark;--line:#8884;--muted:#888;--bad:#c33;--ok:#2a7;--warn:#c80}
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 16px 48px}
header{display:flex;gap:12px;align-items:center;flex-wrap:wrap;border-bottom:1px solid var(--line);padding:8px 0}
h1{font-size:20px;margin:0 auto 0 0}h2{font-size:16px;margin:24px 0 6px}h3{font-size:14px;margin:12px 0 4px}
table{border-collapse:collapse;width:100%;margin:4px 0}th,td{text-align:left;padding:3px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted)}td.n{text-align:right;font-variant-numeric:tabular-nums}
code,pre,.id{font-family:ui-monospace,monospace;font-size:12px}pre{white-space:pre-wrap;word-break:break-all;border:1px solid var(--line);padding:8px;max-height:420px;overflow:auto}
.muted{color:var(--muted)}.bad{color:var(--bad)}.ok{color:var(--ok)}.warn{color:var(--warn)}
button{font:inherit;padding:2px 10px;cursor:pointer}input[type=text]{font:inherit;padding:3px 6px;min-width:18em}
.confirm{border:1px solid var(--warn);padding:8px;margin:6px 0}.chips button{margin:2px 4px 2px 0}
#status{min-height:1.4em}section{margin-bottom:8px}
`;

const SCRIPT = `(() => {
  'use strict';
  const code = new URLSearchParams(location.search).get('code');
  const apiRoot = location.pathname.replace(/ops\\/console\\/?$/, '');
  const $ = (id) => document.getElementById(id);

  /** An element with attributes and children; strings become text nodes, never markup. */
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'onclick') node.addEventListener('click', value);
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  const path = (...segments) => segments.map((segment) => encodeURIComponent(segment)).join('/');

  async function call(method, route, body) {
    const headers = { accept: 'application/json' };
    if (code) headers['x-functions-key'] = code;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(apiRoot + route, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
    const text = await response.text();
    let json = null;
    try { json = text === '' ? null : JSON.parse(text); } catch { json = { error: text }; }
    return { status: response.status, ok: response.ok, json };
  }

  function say(text, tone) {
    const status = $('status');
    status.replaceChildren(el('span', { class: tone || '' }, text));
  }

  function failure(what, result) {
    const error = result.json && typeof result.json.error === 'string' ? result.json.error : JSON.stringify(result.json);
    say(what + ' failed (' + result.status + '): ' + error, 'bad');
  }

  function age(seconds) {
    if (seconds === null || seconds === undefined) return '';
    if (seconds < 60) return seconds + ' s';
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) return minutes + ' min';
    const hours = Math.floor(minutes / 60);
    if (hours < 48) return hours + ' h ' + (minutes % 60) + ' min';
    return Math.floor(hours / 24) + ' d ' + (hours % 24) + ' h';
  }

  function table(headings, rows, numeric) {
    const numericColumns = new Set(numeric || []);
    return el('table', {},
      el('thead', {}, el('tr', {}, headings.map((heading) => el('th', {}, heading)))),
      el('tbody', {}, rows.map((row) => el('tr', row.attributes || {},
        (row.cells || row).map((cell, index) => el('td', { class: numericColumns.has(index) ? 'n' : '' }, cell))))));
  }

  const none = (text) => el('p', { class: 'muted' }, text);

  // An id holding one of these is no order's (docs/messages.md): it has no URL the host would hand
  // back whole (%2F stays %2F), so it is shown, not opened.
  const NOT_IN_AN_ORDER_ID = /[\\\\/?#]/;

  function orderButton(orderId) {
    if (NOT_IN_AN_ORDER_ID.test(orderId))
      return el('code', { title: 'no order can have this id', 'data-not-an-order': orderId }, orderId);
    return el('button', { type: 'button', class: 'id', 'data-open-order': orderId, onclick: () => openOrder(orderId) }, orderId);
  }

  // ---------------------------------------------------------------- inspect
  async function inspect(route, target) {
    const result = await call('GET', route);
    if (!result.ok) return failure('inspect', result);
    target.replaceChildren(el('button', { type: 'button', onclick: () => target.replaceChildren() }, 'Close'),
      el('pre', { 'data-inspected': '' }, JSON.stringify(result.json, null, 2)));
  }

  function heldGroups(groups, queue, target) {
    if (groups.length === 0) return target.replaceChildren(none('none'));
    target.replaceChildren(...groups.map((group) => {
      const detail = el('div', {});
      // The id in the query: a path cannot carry a '/' unaltered (operations-http.ts, messageIdOf).
      const route = (messageId) => (queue === null ? 'ops/parked-message' : 'ops/deadletter-message/' + path(queue)) +
        '?messageId=' + encodeURIComponent(messageId);
      return el('section', { 'data-reason': group.reason },
        el('h3', {}, group.reason + ' ', el('span', { class: 'muted' }, '(' + group.count + ', ' + group.oldest + ' to ' + group.newest + ')')),
        el('div', { class: 'chips' }, 'inspect: ', group.messageIds.map((messageId) =>
          el('button', { type: 'button', class: 'id', 'data-inspect': messageId, onclick: () => inspect(route(messageId), detail) }, messageId)),
          group.count > group.messageIds.length ? el('span', { class: 'muted' }, ' and ' + (group.count - group.messageIds.length) + ' more') : null),
        group.orderIds.length === 0 ? null : el('div', { class: 'chips' }, 'orders: ', group.orderIds.map(orderButton)),
        detail);
    }));
  }

  // ---------------------------------------------------------------- review
  function reviewControls(saga) {
    const holder = el('div', {});
    const note = el('input', { type: 'text', placeholder: 'note (what was done)', 'aria-label': 'review note for ' + saga.orderId });
    const ask = (action) => {
      holder.replaceChildren(el('div', { class: 'confirm' },
        'Send review "' + action + '" for order ', el('code', {}, saga.orderId), '? ',
        el('button', { type: 'button', onclick: () => review(saga.orderId, action, note, holder) }, 'Confirm ' + action),
        ' ', el('button', { type: 'button', onclick: () => holder.replaceChildren() }, 'Cancel')));
    };
    return el('div', { 'data-review': saga.orderId }, note, ' ',
      el('button', { type: 'button', onclick: () => ask('retry') }, 'Retry'), ' ',
      el('button', { type: 'button', onclick: () => ask('resolved') }, 'Resolved'), holder);
  }

  /** Review controls an operator is in: a note written or being written, or a confirmation open. */
  function reviewInUse(controls) {
    const note = controls.querySelector('input');
    return controls.querySelector('.confirm') !== null ||
      (note !== null && (note.value !== '' || note === document.activeElement));
  }

  async function review(orderId, action, note, holder) {
    const text = note.value.trim();
    const body = text === '' ? { action } : { action, note: text };
    const result = await call('POST', 'orders/' + path(orderId) + '/review', body);
    holder.replaceChildren();
    if (!result.ok) return failure('review', result);
    note.value = '';
    say((result.json && result.json.message) || 'review passed', 'ok');
    await refresh();
  }

  // ---------------------------------------------------------------- overview
  async function refresh() {
    const result = await call('GET', 'ops/overview');
    if (!result.ok) return failure('overview', result);
    const view = result.json;
    $('refreshed').textContent = 'as of ' + view.at;

    $('queues').replaceChildren(table(['queue', 'active', 'dead-lettered', 'oldest', 'sessions with messages'],
      view.queues.map((queue) => ({
        attributes: { 'data-queue': queue.queue },
        cells: [queue.queue, queue.active, queue.deadLettered, age(queue.oldestAgeSeconds),
          queue.sessionCount === 0 ? '' : el('details', {}, el('summary', {}, queue.sessionCount + (queue.truncated ? '+' : '')),
            table(['session', 'pending', 'oldest'], queue.sessions.map((session) => [session.sessionId, session.pending, age(session.oldestAgeSeconds)]), [1]))],
      })), [1, 2]));

    $('gaps').replaceChildren(view.gaps.length === 0 ? none('no order waits on a gap') :
      table(['order', 'applied through', 'waiting for', 'buffered', 'since', 'held as'],
        view.gaps.map((gap) => ({
          attributes: { 'data-gap': gap.orderId },
          cells: [orderButton(gap.orderId), gap.appliedSequence, gap.waitingFor,
            gap.buffered + ' (' + gap.bufferedSequences.join(', ') + ')', gap.since || 'not recorded', gap.heldAs || ''],
        })), [1, 2]));

    heldGroups(view.parked, null, $('parked'));
    const dead = el('div', {});
    $('dead').replaceChildren(dead);
    if (view.deadLettered.length === 0) dead.replaceChildren(none('none'));
    else dead.replaceChildren(...view.deadLettered.map((group) => {
      const holder = el('div', {});
      heldGroups([group], group.queue, holder);
      return el('div', { 'data-queue': group.queue }, el('h3', {}, group.queue), holder);
    }));

    // The review an operator is writing or confirming moves into the redrawn list as it is.
    const working = new Map([...document.querySelectorAll('#sagas [data-review]')]
      .filter(reviewInUse).map((controls) => [controls.getAttribute('data-review'), controls]));
    $('sagas').replaceChildren(view.sagasNeedingAttention.length === 0 ? none('no saga waits for a person') :
      table(['order', 'instance', 'reason', 'since', 'alerts', 'review'],
        view.sagasNeedingAttention.map((saga) => ({
          attributes: { 'data-saga': saga.orderId },
          cells: [orderButton(saga.orderId), el('span', { class: 'id' }, saga.instanceId), saga.reason || '', saga.since || '', saga.alerts,
            working.get(saga.orderId) || reviewControls(saga)],
        })), [4]));

    $('truncated').textContent = view.truncated.length === 0 ? '' :
      'Listings stopped at their bound (counts are lower bounds): ' + view.truncated.join(', ');
  }

  // ---------------------------------------------------------------- one order
  async function openOrder(orderId) {
    $('order-id').value = orderId;
    const result = await call('GET', 'ops/orders/' + path(orderId));
    const target = $('order');
    if (!result.ok) {
      target.replaceChildren(el('p', { class: 'bad' }, result.json && result.json.error ? result.json.error : 'status ' + result.status));
      return;
    }
    const view = result.json;
    const order = view.order;
    const held = view.parked.length + view.deadLettered.length;
    const replayHolder = el('div', {});
    // One list in the order the consumer needs them: by sequence, unknown sequences last.
    const bySequence = (a, b) =>
      (a.entrySequence === null ? Infinity : a.entrySequence) - (b.entrySequence === null ? Infinity : b.entrySequence);
    const heldRows = (messages) => messages.map((message) => ({
      attributes: { 'data-held': message.messageId },
      cells: [message.entrySequence === null ? '' : message.entrySequence,
        el('span', { class: 'id' }, message.messageId), message.park ? message.park.reason : message.deadLetterReason || '',
        message.enqueuedTimeUtc, message.queue || (message.park && message.park.fromQueue) || ''],
    }));
    target.replaceChildren(el('div', { 'data-order-view': view.orderId },
      el('h3', {}, 'Order ', el('code', {}, view.orderId)),
      el('p', {}, 'trace id ', el('code', { 'data-trace-id': '' }, view.traceId),
        el('span', { class: 'muted' }, ' (Application Insights: operation_Id)')),
      order === null ? none('no order state: none of its entries reached the order') :
        table(['status', 'applied through', 'final', 'waiting for', 'lines', 'total', 'currency', 'customer'],
          [[order.status, order.appliedSequence, order.finalSequence === null ? '' : order.finalSequence,
            order.waitingFor === null ? '' : order.waitingFor, order.lineCount, order.total, order.currency || '', order.customerId || '']]),
      el('h3', {}, 'Buffered entries'),
      order === null || order.buffered.length === 0 ? none('none') :
        table(['sequence', 'transaction', 'type', 'message'], order.buffered.map((entry) =>
          [entry.sequence, el('span', { class: 'id' }, entry.transactionId), entry.type, el('span', { class: 'id' }, entry.messageId)]), [0]),
      el('h3', {}, 'Held messages'),
      held === 0 ? none('none') : table(['sequence', 'message', 'reason', 'enqueued', 'queue'],
        heldRows([...view.parked, ...view.deadLettered].sort(bySequence)), [0]),
      held === 0 ? null : el('p', {}, el('button', { type: 'button', onclick: () => replay(view.orderId, true, replayHolder) },
        'Replay held messages in order (dry run)')),
      replayHolder,
      el('h3', {}, 'Records'),
      view.records.length === 0 ? none('none') : table(['sequence', 'transaction', 'outcome', 'line'], view.records.map((record) =>
        [record.sequence, el('span', { class: 'id' }, record.transactionId), record.outcome,
          record.line ? JSON.stringify(record.line) : '']), [0]),
      el('h3', {}, 'Saga'),
      view.saga === null ? none('no saga') : el('div', { 'data-saga-status': view.saga.status },
        el('p', {}, el('strong', {}, view.saga.status), view.saga.reason ? ': ' + view.saga.reason : '', ' ',
          el('span', { class: 'muted id' }, view.saga.instanceId)),
        table(['at', 'kind', 'what', 'detail'], view.saga.timeline.map((event) => [event.at, event.kind, event.what, event.detail || '']))),
      view.truncated.length === 0 ? null : el('p', { class: 'warn' }, 'Listings stopped at their bound: ' + view.truncated.join(', '))));
  }

  async function replay(orderId, dryRun, holder) {
    const result = await call('POST', 'ops/orders/' + path(orderId) + '/replay', { dryRun });
    if (!result.ok) { holder.replaceChildren(); return failure('replay', result); }
    const outcome = result.json;
    const rows = outcome.messages.map((message) => [message.sequence === null ? '' : message.sequence,
      el('span', { class: 'id' }, message.messageId), message.reason || '', message.action, message.detail || '']);
    const listing = table(['sequence', 'message', 'reason', 'action', 'detail'], rows, [0]);
    if (dryRun) {
      const wouldReplay = outcome.messages.filter((message) => message.action === 'would-replay').length;
      holder.replaceChildren(el('div', { class: 'confirm', 'data-dry-run': orderId },
        el('p', {}, 'Dry run: ' + wouldReplay + ' of ' + outcome.matched + ' held messages would be replayed, in this order.'), listing,
        wouldReplay === 0 ? null : el('button', { type: 'button', onclick: () => replay(orderId, false, holder) }, 'Confirm replay of ' + wouldReplay),
        ' ', el('button', { type: 'button', onclick: () => holder.replaceChildren() }, 'Cancel')));
      return;
    }
    const replayed = outcome.messages.filter((message) => message.action === 'replayed').length;
    say('replayed ' + replayed + ' held message' + (replayed === 1 ? '' : 's') + ' of order ' + orderId + ' in order', 'ok');
    holder.replaceChildren(el('div', { 'data-replayed': orderId }, listing));
    await refresh();
  }

  $('refresh').addEventListener('click', () => { refresh(); });
  $('search').addEventListener('submit', (event) => {
    event.preventDefault();
    const orderId = $('order-id').value;
    if (orderId.trim() !== '') openOrder(orderId);
  });
  let timer = null;
  // The timer does not redraw the lists while an operator reads a held message or writes a review.
  const busy = () =>
    document.querySelector('#parked pre, #dead pre') !== null ||
    [...document.querySelectorAll('#sagas [data-review]')].some(reviewInUse);
  $('auto').addEventListener('change', (event) => {
    if (timer !== null) clearInterval(timer);
    timer = event.target.checked ? setInterval(() => { if (!busy()) refresh(); }, 10000) : null;
  });
  refresh();
})();`;

/** `sha256-<base64>` of the inline script, for the page's Content-Security-Policy. */
export const CONSOLE_SCRIPT_HASH = `sha256-${createHash('sha256').update(SCRIPT).digest('base64')}`;

export const CONSOLE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Order convoy: operators' console</title>
<style>${STYLE}</style>
</head><body>
<header><h1>Operators' console</h1><span id="refreshed" class="muted"></span>
<label><input type="checkbox" id="auto"> refresh every 10 s</label>
<button type="button" id="refresh">Refresh</button></header>
<p id="status" role="status" aria-live="polite"></p>
<p id="truncated" class="warn"></p>
<section aria-labelledby="h-order"><h2 id="h-order">Order</h2>
<form id="search" role="search"><input type="text" id="order-id" aria-label="order id" placeholder="order id">
<button type="submit">Show order</button></form><div id="order"></div></section>
<section aria-labelledby="h-queues"><h2 id="h-queues">Backlog</h2><div id="queues"></div></section>
<section aria-labelledby="h-gaps"><h2 id="h-gaps">Orders waiting on a gap</h2><div id="gaps"></div></section>
<section aria-labelledby="h-sagas"><h2 id="h-sagas">Sagas needing attention</h2><div id="sagas"></div></section>
<section aria-labelledby="h-parked"><h2 id="h-parked">Parked, by reason</h2><div id="parked"></div></section>
<section aria-labelledby="h-dead"><h2 id="h-dead">Dead-lettered, by reason</h2><div id="dead"></div></section>
<script>${SCRIPT}</script>
</body></html>
`;
