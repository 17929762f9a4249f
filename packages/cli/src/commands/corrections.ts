import { CorrectionStatus, type CorrectionView } from '@agent-saga/client';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { z } from 'zod';
import { apiCommand, connect, parseLimit, type ApiOptions } from '../api-config.js';
import { printJson, println, type CliIo } from '../cli-io.js';
import { compactJson, formatFields } from '../format-fields.js';
import { formatTable } from '../format-table.js';

/**
 * `agent-saga corrections list|send|edit|dismiss`: the corrections the compensator queued for a person
 * (internal audiences first, customer-facing last), each a pre-written message the harness never sends by
 * itself. The list prints each message whole with its full hash: that row is what the operator reviews,
 * and `send` (like `approvals approve`) takes that hash, so a message edited since is refused (409
 * APPROVAL_HASH_MISMATCH) rather than sent unread.
 */
export function registerCorrections(program: Command, io: CliIo): void {
  const corrections = program
    .command('corrections')
    .description('queued corrections; sending, editing and dismissing need an operator token');

  apiCommand(corrections, 'list', 'corrections, customer-facing last (default: open)')
    .addOption(
      new Option('--status <status>', 'only corrections in this status, or all')
        .choices([...Object.values(CorrectionStatus), 'all'])
        .default(CorrectionStatus.OPEN),
    )
    .option('--run <runId>', "only this run's corrections")
    .option('--limit <n>', 'at most this many (1-500, default 100)', parseLimit)
    .action(async (opts: ApiOptions & { status: CorrectionStatus | 'all'; run?: string; limit?: number }) => {
      const list = await connect(io, opts).listCorrections({
        status: opts.status === 'all' ? undefined : opts.status,
        runId: opts.run,
        limit: opts.limit,
      });
      if (opts.json) return printJson(io, { corrections: list });
      io.stdout.write(formatTable(CORRECTION_COLUMNS, list));
    });

  apiCommand(corrections, 'send <correctionId>', 'send the message whose hash you reviewed (operator token)')
    .requiredOption('--hash <hash>', 'the hash `corrections list` printed for the message you reviewed')
    .option('--comment <text>', 'recorded with the send')
    .action(async (id: string, opts: ApiOptions & { hash: string; comment?: string }) => {
      const sent = await connect(io, opts).sendCorrection(id, {
        hash: opts.hash,
        ...(opts.comment === undefined ? {} : { comment: opts.comment }),
      });
      if (opts.json) return printJson(io, sent);
      printCorrection(io, sent);
    });

  apiCommand(
    corrections,
    'edit <correctionId>',
    "replace the message's template variables: a new message, with a new hash to review (operator token)",
  )
    .requiredOption('--hash <hash>', 'the hash of the message you are editing')
    .requiredOption('--vars <json>', 'the new template variables, a JSON object', parseVars)
    .action(async (id: string, opts: ApiOptions & { hash: string; vars: Record<string, unknown> }) => {
      const edited = await connect(io, opts).editCorrection(id, { hash: opts.hash, vars: opts.vars });
      if (opts.json) return printJson(io, edited);
      printCorrection(io, edited);
      println(io);
      println(io, 'review the new message, then send it with its new hash:');
      println(io, `  agent-saga corrections send ${edited.id} --hash ${edited.hash}`);
    });

  apiCommand(corrections, 'dismiss <correctionId>', 'send nothing and close it (operator token)')
    .option('--comment <text>', 'why (the customer never saw the original, say)')
    .action(async (id: string, opts: ApiOptions & { comment?: string }) => {
      const dismissed = await connect(io, opts).dismissCorrection(
        id,
        opts.comment === undefined ? {} : { comment: opts.comment },
      );
      if (opts.json) return printJson(io, dismissed);
      printCorrection(io, dismissed);
    });
}

const CORRECTION_COLUMNS = [
  { header: 'ID', value: (c: CorrectionView) => c.id },
  { header: 'RUN', value: (c: CorrectionView) => c.runId },
  { header: 'STEP', value: (c: CorrectionView) => c.stepIdx, align: 'right' as const },
  { header: 'TOOL', value: (c: CorrectionView) => c.tool },
  { header: 'AUDIENCE', value: (c: CorrectionView) => c.audience.join(',') },
  { header: 'STATUS', value: (c: CorrectionView) => c.status },
  { header: 'HASH', value: (c: CorrectionView) => c.hash },
  { header: 'MESSAGE', value: (c: CorrectionView) => compactJson(c.command) },
];

function printCorrection(io: CliIo, c: CorrectionView): void {
  io.stdout.write(
    formatFields([
      ['correction', c.id],
      ['run', c.runId],
      ['step', `${c.stepIdx} ${c.tool ?? ''}`],
      ['audience', c.audience.join(', ')],
      ['status', c.status],
      ['message', compactJson(c.command)],
      ['hash', c.hash],
      ['key', c.idempotencyKey],
      ['sent as', c.externalRef],
      ['decided by', c.decidedBy],
      ['decided at', c.decidedAt],
      ['comment', c.comment],
    ]),
  );
}

const varsSchema = z.record(z.string(), z.unknown());

/** `--vars`: a JSON object, parsed, never passed on as text. */
function parseVars(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('not JSON; pass a JSON object such as \'{"note":"sorry"}\'.');
  }
  const vars = varsSchema.safeParse(parsed);
  if (!vars.success) throw new InvalidArgumentError('must be a JSON object.');
  return vars.data;
}
