import { api, seg } from './api.js';
import { badge, facts, h, json, runLink, when } from './dom.js';
import { refusalBox, retryable } from './refusal.js';

/** Whether the queue lists sent and dismissed corrections too (kept while the page is open). */
let showClosed = false;

/**
 * The corrections queue (GET /v1/corrections) in the API's order: internal audiences first, customer-facing
 * last. Each shows its pre-written message and the hash of that message; Send carries the hash shown
 * (POST /v1/corrections/{id}/send), Dismiss sends nothing (POST /v1/corrections/{id}/dismiss). Edit
 * replaces the message's template variables (POST /v1/corrections/{id}/edit, with the hash shown): a new
 * proposal with a new hash, shown again before anyone can send it, never a silent change to what was read.
 */
export async function renderCorrections(el, _arg, ctx) {
  const { corrections } = await api('GET', `/v1/corrections?limit=200${showClosed ? '' : '&status=open'}`);
  el.append(
    h('h1', {}, 'Corrections'),
    h(
      'p',
      { class: 'muted' },
      'Send a correction only if its audience actually saw the original. Customer-facing ones come last.',
    ),
    h(
      'div',
      { class: 'toolbar' },
      h('span', {}, `${corrections.length} ${showClosed ? 'corrections' : 'open'}`),
      h(
        'label',
        {},
        h('input', {
          type: 'checkbox',
          checked: showClosed,
          onchange: (e) => {
            showClosed = e.target.checked;
            ctx.reload();
          },
        }),
        ' include sent and dismissed',
      ),
      h('button', { type: 'button', onclick: () => ctx.reload() }, 'Refresh'),
    ),
    corrections.length
      ? h(
          'ol',
          { class: 'corrections' },
          corrections.map((c) => h('li', {}, correctionCard(c))),
        )
      : h('p', { class: 'empty' }, 'No correction waits for a person.'),
  );
}

function correctionCard(c) {
  const customer = c.audience.includes('customer');
  const status = h('span', {}, badge(c.status));
  return h(
    'article',
    { class: `correction${customer ? ' customer' : ''}`, 'data-correction-id': c.id },
    h(
      'h2',
      {},
      'Correction ',
      h('code', {}, c.id),
      ' ',
      status,
      customer ? h('span', { class: 'badge customer-facing' }, 'customer-facing') : null,
    ),
    facts([
      ['Run', runLink(c.runId)],
      ['Answers step', `${c.stepIdx} ${c.tool ?? ''}`],
      ['Audience', c.audience.join(', ')],
      ['Hash', h('code', { class: 'hash' }, c.hash)],
      ['Queued', when(c.createdAt)],
      ['Decided by', c.decidedBy ?? undefined],
      ['External ref', c.externalRef ?? undefined],
    ]),
    h('h3', {}, 'Message'),
    json(c.command),
    c.status === 'open' ? actions(c, status) : null,
    c.status === 'open' ? editor(c) : null,
  );
}

/** Edit the variables of the message: the answer is a new proposal, and the queue is shown again. */
function editor(c) {
  const vars = h('textarea', { id: `cvars-${c.id}`, rows: 4, cols: 60, spellcheck: 'false' });
  vars.value = JSON.stringify(c.command.vars ?? {}, null, 2);
  const save = h('button', { type: 'button', class: 'edit' }, 'Save as a new proposal');
  const outcome = h('div', { class: 'outcome', 'aria-live': 'polite' });
  save.addEventListener('click', () => {
    let parsed;
    try {
      parsed = JSON.parse(vars.value);
    } catch {
      outcome.replaceChildren(h('p', { class: 'error', role: 'alert' }, 'vars: not valid JSON'));
      return;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      outcome.replaceChildren(h('p', { class: 'error', role: 'alert' }, 'vars: must be a JSON object'));
      return;
    }
    save.disabled = true;
    api('POST', `/v1/corrections/${seg(c.id)}/edit`, { hash: c.hash, vars: parsed }).then(
      (edited) => {
        // The card is redrawn from the answer: the new message and its new hash, before any send.
        const card = outcome.closest('article');
        card.replaceWith(correctionCard(edited));
      },
      (err) => {
        outcome.replaceChildren(refusalBox(err));
        if (retryable(err)) save.disabled = false;
      },
    );
  });
  return h(
    'details',
    { class: 'edit-correction' },
    h('summary', {}, 'Edit the message'),
    h('label', { for: vars.id }, 'Template variables (JSON)'),
    vars,
    h('div', { class: 'buttons' }, save),
    outcome,
  );
}

function actions(c, status) {
  const shownHash = c.hash;
  const comment = h('input', { type: 'text', id: `ccomment-${c.id}`, maxlength: 2000, autocomplete: 'off' });
  const send = h('button', { type: 'button', class: 'approve' }, 'Send');
  const dismiss = h('button', { type: 'button', class: 'reject' }, 'Dismiss');
  const outcome = h('div', { class: 'outcome', 'aria-live': 'polite' });
  const act = (what) => {
    send.disabled = dismiss.disabled = true;
    const text = comment.value.trim();
    const body = what === 'send' ? { hash: shownHash } : {};
    if (text) body.comment = text;
    api('POST', `/v1/corrections/${seg(c.id)}/${what}`, body).then(
      (done) => {
        status.replaceChildren(badge(done.status));
        outcome.replaceChildren(
          h('p', { class: 'success', role: 'status' }, `${done.status} by ${done.decidedBy ?? '?'}.`),
        );
      },
      (err) => {
        outcome.replaceChildren(refusalBox(err));
        if (retryable(err)) send.disabled = dismiss.disabled = false;
      },
    );
  };
  send.addEventListener('click', () => act('send'));
  dismiss.addEventListener('click', () => act('dismiss'));
  return h(
    'section',
    { class: 'decision' },
    h('label', { for: comment.id }, 'Comment'),
    comment,
    h('div', { class: 'buttons' }, send, dismiss),
    outcome,
  );
}
