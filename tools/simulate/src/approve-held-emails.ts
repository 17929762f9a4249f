/**
 * The person the agent-saga harness asks before an irreversible call: `send_email` is held for approval
 * (it cannot be unsent), and the simulation plays the operator who decides, with an operator token, as a
 * support lead would in the console. Their rule, a careful person's: approve the email unless the run
 * already holds another `send_email` to the same recipient with the same template (sent, or still
 * waiting) — then it is the agent asking twice, and they reject it. Nothing else is ever decided here.
 */
import { ApprovalDecidedError, type SagaClient } from '@agent-saga/client';
import { sleep } from '../../../test/soak/seeded-random.js';

/** Why 300 ms: a person watching the queue answers within a turn or two of the agent. */
const POLL_MS = 300;
const OPEN_OR_SENT = new Set([
  'CONFIRMED',
  'INTENDED',
  'UNKNOWN',
  'AWAITING_APPROVAL',
  'MANUAL_INTERVENTION',
]);

interface EmailArgs {
  readonly to?: unknown;
  readonly template?: unknown;
}

async function decideOne(operator: SagaClient, approvalId: string): Promise<void> {
  const approval = await operator.getApproval(approvalId);
  if (approval.status !== 'pending') return;
  const run = await operator.getRun(approval.runId);
  const twice = approval.steps.some((held) => {
    const a = held.args as EmailArgs;
    return (
      held.tool === 'send_email' &&
      run.steps.some((s) => {
        const b = s.args as EmailArgs;
        return (
          s.tool === 'send_email' &&
          s.stepIdx !== held.stepIdx &&
          s.stepIdx < held.stepIdx &&
          OPEN_OR_SENT.has(s.status) &&
          b.to === a.to &&
          b.template === a.template
        );
      })
    );
  });
  await operator
    .decideApproval(approval.id, {
      decision: twice ? 'reject' : 'approve',
      hash: approval.hash,
      comment: twice ? 'the run already sent (or holds) this email' : 'approved by the simulation',
    })
    .catch((e: unknown) => {
      if (!(e instanceof ApprovalDecidedError)) throw e;
    });
}

/** Starts deciding held emails every {@link POLL_MS}; the returned function stops it. */
export function approveHeldEmails(operator: SagaClient, onError: (e: unknown) => void): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const pending = await operator.listApprovals({ status: 'pending' });
        for (const a of pending) await decideOne(operator, a.id);
      } catch (e) {
        onError(e);
      }
      await sleep(POLL_MS);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}
