import { TokenRole, assertSchemaVersion, createApiToken, valuesOf } from '@agent-saga/core';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { printJson, println, type CliIo } from '../cli-io.js';
import { parseDatabaseConfig, withDatabase } from '../database.js';

/**
 * `agent-saga tokens create --tenant T --role agent|operator [--label L]`: creates an API token and prints
 * it as the last line of its output (`| tail -n 1` takes it). Only its sha256 is stored; this is the one
 * time the plain token exists. A `tokens list|revoke` would be added to the same group.
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
    .option('--label <label>', 'a note for whoever lists tokens later (who or what holds it)')
    .option('--json', 'print { tenantId, role, label, token } as JSON')
    .action(async (opts: { tenant: string; role: TokenRole; label?: string; json?: boolean }) => {
      const config = parseDatabaseConfig(io);
      const input = { tenantId: opts.tenant, role: opts.role, ...(opts.label ? { label: opts.label } : {}) };
      const token = await withDatabase(config, async (db) => {
        await assertSchemaVersion(db); // "run agent-saga migrate", not "relation api_tokens does not exist"
        return createApiToken(db, input);
      });
      if (opts.json) {
        printJson(io, { tenantId: opts.tenant, role: opts.role, label: opts.label ?? null, token });
        return;
      }
      const label = opts.label ? ` (${opts.label})` : '';
      println(
        io,
        `created an ${opts.role} token for tenant ${opts.tenant}${label}; it is shown only this once:`,
      );
      println(io, token);
    });
}

/** A tenant id: non-empty, no surrounding whitespace (a pasted newline would create a tenant nobody has). */
function parseTenant(value: string): string {
  if (value.trim() === '' || value.trim() !== value)
    throw new InvalidArgumentError('a tenant id must be non-empty, without surrounding spaces.');
  return value;
}
