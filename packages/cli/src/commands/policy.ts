import { readFileSync } from 'node:fs';
import type { FloorBudget, PolicyFloorInput, PolicyFloorView, RunPolicy } from '@agent-saga/client';
import { policyFloorSchema } from '@agent-saga/core';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { apiCommand, connect, type ApiOptions } from '../api-config.js';
import { CliUsageError, printJson, type CliIo } from '../cli-io.js';
import { formatFields, type Field } from '../format-fields.js';
import { parseDuration } from './tokens.js';

/**
 * `agent-saga policy show|set`: the tenant's policy floor, which every run the tenant creates from then on
 * may tighten and never loosen (operator token; an agent token is refused 403).
 *
 * `set` replaces the part its flags name, whole: any policy flag (`--require-pivot`, `--approve-money-above`,
 * …) sets the policy floor to exactly those flags, any budget flag (`--max-steps`, `--deadline`, …) the
 * budget ceilings, and a part with no flag is kept as it is. `--file` gives the floor as JSON
 * (`{ "policy": {…}, "budget": {…} }`, checked here with core's schema, naming a bad field) instead of
 * flags. `--if-version` makes the change a compare-and-set on the version `show` printed.
 */
export function registerPolicy(program: Command, io: CliIo): void {
  const policy = program
    .command('policy')
    .description("the tenant's policy floor: what every new run's policy and budget must at least be");

  apiCommand(policy, 'show', 'the policy floor, its version and who set it last').action(
    async (opts: ApiOptions) => {
      const floor = await connect(io, opts).getPolicy();
      if (opts.json) return printJson(io, floor);
      printFloor(io, floor);
    },
  );

  apiCommand(policy, 'set', 'set the policy floor; each part named by a flag is replaced whole')
    .option('--require-pivot', 'refuse irreversible calls outside a pivot')
    .option('--unwind-on-failure', 'unwind by itself on a definitive failure before the pivot')
    .option('--approve-deletions', 'hold a compensation that deletes for an approval')
    .option(
      '--approve-money-above <CUR=amount>',
      'hold a call moving more than this, minor units (repeatable: USD=50000)',
      collectMoney,
    )
    .option('--authority-ttl <duration>', "how long a run's authority lasts: 1h, 30m, 2d", parseDuration)
    .option('--max-steps <n>', 'side-effecting steps a run may take', parsePositive)
    .option('--max-amount <CUR=amount>', 'money a run may move, minor units (repeatable)', collectMoney)
    .option('--deadline <duration>', 'how long after its creation a run may go on: 4h, 1d', parseDuration)
    .option('--max-attempts <n>', 'sends a run may make in all', parsePositive)
    .addOption(
      new Option('--file <path>', 'the floor as JSON: { "policy": {...}, "budget": {...} }').conflicts([
        'requirePivot',
        'unwindOnFailure',
        'approveDeletions',
        'approveMoneyAbove',
        'authorityTtl',
        'maxSteps',
        'maxAmount',
        'deadline',
        'maxAttempts',
      ]),
    )
    .option('--if-version <n>', 'only if the floor is still at this version (0: none set yet)', parseVersion)
    .action(async (opts: ApiOptions & SetOptions) => {
      const change = opts.file ? readFloorFile(opts.file) : fromFlags(opts);
      const floor = await connect(io, opts).setPolicy({ ...change, ifVersion: opts.ifVersion });
      if (opts.json) return printJson(io, floor);
      printFloor(io, floor);
    });
}

interface SetOptions {
  readonly requirePivot?: boolean;
  readonly unwindOnFailure?: boolean;
  readonly approveDeletions?: boolean;
  readonly approveMoneyAbove?: Record<string, number>;
  readonly authorityTtl?: number;
  readonly maxSteps?: number;
  readonly maxAmount?: Record<string, number>;
  readonly deadline?: number;
  readonly maxAttempts?: number;
  readonly file?: string;
  readonly ifVersion?: number;
}

/** The parts the flags name; a part without a flag is left out of the request, so it is kept. */
function fromFlags(o: SetOptions): PolicyFloorInput {
  const policy: RunPolicy = {
    ...(o.requirePivot ? { requirePivot: true } : {}),
    ...(o.unwindOnFailure ? { unwindOnFailure: true } : {}),
    ...(o.approveDeletions ? { approveDeletions: true } : {}),
    ...(o.approveMoneyAbove ? { approveMoneyAbove: o.approveMoneyAbove } : {}),
    ...(o.authorityTtl !== undefined ? { authorityTtlMs: o.authorityTtl } : {}),
  };
  const budget: FloorBudget = {
    ...(o.maxSteps !== undefined ? { maxSteps: o.maxSteps } : {}),
    ...(o.maxAmount ? { maxAmount: o.maxAmount } : {}),
    ...(o.deadline !== undefined ? { deadlineMs: o.deadline } : {}),
    ...(o.maxAttempts !== undefined ? { maxAttempts: o.maxAttempts } : {}),
  };
  const hasPolicy = Object.keys(policy).length > 0;
  const hasBudget = Object.keys(budget).length > 0;
  if (!hasPolicy && !hasBudget)
    throw new CliUsageError('policy set: name at least one flag (see --help), or give the floor with --file');
  return { ...(hasPolicy ? { policy } : {}), ...(hasBudget ? { budget } : {}) };
}

/** `--file`: JSON checked against core's floor schema; a bad field is a usage error naming it (exit 2). */
function readFloorFile(path: string): PolicyFloorInput {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliUsageError(
      `--file: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliUsageError(`--file: ${path} is not JSON`);
  }
  const parsed = policyFloorSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || '(the file)';
    throw new CliUsageError(`--file: ${field}: ${issue.message}`);
  }
  return parsed.data;
}

function printFloor(io: CliIo, f: PolicyFloorView): void {
  const fields: Field[] = [
    ['version', f.version === 0 ? '0 (no floor set)' : f.version],
    ['updated by', f.updatedBy === null ? null : `${f.updatedBy} (${f.updatedByTokenId ?? 'no token'})`],
    ['updated at', f.updatedAt],
    ...entries('policy', f.policy),
    ...entries('budget', f.budget),
  ];
  io.stdout.write(formatFields(fields));
}

/** `policy.requirePivot true`, `policy.approveMoneyAbove eur=100 usd=50000` (by currency); `-` for none. */
function entries(part: string, values: Readonly<Record<string, unknown>>): Field[] {
  const list = Object.entries(values);
  if (list.length === 0) return [[part, null]];
  return list.map(([key, v]) => [
    `${part}.${key}`,
    v !== null && typeof v === 'object'
      ? Object.entries(v)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([c, n]) => `${c}=${String(n)}`)
          .join(' ')
      : String(v),
  ]);
}

/** `USD=50000` into the map so far (the flag repeats); a currency twice is refused. */
function collectMoney(value: string, previous: Record<string, number> | undefined): Record<string, number> {
  const m = /^([A-Za-z]{3})=(\d+)$/.exec(value);
  if (!m?.[1] || !m[2])
    throw new InvalidArgumentError('a limit is a currency code and an amount in minor units: USD=50000.');
  const currency = m[1].toLowerCase();
  if (previous && currency in previous) throw new InvalidArgumentError(`${currency} is named twice.`);
  return { ...previous, [currency]: Number(m[2]) };
}

function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer.');
  return n;
}

function parseVersion(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('a version is an integer from 0.');
  return n;
}
