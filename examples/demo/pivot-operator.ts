/**
 * The operator's side of the pivot story, through the dispatcher's approval API with an operator token:
 * the proposal as a person reads it (`GET /v1/approvals/{id}`), the decisions the harness refuses (a
 * stale hash, an agent's token), and the decision itself — made by the script, or, with `--interactive`,
 * by a person with the CLI while the demo waits.
 */
import {
  ApiErrorCode,
  Decision,
  SagaApiError,
  type ApprovalView,
  type ProposedStep,
  type SagaClient,
} from '@agent-saga/client';
import { proposalHash } from '@agent-saga/core';
import { answer, aside, say } from './narration.js';
import { waitFor } from './wait-for.js';

/** How long `--interactive` waits for a person before the story gives up. */
const PERSON_WAIT_MS = 10 * 60_000;

function untilDeadline(expiresAt: string): string {
  const minutes = Math.round((Date.parse(expiresAt) - Date.now()) / 60_000);
  return minutes >= 120 ? `in ${Math.round(minutes / 60)} h` : `in ${minutes} min`;
}

/** Prints the proposal as the inbox shows it: what will execute, what is staged, who sees it, by when. */
export function printProposal(a: ApprovalView): void {
  say(`   approval  ${a.id}  (${a.kind}, ${a.status}) for run ${a.runId}`);
  say(`   summary   ${a.summary ?? '(none)'}`);
  say(`   hash      ${a.hash}`);
  say(`   deadline  ${a.expiresAt} (${untilDeadline(a.expiresAt)})`);
  say('   steps     what will execute, exactly, once approved:');
  for (const s of a.steps)
    say(
      `     step ${s.stepIdx}  ${s.tool.padEnd(16)} ${s.toolClass.padEnd(13)} ${JSON.stringify(s.args)}  → ${s.audience.join(', ')}`,
    );
  const { staged = [], audience = [], residualRisk } = a.evidence;
  say('   staged    done before the pivot, undone if it is refused:');
  for (const s of staged)
    say(
      `     step ${s.stepIdx}  ${s.tool.padEnd(19)} ${(s.class ?? '').padEnd(13)} ${s.externalRef ?? ''}${s.holdEndsAt ? `  (hold ends ${s.holdEndsAt})` : ''}`,
    );
  say(`   audience  ${audience.join(', ')}`);
  say(`   risk      ${residualRisk ?? '(none stated)'}`);
}

/**
 * The hash of a copy of the proposal whose email carries another amount: what a decision made on an
 * edited or outdated view of the proposal would carry. The view does not show tool versions; whatever
 * version is hashed, the copy's hash is not the proposal's, which is all the refusal needs.
 */
function hashOfEditedCopy(a: ApprovalView): string {
  const edit = (s: ProposedStep): Record<string, unknown> => {
    const args = { ...(s.args as Record<string, unknown>) };
    if (s.tool === 'send_email') args.vars = { ...(args.vars as object), amount: 49_000 };
    return args;
  };
  return proposalHash(
    a.runId,
    a.steps.map((s) => ({
      stepIdx: s.stepIdx,
      tool: s.tool,
      toolVersion: 1,
      key: s.idempotencyKey,
      args: edit(s),
    })),
  );
}

/** Awaits a decision that must be refused with `status` and `code`; throws if it was not. */
async function expectRefusal(what: string, decided: Promise<ApprovalView>, status: number, code: string) {
  try {
    const a = await decided;
    throw new Error(`${what} was not refused: the approval is now ${a.status}`);
  } catch (e) {
    if (!(e instanceof SagaApiError) || e.status !== status || e.code !== code) throw e;
    answer(`${e.status} ${e.code}: ${e.message}`);
  }
}

/** The decisions the harness refuses, each shown on the live approval; none of them changes it. */
export async function showRefusedDecisions(
  operator: SagaClient,
  agent: SagaClient,
  a: ApprovalView,
): Promise<void> {
  const stale = hashOfEditedCopy(a);
  say(
    `   the operator approves with the hash of an edited copy (the email says 490.00 EUR): ${stale.slice(0, 16)}…`,
  );
  await expectRefusal(
    'a decision with a stale hash',
    operator.decideApproval(a.id, { decision: Decision.APPROVE, hash: stale }),
    409,
    ApiErrorCode.APPROVAL_HASH_MISMATCH,
  );
  say('   the agent approves its own proposal, with the right hash, with its agent token:');
  await expectRefusal(
    "an agent token's decision",
    agent.decideApproval(a.id, { decision: Decision.APPROVE, hash: a.hash }),
    403,
    ApiErrorCode.FORBIDDEN,
  );
  const still = await operator.getApproval(a.id);
  aside(`the approval is still ${still.status}, its hash unchanged: ${String(still.hash === a.hash)}`);
}

/** The operator decides with the hash it read. */
export async function decide(
  operator: SagaClient,
  a: ApprovalView,
  decision: Decision,
  comment: string,
): Promise<ApprovalView> {
  const decided = await operator.decideApproval(a.id, { decision, hash: a.hash, comment });
  answer(
    `POST /v1/approvals/${a.id}/decision { decision: "${decision}", hash: "${a.hash.slice(0, 16)}…" } → 200 ${decided.status} by ${decided.decidedBy ?? '?'} at ${decided.decidedAt ?? '?'}`,
  );
  return decided;
}

export interface PersonAtTheCli {
  readonly baseUrl: string;
  readonly operatorToken: string;
}

/**
 * `--interactive`: prints the CLI command that decides the approval and waits until the run has left
 * AWAITING_APPROVAL (whoever decided, however); returns the approval as decided.
 */
export async function waitForPerson(
  operator: SagaClient,
  a: ApprovalView,
  suggested: Decision,
  cli: PersonAtTheCli,
): Promise<ApprovalView> {
  say('   a person decides. In another terminal, at the repository root:');
  say(`     export AGENT_SAGA_URL=${cli.baseUrl} AGENT_SAGA_TOKEN=${cli.operatorToken}`);
  say(`     pnpm agent-saga approvals ${suggested} ${a.id} --hash ${a.hash}`);
  say('   or, with curl:');
  say(
    `     curl -X POST "$AGENT_SAGA_URL/v1/approvals/${a.id}/decision" -H "authorization: Bearer $AGENT_SAGA_TOKEN" -H 'content-type: application/json' -d '${JSON.stringify({ decision: suggested, hash: a.hash })}'`,
  );
  aside(`(the story suggests "${suggested}"; either decision is checked for what it must do)`);
  aside(`waiting up to ${PERSON_WAIT_MS / 60_000} minutes for run ${a.runId} to leave AWAITING_APPROVAL …`);
  await waitFor(
    `a person to decide approval ${a.id}`,
    async () => ((await operator.getRun(a.runId)).status === 'AWAITING_APPROVAL' ? undefined : true),
    PERSON_WAIT_MS,
    500,
  );
  const decided = await operator.getApproval(a.id);
  answer(`${decided.status} by ${decided.decidedBy ?? '?'} at ${decided.decidedAt ?? '?'}`);
  return decided;
}
