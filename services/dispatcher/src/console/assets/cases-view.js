import { api, seg } from './api.js';
import { badge, facts, h, json, runLink, when } from './dom.js';
import { refusalBox } from './refusal.js';

/** The actions a person may take on a case (POST /v1/cases/{id}/resolve), as the operator reads them. */
const ACTIONS = [
  { action: 'confirmed', label: 'Confirmed: the effect exists', needsRef: true, needsStep: true },
  { action: 'not_executed', label: 'Not executed: send it again with its key', needsStep: true },
  { action: 'retry_compensation', label: 'Retry the compensation' },
  { action: 'resolve_run', label: 'Resolve the run: nothing more to do' },
];

/** Whether the queue lists resolved cases too (kept while the page is open). */
let showResolved = false;

/**
 * The operator queue (GET /v1/cases): manual-intervention cases, oldest first, each with its evidence
 * (every lookup, attempt and error) and the actions that settle it, each recorded with who and when.
 */
export async function renderCases(el, _arg, ctx) {
  const { cases } = await api('GET', `/v1/cases?limit=200${showResolved ? '' : '&status=open'}`);
  el.append(
    h('h1', {}, 'Operator queue'),
    h(
      'div',
      { class: 'toolbar' },
      h('span', {}, `${cases.length} ${showResolved ? 'cases' : 'open'}`),
      h(
        'label',
        {},
        h('input', {
          type: 'checkbox',
          checked: showResolved,
          onchange: (e) => {
            showResolved = e.target.checked;
            ctx.reload();
          },
        }),
        ' include resolved',
      ),
      h('button', { type: 'button', onclick: () => ctx.reload() }, 'Refresh'),
    ),
    cases.length
      ? h('div', { class: 'cases' }, cases.map(caseCard))
      : h('p', { class: 'empty' }, 'No case waits for a person.'),
  );
}

function caseCard(c) {
  const status = h('span', {}, badge(c.status));
  return h(
    'article',
    { class: 'case', 'data-case-id': c.id },
    h('h2', {}, 'Case ', h('code', {}, c.id), ' ', status),
    facts([
      ['Run', runLink(c.runId)],
      ['Step', c.stepIdx === null ? null : `${c.stepIdx} ${c.tool ?? ''}`],
      ['Reason', c.reason],
      ['Opened', when(c.createdAt)],
      ['Resolved by', c.resolvedBy ?? undefined],
      ['Resolution', c.resolution ? json(c.resolution) : undefined],
    ]),
    h('h3', {}, 'Evidence'),
    json(c.evidence),
    c.status === 'open' ? resolveForm(c, status) : null,
  );
}

function resolveForm(c, status) {
  const name = `action-${c.id}`;
  const radios = [];
  const ref = h('input', { type: 'text', id: `ref-${c.id}`, maxlength: 500, autocomplete: 'off' });
  const comment = h('input', { type: 'text', id: `comment-${c.id}`, maxlength: 2000, autocomplete: 'off' });
  const choices = ACTIONS.filter((a) => !a.needsStep || c.stepIdx !== null).map((a, i) =>
    h(
      'label',
      { class: 'choice' },
      (radios[i] = h('input', { type: 'radio', name, value: a.action, checked: i === 0 })),
      ` ${a.label}`,
    ),
  );
  const submit = h('button', { type: 'button' }, 'Resolve');
  const outcome = h('div', { class: 'outcome', 'aria-live': 'polite' });
  const form = h(
    'section',
    { class: 'resolve' },
    h('h3', {}, 'Resolve'),
    choices,
    h('label', { for: ref.id }, 'External ref found by hand (for “confirmed”)'),
    ref,
    h('label', { for: comment.id }, 'Comment'),
    comment,
    h('div', { class: 'buttons' }, submit),
    outcome,
  );
  submit.addEventListener('click', () => {
    const action = radios.find((r) => r.checked)?.value;
    const chosen = ACTIONS.find((a) => a.action === action);
    if (!chosen) return;
    const externalRef = ref.value.trim();
    if (chosen.needsRef && !externalRef) {
      outcome.replaceChildren(h('p', { class: 'hint' }, 'Give the external ref of the effect you found.'));
      return;
    }
    submit.disabled = true;
    const body = { action: chosen.action };
    if (chosen.needsRef) body.externalRef = externalRef;
    if (comment.value.trim()) body.comment = comment.value.trim();
    api('POST', `/v1/cases/${seg(c.id)}/resolve`, body).then(
      (done) => {
        status.replaceChildren(badge(done.status));
        outcome.replaceChildren(
          h('p', { class: 'success', role: 'status' }, `Resolved (${chosen.action}) by ${done.resolvedBy}.`),
        );
      },
      (err) => {
        submit.disabled = false;
        outcome.replaceChildren(refusalBox(err));
      },
    );
  });
  return form;
}
