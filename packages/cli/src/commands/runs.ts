import { RunStatus, type RunSummary, type RunView, type StepEvent } from '@agent-saga/client';
import { Option, type Command } from 'commander';
import { apiCommand, connect, parseLimit, type ApiOptions } from '../api-config.js';
import { printJson, println, type CliIo } from '../cli-io.js';
import { compactJson, formatFields, shortHash } from '../format-fields.js';
import { formatTable, type Column } from '../format-table.js';

/**
 * `agent-saga runs list|show`: the tenant's runs with what waits for a person, and one run as the log tells
 * it: its steps, approvals, cases and corrections, and with `--events` every transition, attempt, lookup
 * and decision in order.
 */
export function registerRuns(program: Command, io: CliIo): void {
  const runs = program.command('runs').description("read the tenant's runs (any token)");

  apiCommand(runs, 'list', 'the runs, newest first, with pending approvals, open cases and corrections')
    .addOption(new Option('--status <status>', 'only runs in this status').choices(Object.values(RunStatus)))
    .option('--limit <n>', 'at most this many runs (1-500, default 100)', parseLimit)
    .action(async (opts: ApiOptions & { status?: RunStatus; limit?: number }) => {
      const list = await connect(io, opts).listRuns({ status: opts.status, limit: opts.limit });
      if (opts.json) return printJson(io, { runs: list });
      io.stdout.write(formatTable(RUN_COLUMNS, list));
    });

  apiCommand(runs, 'show <runId>', 'one run: its steps, approvals, cases, corrections (and --events)')
    .option('--events', 'also print the timeline: every transition, attempt, lookup and decision')
    .action(async (runId: string, opts: ApiOptions & { events?: boolean }) => {
      const client = connect(io, opts);
      const [run, events] = await Promise.all([
        client.getRun(runId),
        opts.events ? client.getEvents(runId) : Promise.resolve(undefined),
      ]);
      if (opts.json) return printJson(io, events ? { ...run, events } : run);
      printRun(io, run);
      if (events) tableSection(io, 'TIMELINE', EVENT_COLUMNS, events);
    });
}

const RUN_COLUMNS = [
  { header: 'RUN', value: (r: RunSummary) => r.runId },
  { header: 'STATUS', value: (r: RunSummary) => r.status },
  { header: 'STEPS', value: (r: RunSummary) => r.steps, align: 'right' as const },
  { header: 'APPROVALS', value: (r: RunSummary) => r.pendingApprovals, align: 'right' as const },
  { header: 'CASES', value: (r: RunSummary) => r.openCases, align: 'right' as const },
  { header: 'CORRECTIONS', value: (r: RunSummary) => r.openCorrections, align: 'right' as const },
  { header: 'UPDATED', value: (r: RunSummary) => r.updatedAt },
  { header: 'REASON', value: (r: RunSummary) => r.statusReason },
];

type Step = RunView['steps'][number];
const STEP_COLUMNS = [
  { header: 'STEP', value: (s: Step) => s.stepIdx, align: 'right' as const },
  { header: 'TOOL', value: (s: Step) => s.tool },
  { header: 'CLASS', value: (s: Step) => s.toolClass },
  { header: 'STATUS', value: (s: Step) => s.status },
  { header: 'REF', value: (s: Step) => s.externalRef },
  { header: 'ATTEMPTS', value: (s: Step) => s.attempts, align: 'right' as const },
  { header: 'COMPENSATION', value: (s: Step) => s.compensationStatus },
  { header: 'AUDIENCE', value: (s: Step) => s.audience.join(',') },
  { header: 'KEY', value: (s: Step) => s.idempotencyKey },
];

type Approval = RunView['approvals'][number];
const APPROVAL_COLUMNS = [
  { header: 'ID', value: (a: Approval) => a.id },
  { header: 'KIND', value: (a: Approval) => a.kind },
  { header: 'STATUS', value: (a: Approval) => a.status },
  { header: 'STEPS', value: (a: Approval) => a.steps.map((s) => s.stepIdx).join(',') },
  { header: 'DEADLINE', value: (a: Approval) => a.expiresAt },
  { header: 'DECIDED BY', value: (a: Approval) => a.decidedBy },
  { header: 'HASH', value: (a: Approval) => shortHash(a.hash) },
];

type Case = RunView['cases'][number];
const CASE_COLUMNS = [
  { header: 'ID', value: (c: Case) => c.id },
  { header: 'STEP', value: (c: Case) => c.stepIdx, align: 'right' as const },
  { header: 'TOOL', value: (c: Case) => c.tool },
  { header: 'STATUS', value: (c: Case) => c.status },
  { header: 'RESOLVED BY', value: (c: Case) => c.resolvedBy },
  { header: 'REASON', value: (c: Case) => c.reason },
];

type Correction = RunView['corrections'][number];
const CORRECTION_COLUMNS = [
  { header: 'ID', value: (c: Correction) => c.id },
  { header: 'STEP', value: (c: Correction) => c.stepIdx, align: 'right' as const },
  { header: 'TOOL', value: (c: Correction) => c.tool },
  { header: 'AUDIENCE', value: (c: Correction) => c.audience.join(',') },
  { header: 'STATUS', value: (c: Correction) => c.status },
  { header: 'DECIDED BY', value: (c: Correction) => c.decidedBy },
  { header: 'HASH', value: (c: Correction) => shortHash(c.hash) },
];

const EVENT_COLUMNS = [
  { header: 'AT', value: (e: StepEvent) => e.at },
  { header: 'STEP', value: (e: StepEvent) => e.stepIdx ?? 'run', align: 'right' as const },
  { header: 'KIND', value: (e: StepEvent) => e.kind },
  {
    header: 'FROM → TO',
    value: (e: StepEvent) => (e.from === null && e.to === null ? null : `${e.from ?? '·'} → ${e.to ?? '·'}`),
  },
  { header: 'ACTOR', value: (e: StepEvent) => e.actor },
  { header: 'CAUSE', value: (e: StepEvent) => e.cause },
];

function printRun(io: CliIo, run: RunView): void {
  const policy = Object.entries(run.policy)
    .filter(([, on]) => on === true)
    .map(([name]) => name);
  io.stdout.write(
    formatFields([
      ['run', run.runId],
      ['status', run.status],
      ['reason', run.statusReason],
      ['policy', policy.length ? policy.join(', ') : 'default'],
      ['pivot', run.pivotIdx === null ? 'none' : `commit steps from step ${run.pivotIdx}`],
      ['irreversible before pivot', run.irreversibleBeforePivot],
      ['metadata', run.metadata && compactJson(run.metadata)],
      ['created', run.createdAt],
      ['updated', run.updatedAt],
    ]),
  );
  tableSection(io, 'STEPS', STEP_COLUMNS, run.steps);
  tableSection(io, 'APPROVALS', APPROVAL_COLUMNS, run.approvals);
  tableSection(io, 'CASES', CASE_COLUMNS, run.cases);
  tableSection(io, 'CORRECTIONS', CORRECTION_COLUMNS, run.corrections);
}

/** A titled table after a blank line; `(none)` rather than a lone header when there are no rows. */
function tableSection<Row>(io: CliIo, title: string, columns: readonly Column<Row>[], rows: readonly Row[]) {
  println(io);
  println(io, title);
  if (rows.length === 0) println(io, '(none)');
  else io.stdout.write(formatTable(columns, rows));
}
