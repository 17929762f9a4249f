import { api, seg } from './api.js';
import { badge, facts, h, json, relative, runLink, table, when } from './dom.js';
import { refusalBox, retryable } from './refusal.js';

/**
 * The approval inbox: the pending approvals, soonest deadline first (GET /v1/approvals?status=pending), and
 * ONE complete proposal at a time (GET /v1/approvals/{id}): every step with its tool, class, key, exact
 * arguments and audience, the evidence (what is already staged, the residual risk) and the deadline.
 *
 * The decision (POST /v1/approvals/{id}/decision) carries the hash shown on the screen, and only that: the
 * page never fetches the proposal again behind the operator's back. If the proposal changed, the API
 * refuses (APPROVAL_HASH_MISMATCH) and the operator reloads it by hand and reads it again.
 */
export async function renderInbox(el, selectedId, ctx) {
  const { approvals } = await api('GET', '/v1/approvals?status=pending');
  const id = selectedId ?? approvals[0]?.id;
  el.append(
    h('h1', {}, 'Approval inbox'),
    h(
      'div',
      { class: 'toolbar' },
      h('span', {}, `${approvals.length} pending`),
      h('button', { type: 'button', onclick: () => ctx.reload() }, 'Refresh'),
    ),
    approvals.length
      ? h(
          'ol',
          { class: 'queue' },
          approvals.map((a) =>
            h(
              'li',
              {},
              h(
                'a',
                {
                  href: `#/inbox/${seg(a.id)}`,
                  'aria-current': a.id === id ? 'true' : null,
                  'data-approval-id': a.id,
                },
                `${a.runId} · ${a.kind} · ${a.steps.length} step${a.steps.length === 1 ? '' : 's'} · due `,
                when(a.expiresAt),
              ),
            ),
          ),
        )
      : h('p', { class: 'empty' }, 'No proposal waits for a decision.'),
  );
  if (!id) return;
  el.append(proposal(await api('GET', `/v1/approvals/${seg(id)}`), ctx));
}

/** One complete proposal, and the decision on it. */
function proposal(a, ctx) {
  const ev = a.evidence ?? {};
  const actions = new Map((Array.isArray(ev.actions) ? ev.actions : []).map((x) => [x.stepIdx, x]));
  const status = h('span', { class: 'approval-status' }, badge(a.status));
  const { actions: _a, staged, residualRisk, deadline, audience, ...otherEvidence } = ev;
  return h(
    'article',
    { class: 'proposal', 'data-approval-id': a.id },
    h('h2', {}, a.kind === 'pivot' ? 'Pivot proposal ' : 'Held step ', h('code', {}, a.id)),
    h('p', { class: 'summary' }, a.summary ?? '(no summary)'),
    facts([
      ['Run', runLink(a.runId)],
      ['State', status],
      ['Hash', h('code', { class: 'hash' }, a.hash)],
      [
        'Deadline',
        h(
          'span',
          { class: 'deadline' },
          h('time', { datetime: a.expiresAt }, a.expiresAt),
          ` (${relative(a.expiresAt)})`,
        ),
      ],
      ['Proposed', when(a.createdAt)],
      ['Decided by', a.decidedBy ?? undefined],
      ['Decided at', a.decidedAt ? when(a.decidedAt) : undefined],
      ['Comment', a.comment ?? undefined],
    ]),
    h('h3', {}, `Steps that will run once approved (${a.steps.length})`),
    table(
      ['#', 'Tool', 'Class', 'Key', 'Arguments', 'Resource', 'Audience', 'State'],
      a.steps.map((s) => [
        String(s.stepIdx),
        h('span', { class: 'tool' }, s.tool),
        s.toolClass,
        h('code', {}, s.idempotencyKey),
        json(s.args, 'json args'),
        resourceText(actions.get(s.stepIdx)?.resource),
        s.audience.join(', '),
        badge(s.status),
      ]),
      'proposal-steps',
    ),
    h('h3', {}, 'Evidence'),
    facts([
      ['Audience', Array.isArray(audience) ? audience.join(', ') : undefined],
      ['Residual risk', residualRisk === undefined ? undefined : h('span', { class: 'risk' }, residualRisk)],
      ['Deadline', deadline === undefined ? undefined : String(deadline)],
    ]),
    h('h4', {}, 'Already staged'),
    Array.isArray(staged) && staged.length
      ? table(
          ['#', 'Tool', 'Class', 'External ref', 'Hold ends'],
          staged.map((s) => [String(s.stepIdx), s.tool, s.class, s.externalRef, when(s.holdEndsAt)]),
          'staged',
        )
      : h('p', { class: 'muted' }, 'Nothing staged.'),
    Object.keys(otherEvidence).length ? json(otherEvidence) : null,
    decision(a, status, ctx),
  );
}

/** The resource a step touches (`{ to: 'ada@example.com' }`) as `to: ada@example.com`. */
function resourceText(resource) {
  if (resource === null || resource === undefined) return '';
  if (typeof resource !== 'object') return String(resource);
  return Object.entries(resource)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

/** Approve / Reject for a pending approval, with the hash on screen; the answer or the refusal below. */
function decision(a, status, ctx) {
  if (a.status !== 'pending')
    return h('p', { class: 'decided' }, `This approval is ${a.status}; it cannot be decided again.`);
  const shownHash = a.hash;
  const comment = h('textarea', { id: `comment-${a.id}`, rows: 2, maxlength: 2000 });
  const approve = h('button', { type: 'button', class: 'approve' }, 'Approve');
  const reject = h('button', { type: 'button', class: 'reject' }, 'Reject');
  const outcome = h('div', { class: 'outcome', 'aria-live': 'polite' });
  const decide = async (choice) => {
    approve.disabled = reject.disabled = true;
    outcome.replaceChildren(h('p', { class: 'loading' }, 'Sending the decision…'));
    const text = comment.value.trim();
    try {
      const done = await api('POST', `/v1/approvals/${seg(a.id)}/decision`, {
        decision: choice === 'approve' ? 'approve' : 'reject',
        hash: shownHash,
        ...(text ? { comment: text } : {}),
      });
      status.replaceChildren(badge(done.status));
      outcome.replaceChildren(
        h(
          'p',
          { class: 'success', role: 'status' },
          `${done.status === 'approved' ? 'Approved' : 'Rejected'} by ${done.decidedBy ?? '?'} at `,
          when(done.decidedAt),
          done.status === 'approved' ? '. The commit steps run now, in order.' : '. The run unwinds.',
        ),
      );
    } catch (err) {
      outcome.replaceChildren(
        refusalBox(err),
        h('button', { type: 'button', class: 'reload', onclick: () => ctx.reload() }, 'Reload this proposal'),
      );
      if (retryable(err)) approve.disabled = reject.disabled = false;
    }
  };
  approve.addEventListener('click', () => void decide('approve'));
  reject.addEventListener('click', () => void decide('reject'));
  return h(
    'section',
    { class: 'decision' },
    h('h3', {}, 'Decision'),
    h(
      'p',
      { class: 'muted' },
      'Your decision carries the hash shown above; if the proposal changed since, it is refused.',
    ),
    h('label', { for: comment.id }, 'Comment (kept with the decision)'),
    comment,
    h('div', { class: 'buttons' }, approve, reject),
    outcome,
  );
}
