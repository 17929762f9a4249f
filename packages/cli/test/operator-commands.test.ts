import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSagaClient, type SagaClient } from '@agent-saga/client';
import { startRealDispatcher, type RealDispatcher } from '../../client/test/real-dispatcher.js';
import { runCliInProcess } from './run-cli-in-process.js';

/**
 * The operator commands against the real dispatcher API (real Postgres, real tokens): the agent's side is
 * played with the client, the operator's with `agent-saga`. Every run checks that no token reaches the
 * output.
 */
let d: RealDispatcher;
let agent: SagaClient;

beforeAll(async () => {
  d = await startRealDispatcher('cli_operator');
  agent = createSagaClient({ baseUrl: d.url, token: d.agentToken });
});
afterAll(async () => d?.close());

/** `agent-saga <args>` as the operator `alice` (or with `env` on top). */
async function cli(args: string[], env: Record<string, string> = {}) {
  const run = await runCliInProcess(args, {
    AGENT_SAGA_URL: d.url,
    AGENT_SAGA_TOKEN: d.operatorToken,
    ...env,
  });
  for (const token of [d.operatorToken, d.agentToken]) expect(run.stdout + run.stderr).not.toContain(token);
  return run;
}

/** Parses `--json` output; fails the test with the output when it is not JSON. */
function json<T>(run: { stdout: string; stderr: string }): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`not JSON:\n${run.stdout}\nstderr:\n${run.stderr}`);
  }
}

interface Approval {
  id: string;
  runId: string;
  status: string;
  hash: string;
  decidedBy: string | null;
}

/** A run with a confirmed hold and a pending pivot of a note and a customer notice, proposed by the agent. */
async function stagedRun(runId: string) {
  await agent.createRun({ runId });
  await agent.call(runId, 'hold_funds', { customerId: 'c-1', amount: 4200 }, { stepIdx: 0 });
  await d.confirmStep(runId, 0, 'HOLD-1');
  return agent.pivot(runId, {
    commit: [
      { tool: 'draft_note', args: { orderId: `${runId}-o1`, text: 'refund issued' } },
      { tool: 'notify_customer', args: { to: 'ada@example.com', text: 'your refund is on its way' } },
    ],
    summary: 'note the refund and tell the customer',
  });
}

describe('configuration', () => {
  // In process: cli.test.ts already runs the real executable, which loads these commands too.
  it('a missing AGENT_SAGA_URL is a usage error naming it (exit 2)', async () => {
    const run = await runCliInProcess(['runs', 'list'], { AGENT_SAGA_TOKEN: d.operatorToken });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('AGENT_SAGA_URL (or --url): not set');
    expect(run.stderr).not.toContain(d.operatorToken);
    expect(run.stdout).toBe('');
  });

  it('names a missing token or a bad URL without printing either value; --url and --token override', async () => {
    const noToken = await runCliInProcess(['approvals', 'list'], { AGENT_SAGA_URL: d.url });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('AGENT_SAGA_TOKEN (or --token): not set');
    const badUrl = await cli(['cases', 'list'], { AGENT_SAGA_URL: 'ftp://example.com' });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('AGENT_SAGA_URL (or --url): must be an http:// or https:// URL');
    const byOptions = await runCliInProcess(
      ['runs', 'list', '--json', '--url', d.url, '--token', d.operatorToken],
      {},
    );
    expect(byOptions.code).toBe(0);
    expect(json<{ runs: unknown[] }>(byOptions).runs).toBeInstanceOf(Array);
    const unknownToken = await cli(['runs', 'list'], { AGENT_SAGA_TOKEN: 'sgt_not-a-token' });
    expect(unknownToken.code).toBe(1);
    expect(unknownToken.stderr).toMatch(/^error: UNAUTHORIZED \(HTTP 401\): /);
    expect(unknownToken.stderr).not.toContain('sgt_not-a-token');
  });
});

describe('approvals', () => {
  it('list → show → approve with the reviewed hash; refusals exit 1 with the API code', async () => {
    const p = await stagedRun('cli-pv');

    const list = await cli(['approvals', 'list', '--run', 'cli-pv', '--json']);
    expect(list.code).toBe(0);
    const [listed] = json<{ approvals: Approval[] }>(list).approvals;
    expect(listed).toMatchObject({ id: p.approvalId, status: 'pending', hash: p.hash });
    const table = await cli(['approvals', 'list']);
    expect(table.lines[0]).toMatch(
      /^ID\s+RUN\s+KIND\s+STATUS\s+STEPS\s+AUDIENCE\s+DEADLINE\s+HASH\s+SUMMARY$/,
    );
    expect(table.lines.find((l) => l.startsWith(`${p.approvalId} `))).toContain(
      'cli-pv  pivot  pending  draft_note, notify_customer',
    );

    const show = await cli(['approvals', 'show', p.approvalId]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`hash      ${p.hash}`);
    expect(show.stdout).toContain(`deadline  ${p.expiresAt} (in `);
    expect(show.stdout).toContain('step 1  draft_note\n  class     compensatable\n  key       ');
    expect(show.stdout).toContain('step 2  notify_customer\n  class     irreversible');
    expect(show.stdout).toContain('  audience  customer');
    expect(show.stdout).toContain('"text": "your refund is on its way"');
    expect(show.stdout).toMatch(/staged\s+step 0 hold_funds \(reversible\), ref HOLD-1, hold ends /);
    expect(show.stdout).toMatch(/residual risk\s+notify_customer cannot be undone/);
    expect(show.stdout).toContain(`agent-saga approvals approve ${p.approvalId} --hash ${p.hash}`);

    const noHash = await cli(['approvals', 'approve', p.approvalId]);
    expect(noHash.code).toBe(2);
    expect(noHash.stderr).toContain('--hash <hash>');
    expect(noHash.stderr).toContain('--yes-current');
    const stale = await cli(['approvals', 'approve', p.approvalId, '--hash', 'f'.repeat(64)]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^error: APPROVAL_HASH_MISMATCH \(HTTP 409\): /);
    const byAgent = await cli(['approvals', 'approve', p.approvalId, '--hash', p.hash], {
      AGENT_SAGA_TOKEN: d.agentToken,
    });
    expect(byAgent.code).toBe(1);
    expect(byAgent.stderr).toMatch(/^error: FORBIDDEN \(HTTP 403\): /);

    const ok = await cli([
      'approvals',
      'approve',
      p.approvalId,
      '--hash',
      p.hash,
      '--comment',
      'ok',
      '--json',
    ]);
    expect(ok.code).toBe(0);
    expect(json<Approval>(ok)).toMatchObject({ id: p.approvalId, status: 'approved', decidedBy: 'alice' });
    const again = await cli(['approvals', 'approve', p.approvalId, '--hash', p.hash]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('APPROVAL_DECIDED');
    const run = await agent.getRun('cli-pv');
    expect(run.steps.map((s) => s.status)).toEqual(['CONFIRMED', 'INTENDED', 'AWAITING_APPROVAL']);
  });

  it('a hash reviewed before the agent replaced the proposal is refused, on the old and the new approval', async () => {
    const first = await stagedRun('cli-stale');
    const reviewed = await cli(['approvals', 'show', first.approvalId, '--json']);
    const seen = json<Approval>(reviewed).hash;
    const second = await agent.pivot('cli-stale', {
      commit: [{ tool: 'notify_customer', args: { to: 'ada@example.com', text: 'something else' } }],
      summary: 'only tell the customer',
    });

    const old = await cli(['approvals', 'approve', first.approvalId, '--hash', seen]);
    expect(old.code).toBe(1);
    expect(old.stderr).toContain('APPROVAL_DECIDED');
    expect(old.stderr).toContain('superseded');
    const replaced = await cli(['approvals', 'approve', second.approvalId, '--hash', seen]);
    expect(replaced.code).toBe(1);
    expect(replaced.stderr).toContain('APPROVAL_HASH_MISMATCH');
    expect((await agent.getRun('cli-stale')).status).toBe('AWAITING_APPROVAL');
  });

  it('reject --yes-current prints the proposal it decides on; --hash and --yes-current exclude each other', async () => {
    const p = await stagedRun('cli-no');
    const both = await cli(['approvals', 'reject', p.approvalId, '--hash', p.hash, '--yes-current']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--yes-current');

    const no = await cli([
      'approvals',
      'reject',
      p.approvalId,
      '--yes-current',
      '--comment',
      'wrong customer',
    ]);
    expect(no.code).toBe(0);
    expect(no.stdout).toContain(`hash      ${p.hash}`);
    expect(no.stdout).toContain('step 2  notify_customer');
    expect(no.stdout).toMatch(/status\s+rejected/);
    expect(no.stdout).toMatch(/decided by\s+alice/);
    const run = await agent.getRun('cli-no');
    expect(run.status).toBe('COMPENSATING');
    expect(run.statusReason).toContain('wrong customer');
  });
});

describe('runs', () => {
  it('list and show the run with its steps, approvals and timeline; --json parses', async () => {
    const p = await stagedRun('cli-run');
    const list = await cli(['runs', 'list', '--status', 'AWAITING_APPROVAL']);
    expect(list.code).toBe(0);
    expect(list.lines[0]).toMatch(
      /^RUN\s+STATUS\s+STEPS\s+APPROVALS\s+CASES\s+CORRECTIONS\s+UPDATED\s+REASON$/,
    );
    expect(list.lines.find((l) => l.startsWith('cli-run '))).toMatch(
      /^cli-run\s+AWAITING_APPROVAL\s+3\s+1\s+0\s+0 /,
    );
    const bad = await cli(['runs', 'list', '--status', 'SLEEPING']);
    expect(bad.code).toBe(2);

    await cli(['approvals', 'approve', p.approvalId, '--hash', p.hash]);
    const show = await cli(['runs', 'show', 'cli-run', '--events']);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^run\s+cli-run$/m);
    expect(show.stdout).toMatch(/^pivot\s+commit steps from step 1$/m);
    for (const title of ['STEPS', 'APPROVALS', 'CASES', 'CORRECTIONS', 'TIMELINE'])
      expect(show.stdout).toMatch(new RegExp(`^${title}$`, 'm'));
    expect(show.stdout).toMatch(/^\s+0\s+hold_funds\s+reversible\s+CONFIRMED\s+HOLD-1 /m);
    expect(show.stdout).toMatch(new RegExp(`^${p.approvalId}\\s+pivot\\s+approved\\s+1,2 `, 'm'));
    expect(show.stdout).toMatch(/run\s+decision\s+pending → approved\s+alice/);

    const asJson = json<{ status: string; approvals: Approval[]; events: { actor: string | null }[] }>(
      await cli(['runs', 'show', 'cli-run', '--events', '--json']),
    );
    expect(asJson.status).toBe('RUNNING');
    expect(asJson.approvals[0]).toMatchObject({ status: 'approved', decidedBy: 'alice' });
    expect(asJson.events.some((e) => e.actor === 'alice')).toBe(true);
    const missing = await cli(['runs', 'show', 'no-such-run']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: NOT_FOUND \(HTTP 404\): /);
  });
});

describe('cases', () => {
  it('list with evidence, resolve by hand once; an incomplete command line is a usage error', async () => {
    await agent.createRun({ runId: 'cli-case' });
    await agent.call('cli-case', 'draft_note', { orderId: 'cli-case-o1', text: 'x' }, { stepIdx: 0 });
    await d.giveUp('cli-case', 0, 'outcome unknown after 5 lookups', { lookups: [{ found: false }] });

    const list = json<{ cases: { id: string; tool: string; status: string }[] }>(
      await cli(['cases', 'list', '--run', 'cli-case', '--json']),
    );
    expect(list.cases).toMatchObject([{ tool: 'draft_note', status: 'open' }]);
    const id = list.cases[0]!.id;
    const text = await cli(['cases', 'list', '--run', 'cli-case', '--evidence']);
    expect(text.stdout).toMatch(new RegExp(`^${id}\\s+cli-case\\s+0\\s+draft_note\\s+open `, 'm'));
    expect(text.stdout).toContain(`case ${id} evidence:\n{\n  "lookups": [`);

    const noAction = await cli(['cases', 'resolve', id]);
    expect(noAction.code).toBe(2);
    expect(noAction.stderr).toContain('--action');
    const noRef = await cli(['cases', 'resolve', id, '--action', 'confirmed']);
    expect(noRef.code).toBe(2);
    expect(noRef.stderr).toContain('--external-ref');
    const done = await cli([
      'cases',
      'resolve',
      id,
      '--action',
      'confirmed',
      '--external-ref',
      'NOTE-9',
      '--comment',
      'found it in the tracker',
    ]);
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/status\s+resolved/);
    expect(done.stdout).toMatch(/resolved by\s+alice/);
    expect((await agent.getRun('cli-case')).steps[0]).toMatchObject({
      status: 'CONFIRMED',
      externalRef: 'NOTE-9',
    });
    const twice = await cli(['cases', 'resolve', id, '--action', 'resolve_run']);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/^error: CASE_ACTION_REFUSED \(HTTP 409\): /);
    expect(
      json<{ cases: unknown[] }>(await cli(['cases', 'list', '--run', 'cli-case', '--json'])).cases,
    ).toEqual([]);
  });
});

describe('corrections', () => {
  it('list customer-facing last; dismiss once; edit, then send only with the new hash', async () => {
    await agent.createRun({ runId: 'cli-corr' });
    for (const i of [0, 1]) {
      await agent.call('cli-corr', 'draft_note', { orderId: `cli-corr-o${i}`, text: 'x' }, { stepIdx: i });
      await d.confirmStep('cli-corr', i, `NOTE-${i}`);
    }
    const message = { template: 'email_sent_in_error', to: 'ada@example.com', vars: { order: 'o1' } };
    await d.queueCorrection('cli-corr', 0, ['customer'], message);
    await d.queueCorrection('cli-corr', 1, ['finance'], message);

    const table = await cli(['corrections', 'list', '--run', 'cli-corr']);
    expect(table.lines[0]).toMatch(/^ID\s+RUN\s+STEP\s+TOOL\s+AUDIENCE\s+STATUS\s+HASH\s+MESSAGE$/);
    expect(table.lines.slice(1).map((l) => l.split(/\s+/)[4])).toEqual(['finance', 'customer']);
    expect(table.stdout).toContain('"template":"email_sent_in_error"');
    expect(table.stdout).toContain('"vars":{"order":"o1"}');
    const [internal, customer] = json<{ corrections: { id: string; hash: string }[] }>(
      await cli(['corrections', 'list', '--run', 'cli-corr', '--json']),
    ).corrections;

    const dismissed = await cli([
      'corrections',
      'dismiss',
      internal!.id,
      '--comment',
      'finance never saw it',
    ]);
    expect(dismissed.code).toBe(0);
    expect(dismissed.stdout).toMatch(/status\s+dismissed/);
    const again = await cli(['corrections', 'dismiss', internal!.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('APPROVAL_DECIDED');

    const badVars = await cli([
      'corrections',
      'edit',
      customer!.id,
      '--hash',
      customer!.hash,
      '--vars',
      'sorry',
    ]);
    expect(badVars.code).toBe(2);
    const edited = json<{ hash: string; command: { vars: unknown } }>(
      await cli([
        'corrections',
        'edit',
        customer!.id,
        '--hash',
        customer!.hash,
        '--vars',
        '{"order":"o1","note":"sorry"}',
        '--json',
      ]),
    );
    expect(edited.hash).not.toBe(customer!.hash);
    expect(edited.command.vars).toEqual({ order: 'o1', note: 'sorry' });
    const stale = await cli(['corrections', 'send', customer!.id, '--hash', customer!.hash]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('APPROVAL_HASH_MISMATCH');
    const noHash = await cli(['corrections', 'send', customer!.id]);
    expect(noHash.code).toBe(2);
    const sent = await cli(['corrections', 'send', customer!.id, '--hash', edited.hash]);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/status\s+sent/);
    expect(sent.stdout).toMatch(/sent as\s+EM-/);
  });
});
