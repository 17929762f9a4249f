/* global document, Node */
/**
 * Building the page from API data without ever parsing data as HTML: elements are made with
 * `document.createElement`, text goes in as text nodes, attributes through `setAttribute`. Nothing in the
 * console uses `innerHTML`, so a tool argument such as `<img onerror=…>` is shown, never run.
 */

/**
 * `h('a', { href: '#/runs', class: 'x', onclick: fn }, 'text', child)`: an element with attributes
 * (`class`, `on<event>` listeners, everything else by `setAttribute`; null, undefined and false are left
 * out) and children (strings become text nodes; arrays are flattened; null and false are skipped).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = String(v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  appendAll(el, children);
  return el;
}

function appendAll(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

/** Pretty JSON as text in a `<pre>`. */
export function json(value, cls = 'json') {
  return h('pre', { class: cls }, value === undefined ? '' : JSON.stringify(value, null, 2));
}

/** JSON on one line, cut to `max` characters (for summaries). */
export function oneLine(value, max = 100) {
  const s = JSON.stringify(value) ?? '';
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A `<time>` showing the instant in UTC, to the second. */
export function when(iso) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: iso }, iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC'));
}

/** "in 23 h 59 min" or "4 min ago", from now. */
export function relative(iso, now = Date.now()) {
  const ms = new Date(iso).getTime() - now;
  if (Number.isNaN(ms)) return '';
  const abs = Math.abs(ms);
  const min = Math.round(abs / 60_000);
  const text =
    min < 1 ? 'less than a minute' : min < 60 ? `${min} min` : `${Math.floor(min / 60)} h ${min % 60} min`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

/** A status as a badge; the class is derived from the status, reduced to letters and underscores. */
export function badge(status) {
  const cls = String(status)
    .toLowerCase()
    .replace(/[^a-z_]/g, '');
  return h('span', { class: `badge status-${cls}` }, String(status));
}

/** A link to a run's timeline. */
export function runLink(runId) {
  return h('a', { href: `#/runs/${encodeURIComponent(runId)}`, class: 'run-link' }, runId);
}

/** A table: `headers` are strings, each row an array of cells (strings, nodes or null). */
export function table(headers, rows, cls = '') {
  return h(
    'table',
    { class: cls || null },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headers.map((t) => h('th', { scope: 'col' }, t)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((cells) =>
        h(
          'tr',
          {},
          cells.map((c) => h('td', {}, c ?? '')),
        ),
      ),
    ),
  );
}

/** A definition list from `[term, value]` pairs (pairs whose value is undefined are left out). */
export function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.filter(([, v]) => v !== undefined).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]),
  );
}
