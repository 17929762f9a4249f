import { ApprovalStatus, Decision, type ApprovalView, type SagaClient } from '@agent-saga/client';
import { Option, type Command } from 'commander';
import { apiCommand, connect, parseLimit, type ApiOptions } from '../api-config.js';
import { CliUsageError, printJson, println, type CliIo } from '../cli-io.js';
import {
  compactJson,
  formatFields,
  prettyJson,
  shortHash,
  timeWithDistance,
  type Field,
} from '../format-fields.js';
import { formatTable } from '../format-table.js';

/**
 * `agent-saga approvals list|show|approve|reject`: the approval inbox, one complete proposal, and an
 * operator's decision on it.
 *
 * Why `approve` wants `--hash`: a decision is bound to what the operator saw. The dispatcher approves a
 * proposal only under the hash of its exact canonical arguments, and refuses any other hash (409
 * APPROVAL_HASH_MISMATCH). If the command fetched the current hash and sent it, it would approve whatever
 * the proposal is at that moment, including one the agent replaced after the operator read `show` (a new
 * pivot supersedes the old one; a held step's arguments may differ from what was discussed), and the
 * binding would protect nothing. So the operator passes the hash printed by the `show` they reviewed.
 * `--yes-current` is the explicit opposite: fetch the proposal as it is now, print it in full, and approve
 * exactly that, for when the operator decides on what they are about to see rather than on an earlier read.
 */
export function registerApprovals(program: Command, io: CliIo): void {
  const approvals = program
    .command('approvals')
    .description('the approval inbox; deciding needs an operator token');

  apiCommand(approvals, 'list', 'approvals, soonest deadline first (default: pending)')
    .addOption(
      new Option('--status <status>', 'only approvals in this status, or all')
        .choices([...Object.values(ApprovalStatus), 'all'])
        .default(ApprovalStatus.PENDING),
    )
    .option('--run <runId>', "only this run's approvals")
    .option('--limit <n>', 'at most this many (1-500, default 100)', parseLimit)
    .action(async (opts: ApiOptions & { status: ApprovalStatus | 'all'; run?: string; limit?: number }) => {
      const list = await connect(io, opts).listApprovals({
        status: opts.status === 'all' ? undefined : opts.status,
        runId: opts.run,
        limit: opts.limit,
      });
      if (opts.json) return printJson(io, { approvals: list });
      io.stdout.write(formatTable(APPROVAL_COLUMNS, list));
    });

  apiCommand(
    approvals,
    'show <approvalId>',
    'the complete proposal: every step, its hash, deadline, evidence',
  ).action(async (approvalId: string, opts: ApiOptions) => {
    const a = await connect(io, opts).getApproval(approvalId);
    if (opts.json) return printJson(io, a);
    printProposal(io, a);
  });

  for (const decision of [Decision.APPROVE, Decision.REJECT]) {
    apiCommand(
      approvals,
      `${decision} <approvalId>`,
      `${decision} the proposal whose hash you reviewed (operator token)`,
    )
      .option('--hash <hash>', 'the hash printed by `approvals show` for the proposal you reviewed')
      .addOption(
        new Option(
          '--yes-current',
          `fetch the proposal as it is now, print it, and ${decision} exactly that`,
        ).conflicts('hash'),
      )
      .option('--comment <text>', 'why, recorded with the decision')
      .addHelpText('after', HASH_HELP)
      .action(
        async (
          approvalId: string,
          opts: ApiOptions & { hash?: string; yesCurrent?: boolean; comment?: string },
        ) => {
          if (opts.hash === undefined && !opts.yesCurrent) throw missingHash(decision, approvalId);
          const client = connect(io, opts);
          const hash = opts.hash ?? (await currentHash(io, client, approvalId, opts));
          const decided = await client.decideApproval(approvalId, {
            decision,
            hash,
            ...(opts.comment === undefined ? {} : { comment: opts.comment }),
          });
          if (opts.json) return printJson(io, decided);
          printDecision(io, decided);
        },
      );
  }
}

/** `--yes-current`: the proposal as it is now, printed in full (text mode) before deciding on its hash. */
async function currentHash(
  io: CliIo,
  client: SagaClient,
  approvalId: string,
  opts: ApiOptions,
): Promise<string> {
  const a = await client.getApproval(approvalId);
  if (!opts.json) {
    printProposal(io, a, { hints: false });
    println(io);
  }
  return a.hash;
}

const HASH_HELP = `
A decision is bound to what the operator saw: it carries the hash of the proposal as reviewed
(\`agent-saga approvals show <id>\` prints it), and the dispatcher refuses any other hash
(APPROVAL_HASH_MISMATCH) instead of deciding on a proposal that changed since it was read.
--yes-current decides on the proposal as it is now, printed in full first.`;

function missingHash(decision: Decision, approvalId: string): CliUsageError {
  return new CliUsageError(
    `${decision} needs the hash of the proposal you reviewed: --hash <hash>, as printed by ` +
      `\`agent-saga approvals show ${approvalId}\`. A decision is bound to what the operator saw: if the ` +
      'proposal changed since, the dispatcher refuses the old hash instead of deciding on something nobody ' +
      `read. To ${decision} the proposal as it is now, pass --yes-current.`,
  );
}

const APPROVAL_COLUMNS = [
  { header: 'ID', value: (a: ApprovalView) => a.id },
  { header: 'RUN', value: (a: ApprovalView) => a.runId },
  { header: 'KIND', value: (a: ApprovalView) => a.kind },
  { header: 'STATUS', value: (a: ApprovalView) => a.status },
  { header: 'STEPS', value: (a: ApprovalView) => a.steps.map((s) => s.tool).join(', ') },
  { header: 'AUDIENCE', value: (a: ApprovalView) => (a.evidence.audience ?? []).join(',') },
  { header: 'DEADLINE', value: (a: ApprovalView) => a.expiresAt },
  { header: 'HASH', value: (a: ApprovalView) => shortHash(a.hash) },
  { header: 'SUMMARY', value: (a: ApprovalView) => a.summary },
];

/** Evidence fields printed in their own lines; any other field is printed as it came. */
const SHOWN_EVIDENCE = new Set([
  'audience',
  'staged',
  'residualRisk',
  'deadline',
  'actions',
  'action',
  'resource',
]);

/**
 * The complete proposal as an approver must read it: the approval, each step with its tool, class, key,
 * audience and the exact arguments that will execute (whole, over several lines), the evidence (what is
 * staged, the residual risk, the deadline) and the hash a decision must carry.
 */
export function printProposal(io: CliIo, a: ApprovalView, { hints = true } = {}): void {
  io.stdout.write(
    formatFields([
      ['approval', a.id],
      ['kind', a.kind],
      ['status', a.status],
      ['run', a.runId],
      ['summary', a.summary],
      ['hash', a.hash],
      ['deadline', timeWithDistance(a.expiresAt)],
      ['created', a.createdAt],
      ['decided', a.decidedBy === null ? null : `${a.status} by ${a.decidedBy} at ${a.decidedAt ?? '?'}`],
      ['comment', a.comment],
    ]),
  );
  println(io);
  println(io, `STEPS (${a.steps.length}, in the order they will run)`);
  for (const [i, s] of a.steps.entries()) {
    if (i > 0) println(io);
    println(io, `step ${s.stepIdx}  ${s.tool}`);
    const resource = resourceOf(a, s.stepIdx);
    io.stdout.write(
      formatFields(
        [
          ['class', s.toolClass],
          ['key', s.idempotencyKey],
          ['audience', s.audience.join(', ')],
          ...(resource === undefined ? [] : [['resource', compactJson(resource)] as Field]),
          ['status', s.status],
          ['args', prettyJson(s.args)],
        ],
        '  ',
      ),
    );
  }
  println(io);
  println(io, 'EVIDENCE');
  const e = a.evidence;
  const staged = (e.staged ?? []).map(
    (s) =>
      `step ${s.stepIdx} ${s.tool}${s.class ? ` (${s.class})` : ''}, ref ${s.externalRef ?? '-'}` +
      (s.holdEndsAt ? `, hold ends ${s.holdEndsAt}` : ''),
  );
  const other = Object.entries(e).filter(([k]) => !SHOWN_EVIDENCE.has(k));
  io.stdout.write(
    formatFields(
      [
        ['audience', (e.audience ?? []).join(', ')],
        ['staged', staged.length ? staged.join('\n') : 'nothing'],
        ['residual risk', e.residualRisk],
        ['deadline', e.deadline],
        ...other.map(([k, v]) => [k, prettyJson(v)] as Field),
      ],
      '  ',
    ),
  );
  if (hints && a.status === ApprovalStatus.PENDING) {
    println(io);
    println(io, 'to decide on exactly this proposal:');
    println(io, `  agent-saga approvals approve ${a.id} --hash ${a.hash}`);
    println(io, `  agent-saga approvals reject ${a.id} --hash ${a.hash} --comment <why>`);
  }
}

/** The resource a step touches, as the evidence names it (`actions[]` of a pivot, `resource` of a step). */
function resourceOf(a: ApprovalView, stepIdx: number): unknown {
  const actions: unknown = a.evidence.actions;
  if (Array.isArray(actions)) {
    const action: unknown = actions.find(
      (x: unknown) => typeof x === 'object' && x !== null && (x as { stepIdx?: unknown }).stepIdx === stepIdx,
    );
    return action === undefined ? undefined : (action as { resource?: unknown }).resource;
  }
  return a.steps.length === 1 ? a.evidence.resource : undefined;
}

function printDecision(io: CliIo, a: ApprovalView): void {
  io.stdout.write(
    formatFields([
      ['approval', a.id],
      ['run', a.runId],
      ['status', a.status],
      ['decided by', a.decidedBy],
      ['decided at', a.decidedAt],
      ['hash', a.hash],
      ['comment', a.comment],
    ]),
  );
  println(io);
  io.stdout.write(
    formatTable(
      [
        { header: 'STEP', value: (s: ApprovalView['steps'][number]) => s.stepIdx, align: 'right' },
        { header: 'TOOL', value: (s) => s.tool },
        { header: 'STATUS', value: (s) => s.status },
      ],
      a.steps,
    ),
  );
}
