import { api, seg } from './api.js';
import { badge, facts, h, json, oneLine, table, when } from './dom.js';

/**
 * One run's timeline: the run (GET /v1/runs/{id}) with its steps and the approvals, cases and corrections
 * that concern it, then every event (GET /v1/runs/{id}/events) in order: each transition with who made it
 * and why, each attempt, retry and lookup with its `detail` (the reconciler's evidence) in full. A call's
 * model decision (`decision`: model, prompt version, turn, reasoning reference) shows beside its step and
 * its intake or retry event, as text.
 */
export async function renderTimeline(el, runId, ctx) {
  const [run, events] = await Promise.all([readRun(runId), readEvents(runId)]);
  const toolAt = new Map(run.steps.map((s) => [s.stepIdx, s.tool]));
  el.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/runs' }, 'Runs'), ' / ', run.runId),
    h('h1', {}, 'Run ', h('code', {}, run.runId), ' ', badge(run.status)),
    h('div', { class: 'toolbar' }, h('button', { type: 'button', onclick: () => ctx.reload() }, 'Refresh')),
    facts([
      ['State', badge(run.status)],
      ['Reason', run.statusReason],
      ['Policy', oneLine(run.policy)],
      ['Pivot at step', run.pivotIdx === null ? null : String(run.pivotIdx)],
      ['Irreversible steps before the pivot', String(run.irreversibleBeforePivot)],
      ['Metadata', Object.keys(run.metadata).length ? oneLine(run.metadata, 300) : null],
      ['Created', when(run.createdAt)],
      ['Updated', when(run.updatedAt)],
    ]),
    h('h2', {}, 'Steps'),
    run.steps.length
      ? table(
          [
            '#',
            'Tool',
            'Class',
            'State',
            'Key',
            'External ref',
            'Attempts',
            'Compensation',
            'Audience',
            'Model',
            'Trace',
          ],
          run.steps.map((s) => [
            String(s.stepIdx),
            s.tool,
            s.toolClass,
            badge(s.status),
            h('code', {}, s.idempotencyKey),
            s.externalRef,
            String(s.attempts),
            s.compensationStatus,
            s.audience.join(', '),
            decisionOf(s.decision),
            // The W3C trace id: search for it in the tracing backend (intake, executor, vendor, lookups).
            s.traceId ? h('code', { class: 'trace-id' }, s.traceId) : null,
          ]),
          'steps',
        )
      : h('p', { class: 'empty' }, 'No steps.'),
    ...reviewItems(run),
    h('h2', {}, `Timeline (${events.length} events)`),
    table(
      ['When', 'Step', 'Kind', 'Transition', 'Cause', 'Actor', 'Model', 'Detail'],
      events.map((e) => [
        when(e.at),
        e.stepIdx === null ? 'run' : `${e.stepIdx} ${toolAt.get(e.stepIdx) ?? ''}`,
        e.kind,
        e.from || e.to ? `${e.from ?? '∅'} → ${e.to ?? '∅'}` : '',
        e.cause,
        e.actor,
        decisionOf(e.detail?.decision),
        detailOf(e),
      ]),
      'events',
    ),
  );
}

/** The model's decision behind a call, one `name: value` line per field it carries (text nodes only). */
function decisionOf(decision) {
  if (decision === null || decision === undefined || typeof decision !== 'object') return null;
  const fields = [
    ['model', decision.model],
    ['prompt', decision.promptVersion],
    ['turn', decision.turnId],
    ['reasoning', decision.reasoningRef],
  ].filter(([, v]) => typeof v === 'string');
  if (!fields.length) return null;
  return h(
    'span',
    { class: 'decision' },
    ...fields.flatMap(([k, v], i) => [i ? h('br') : null, `${k}: `, h('code', {}, v)]),
  );
}

/** An event's `detail`: a one-line summary that opens to the whole JSON (lookups open by default). */
function detailOf(e) {
  if (e.detail === null || e.detail === undefined) return null;
  return h('details', { open: e.kind === 'lookup' }, h('summary', {}, oneLine(e.detail, 80)), json(e.detail));
}

/** The run's approvals, cases and corrections, each linking to its queue. */
function reviewItems(run) {
  const parts = [];
  if (run.approvals.length)
    parts.push(
      h('h2', {}, 'Approvals'),
      table(
        ['Approval', 'Kind', 'State', 'Deadline', 'Decided by'],
        run.approvals.map((a) => [
          h('a', { href: `#/inbox/${seg(a.id)}` }, a.id),
          a.kind,
          badge(a.status),
          when(a.expiresAt),
          a.decidedBy,
        ]),
      ),
    );
  if (run.cases.length)
    parts.push(
      h('h2', {}, 'Cases'),
      table(
        ['Case', 'Step', 'Reason', 'State'],
        run.cases.map((c) => [
          h('a', { href: '#/cases' }, c.id),
          c.stepIdx === null ? '' : String(c.stepIdx),
          c.reason,
          badge(c.status),
        ]),
      ),
    );
  if (run.corrections.length)
    parts.push(
      h('h2', {}, 'Corrections'),
      table(
        ['Correction', 'Step', 'Audience', 'State'],
        run.corrections.map((c) => [
          h('a', { href: '#/corrections' }, c.id),
          String(c.stepIdx),
          c.audience.join(', '),
          badge(c.status),
        ]),
      ),
    );
  return parts;
}

/** The run with every step: the API pages its steps (`nextStepsCursor`), followed here to the last page. */
async function readRun(runId) {
  let page = await api('GET', `/v1/runs/${seg(runId)}`);
  const steps = [...page.steps];
  while (page.nextStepsCursor !== null && page.nextStepsCursor !== undefined) {
    const after = page.nextStepsCursor;
    page = await api('GET', `/v1/runs/${seg(runId)}?stepsAfter=${after}`);
    steps.push(...page.steps.filter((s) => s.stepIdx > after));
  }
  return { ...page, steps };
}

/** Every event of the run, oldest first, following the API's pages (`nextCursor`, at most 1,000 a page). */
async function readEvents(runId) {
  const events = [];
  let after = null;
  do {
    const q = after === null ? '' : `&after=${encodeURIComponent(after)}`;
    const page = await api('GET', `/v1/runs/${seg(runId)}/events?limit=1000${q}`);
    events.push(...page.events);
    after = page.nextCursor ?? null;
  } while (after !== null);
  return events;
}
