import {
  BadRequestError,
  TokenRole,
  TokenScope,
  assertSchemaVersion,
  issueApiToken,
  listApiTokens,
  revokeApiToken,
  rotateApiToken,
  valuesOf,
} from '@agent-saga/core';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { CliUsageError, printJson, println, type CliIo } from '../cli-io.js';
import { parseDatabaseConfig, withDatabase } from '../database.js';

/**
 * `agent-saga tokens create --tenant T --role agent|operator [--scope tenant|own-runs] [--label L]
 * [--expires-in 30d]`: creates an API token and prints it as the last line of its output (`| tail -n 1`
 * takes it). Only its sha256 is stored; this is the one time the plain token exists. `tokens list`,
 * `tokens revoke <id>` and `tokens rotate <id>` (a new secret, printed once, same id) manage it later.
 */
export function registerTokens(program: Command, io: CliIo): void {
  const tokens = program.command('tokens').description('manage API tokens');
  tokens
    .command('create')
    .description('create a token for one tenant and role, printed once as the last line')
    .requiredOption('--tenant <tenant>', 'the tenant the token acts for', parseTenant)
    .addOption(
      new Option('--role <role>', 'agent: calls tools; operator: decides approvals and cases')
        .choices(valuesOf(TokenRole))
        .makeOptionMandatory(),
    )
    .addOption(
      new Option(
        '--scope <scope>',
        'tenant: every run of the tenant; own-runs: only the runs it creates (agent only)',
      )
        .choices(valuesOf(TokenScope))
        .default(TokenScope.TENANT),
    )
    .option('--label <label>', 'unique per tenant: who or what holds it (recorded on its decisions)')
    .option('--expires-in <duration>', 'lifetime: 30d, 12h, 45m or 90s (default: never)', parseDuration)
    .option('--json', 'print { id, tenantId, role, scope, label, expiresAt, token } as JSON')
    .action(
      async (opts: {
        tenant: string;
        role: TokenRole;
        scope: TokenScope;
        label?: string;
        expiresIn?: number;
        json?: boolean;
      }) => {
        const config = parseDatabaseConfig(io);
        const input = {
          tenantId: opts.tenant,
          role: opts.role,
          scope: opts.scope,
          ...(opts.label ? { label: opts.label } : {}),
          ...(opts.expiresIn !== undefined ? { expiresInMs: opts.expiresIn } : {}),
        };
        const { id, token, scope, expiresAt } = await withDatabase(config, async (db) => {
          await assertSchemaVersion(db); // "run agent-saga migrate", not "relation api_tokens does not exist"
          return issueApiToken(db, input).catch(asFlagError);
        });
        if (opts.json) {
          printJson(io, {
            id,
            tenantId: opts.tenant,
            role: opts.role,
            scope,
            label: opts.label ?? null,
            expiresAt: expiresAt?.toISOString() ?? null,
            token,
          });
          return;
        }
        const label = opts.label ? ` (${opts.label})` : '';
        println(
          io,
          `created ${opts.role} token ${id} (scope ${scope}) for tenant ${opts.tenant}${label}; it is shown only this once:`,
        );
        println(io, token);
      },
    );

  tokens
    .command('list')
    .description('list tokens: id, tenant, role, scope, label, created, last used, expires, revoked')
    .option('--tenant <tenant>', 'only this tenant', parseTenant)
    .option('--json', 'print the list as JSON')
    .action(async (opts: { tenant?: string; json?: boolean }) => {
      const rows = await withDatabase(parseDatabaseConfig(io), async (db) => {
        await assertSchemaVersion(db);
        return listApiTokens(db, opts.tenant !== undefined ? { tenantId: opts.tenant } : {});
      });
      if (opts.json) {
        printJson(io, rows);
        return;
      }
      const at = (d: Date | null) => d?.toISOString() ?? '-';
      println(io, 'ID\tTENANT\tROLE\tSCOPE\tLABEL\tCREATED\tLAST USED\tEXPIRES\tREVOKED');
      for (const r of rows)
        println(
          io,
          [
            r.id,
            r.tenantId,
            r.role,
            r.scope,
            r.label ?? '-',
            at(r.createdAt),
            at(r.lastUsedAt),
            at(r.expiresAt),
            at(r.revokedAt),
          ].join('\t'),
        );
    });

  tokens
    .command('revoke <id>')
    .description('revoke a token: it answers 401 on every API process within a second')
    .action(async (id: string) => {
      await withDatabase(parseDatabaseConfig(io), async (db) => {
        await assertSchemaVersion(db);
        await revokeApiToken(db, id);
      });
      println(io, `revoked token ${id}`);
    });

  tokens
    .command('rotate <id>')
    .description('give a token a new secret (same id, label, role, scope), printed once as the last line')
    .action(async (id: string) => {
      const { token } = await withDatabase(parseDatabaseConfig(io), async (db) => {
        await assertSchemaVersion(db);
        return rotateApiToken(db, id);
      });
      println(io, `rotated token ${id}; the old secret stops working; the new one is shown only this once:`);
      println(io, token);
    });
}

/**
 * Core's refusal of `--scope` for the role (BadRequestError on `scope`) as wrong usage naming the flag
 * (exit 2, nothing written); the rule itself stays in core (`issueApiToken`).
 */
function asFlagError(err: unknown): never {
  if (err instanceof BadRequestError && err.field === 'scope')
    throw new CliUsageError(`--scope: ${err.message}`);
  throw err;
}

/** Why these units: token lifetimes are days or hours; `30d` reads as what it means. */
const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 } as const;

/** `30d`, `12h`, `45m`, `90s` as milliseconds; anything else is refused. */
export function parseDuration(value: string): number {
  const m = /^(\d+)([dhms])$/.exec(value);
  if (!m?.[1] || !m[2] || Number(m[1]) <= 0)
    throw new InvalidArgumentError('a duration is a positive number and a unit: 30d, 12h, 45m or 90s.');
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

/** A tenant id: non-empty, no surrounding whitespace (a pasted newline would create a tenant nobody has). */
function parseTenant(value: string): string {
  if (value.trim() === '' || value.trim() !== value)
    throw new InvalidArgumentError('a tenant id must be non-empty, without surrounding spaces.');
  return value;
}
