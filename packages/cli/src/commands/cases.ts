import { CaseAction, CaseStatus, type CaseView } from '@agent-saga/client';
import { Option, type Command } from 'commander';
import { apiCommand, connect, parseLimit, type ApiOptions } from '../api-config.js';
import { CliUsageError, printJson, println, type CliIo } from '../cli-io.js';
import { compactJson, formatFields, prettyJson } from '../format-fields.js';
import { formatTable } from '../format-table.js';

/**
 * `agent-saga cases list|resolve`: the operator queue of manual-intervention cases (steps and runs the
 * harness could not settle on its own, with every lookup, attempt and error as evidence) and a person's
 * recorded action on one.
 */
export function registerCases(program: Command, io: CliIo): void {
  const cases = program
    .command('cases')
    .description('manual-intervention cases; resolving needs an operator token');

  apiCommand(cases, 'list', 'cases, oldest first (default: open)')
    .addOption(
      new Option('--status <status>', 'only cases in this status, or all')
        .choices([...Object.values(CaseStatus), 'all'])
        .default(CaseStatus.OPEN),
    )
    .option('--run <runId>', "only this run's cases")
    .option('--limit <n>', 'at most this many (1-500, default 100)', parseLimit)
    .option('--evidence', "print each case's evidence in full after the table")
    .action(
      async (
        opts: ApiOptions & { status: CaseStatus | 'all'; run?: string; limit?: number; evidence?: boolean },
      ) => {
        const list = await connect(io, opts).listCases({
          status: opts.status === 'all' ? undefined : opts.status,
          runId: opts.run,
          limit: opts.limit,
        });
        if (opts.json) return printJson(io, { cases: list });
        io.stdout.write(formatTable(CASE_COLUMNS, list));
        if (opts.evidence)
          for (const c of list) {
            println(io);
            println(io, `case ${c.id} evidence:`);
            println(io, prettyJson(c.evidence));
          }
      },
    );

  apiCommand(cases, 'resolve <caseId>', 'record what a person found or did (operator token)')
    .addOption(
      new Option(
        '--action <action>',
        'confirmed: the effect exists (--external-ref); not_executed: it does not; ' +
          'retry_compensation: try the undo again; resolve_run: nothing more to do',
      )
        .choices(Object.values(CaseAction))
        .makeOptionMandatory(),
    )
    .option('--external-ref <ref>', "for confirmed: the effect's id in the real system, found by hand")
    .option('--comment <text>', 'what was checked, recorded with the resolution')
    .action(
      async (
        caseId: string,
        opts: ApiOptions & { action: CaseAction; externalRef?: string; comment?: string },
      ) => {
        // Caught here rather than by the dispatcher's 409: it is the command line that is incomplete.
        if (opts.action === CaseAction.CONFIRMED && opts.externalRef === undefined)
          throw new CliUsageError(
            '--action confirmed needs --external-ref: the id of the effect found by hand',
          );
        if (opts.action !== CaseAction.CONFIRMED && opts.externalRef !== undefined)
          throw new CliUsageError('--external-ref goes only with --action confirmed');
        const resolved = await connect(io, opts).resolveCase(caseId, {
          action: opts.action,
          ...(opts.externalRef === undefined ? {} : { externalRef: opts.externalRef }),
          ...(opts.comment === undefined ? {} : { comment: opts.comment }),
        });
        if (opts.json) return printJson(io, resolved);
        io.stdout.write(
          formatFields([
            ['case', resolved.id],
            ['run', resolved.runId],
            [
              'step',
              resolved.stepIdx === null ? 'the whole run' : `${resolved.stepIdx} ${resolved.tool ?? ''}`,
            ],
            ['status', resolved.status],
            ['resolved by', resolved.resolvedBy],
            ['resolved at', resolved.resolvedAt],
            ['resolution', resolved.resolution && compactJson(resolved.resolution)],
          ]),
        );
      },
    );
}

const CASE_COLUMNS = [
  { header: 'ID', value: (c: CaseView) => c.id },
  { header: 'RUN', value: (c: CaseView) => c.runId },
  { header: 'STEP', value: (c: CaseView) => c.stepIdx ?? 'run', align: 'right' as const },
  { header: 'TOOL', value: (c: CaseView) => c.tool },
  { header: 'STATUS', value: (c: CaseView) => c.status },
  { header: 'OPENED', value: (c: CaseView) => c.createdAt },
  { header: 'RESOLVED BY', value: (c: CaseView) => c.resolvedBy },
  { header: 'REASON', value: (c: CaseView) => c.reason },
];
