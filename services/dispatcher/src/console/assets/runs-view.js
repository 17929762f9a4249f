import { api } from './api.js';
import { badge, h, runLink, table, when } from './dom.js';

/**
 * The runs list (GET /v1/runs): newest first, each with its state and what waits for a person. The status
 * filter offers the states present in the list, so the console never keeps its own copy of the states.
 */
export async function renderRuns(el, _arg, ctx) {
  const { runs } = await api('GET', '/v1/runs?limit=200');
  const statuses = [...new Set(runs.map((r) => r.status))].sort();
  const rowsOf = (status) =>
    runs
      .filter((r) => !status || r.status === status)
      .map((r) => [
        runLink(r.runId),
        badge(r.status),
        r.statusReason ?? '',
        String(r.steps),
        waiting(r.pendingApprovals, `#/inbox`),
        waiting(r.openCases, '#/cases'),
        waiting(r.openCorrections, '#/corrections'),
        when(r.updatedAt),
      ]);
  const headers = ['Run', 'State', 'Reason', 'Steps', 'Approvals', 'Cases', 'Corrections', 'Updated'];
  const holder = h('div', {}, table(headers, rowsOf(''), 'runs'));
  const filter = h(
    'select',
    {
      id: 'runs-filter',
      onchange: () => holder.replaceChildren(table(headers, rowsOf(filter.value), 'runs')),
    },
    h('option', { value: '' }, `all states (${runs.length})`),
    statuses.map((s) => h('option', { value: s }, s)),
  );
  el.append(
    h('h1', {}, 'Runs'),
    h(
      'div',
      { class: 'toolbar' },
      h('label', { for: 'runs-filter' }, 'State '),
      filter,
      h('button', { type: 'button', onclick: () => ctx.reload() }, 'Refresh'),
    ),
    runs.length ? holder : h('p', { class: 'empty' }, 'No runs yet.'),
  );
}

/** A count that links to its queue when it is not zero. */
function waiting(n, href) {
  return n > 0 ? h('a', { href, class: 'waiting' }, String(n)) : h('span', { class: 'muted' }, '0');
}
