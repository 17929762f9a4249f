/**
 * The person the agent-saga harness asks before an irreversible call: `send_email` is held for approval
 * (it cannot be unsent), and the simulation plays the operator who decides, with an operator token, as a
 * support lead would in the console. Their rule, a careful person's: approve the email unless the run
 * already holds another `send_email` to the same recipient with the same template (sent, or still
 * waiting) — then it is the agent asking twice, and they reject it.
 *
 * A pivot (`kind: "pivot"`: a capture, a reship and an email under one hash) gets the checks a support lead
 * makes before money is taken: they look the order up in the warehouse and reject the proposal when it
 * will not be reshipped (not eligible), and when a capture names a PaymentIntent the run holds no confirmed
 * hold for; the email rule above applies too. Otherwise they approve, sending the hash they read.
 */
import { ApprovalDecidedError, type SagaClient } from '@agent-saga/client';
import { sleep } from '../../../test/soak/seeded-random.js';

/** Why 300 ms: a person watching the queue answers within a turn or two of the agent. */
const POLL_MS = 300;
/**
 * Why 8: the support team deciding side by side, so that one held email is answered within a turn or two
 * however many wait. Until 5 December 2026 one person decided them one after another (three requests each
 * to a loaded api): at 64 episodes in flight an email waited 4.3 s for its decision at the median and
 * 12.8 s at p99 (`pnpm simulate --seed 20265`, 699 listed episodes), and an eager agent's 20 s ran out.
 */
const DECIDERS = 8;
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

/** What the person can look up outside agent-saga: the shop's own records. */
export interface OperatorLookups {
  /** Whether the warehouse will reship the order (the person reads it in the shop's back office). */
  orderEligible(orderId: string): Promise<boolean>;
}

type ApprovalView = Awaited<ReturnType<SagaClient['getApproval']>>;
type RunView = Awaited<ReturnType<SagaClient['getRun']>>;

/** Why a person rejects a pivot, or null when they approve it. */
async function pivotRefusal(approval: ApprovalView, run: RunView, lookups: OperatorLookups) {
  for (const step of approval.steps) {
    const args = (step.args ?? {}) as { orderId?: unknown; paymentIntent?: unknown };
    if (
      step.tool === 'reship' &&
      typeof args.orderId === 'string' &&
      !(await lookups.orderEligible(args.orderId))
    )
      return `the warehouse will not reship order ${args.orderId}`;
    if (
      step.tool === 'capture_payment' &&
      !run.steps.some(
        (s) =>
          s.tool === 'authorize_payment' && s.status === 'CONFIRMED' && s.externalRef === args.paymentIntent,
      )
    )
      return `the run holds no confirmed hold ${String(args.paymentIntent)} to capture`;
  }
  return null;
}

async function decideOne(operator: SagaClient, approvalId: string, lookups: OperatorLookups): Promise<void> {
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
  const refusal = twice
    ? 'the run already sent (or holds) this email'
    : approval.kind === 'pivot'
      ? await pivotRefusal(approval, run, lookups)
      : null;
  await operator
    .decideApproval(approval.id, {
      decision: refusal === null ? 'approve' : 'reject',
      hash: approval.hash,
      comment: refusal ?? 'approved by the simulation',
    })
    .catch((e: unknown) => {
      if (!(e instanceof ApprovalDecidedError)) throw e;
    });
}

/**
 * Starts deciding held emails and pivots every {@link POLL_MS}, up to {@link DECIDERS} at once; the returned
 * function stops it.
 */
export function approveHeldEmails(
  operator: SagaClient,
  lookups: OperatorLookups,
  onError: (e: unknown) => void,
): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const pending = await operator.listApprovals({ status: 'pending' });
        // One that fails (an api replica killed under the request) is tried again on the next round; the
        // team goes on with the others meanwhile, as anyone whose click failed would. Until 5 December
        // 2026 a failure ended the round, and the approvals listed after it waited: in one run an email
        // was decided 19 s after it was held while the api answered the agent every second or two.
        const queue = [...pending];
        const decider = async () => {
          for (let a = queue.shift(); a !== undefined; a = queue.shift())
            await decideOne(operator, a.id, lookups).catch(onError);
        };
        await Promise.all(Array.from({ length: Math.min(DECIDERS, queue.length) }, decider));
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
