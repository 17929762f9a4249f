import { createHash, randomBytes } from 'node:crypto';
import type { SagaDb } from '../db/connect.js';
import type { TokenRole } from './token-role.js';

/** What a bearer token grants: one tenant, one role. */
export interface Principal {
  readonly tenantId: string;
  readonly role: TokenRole;
  /**
   * Who acts, as recorded on decisions: the token's label, or `token:<first 12 hex of its hash>` for a
   * token without one. Never the token itself.
   */
  readonly actor: string;
}

/** Tokens are stored as sha256 hex only; the plain token is shown once, when created. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Creates a token for a tenant and role and returns it in plain text (the only time it exists so). */
export async function createApiToken(
  db: SagaDb,
  input: { tenantId: string; role: TokenRole; label?: string },
): Promise<string> {
  const token = `sgt_${randomBytes(24).toString('base64url')}`;
  await db
    .insertInto('api_tokens')
    .values({
      token_hash: hashToken(token),
      tenant_id: input.tenantId,
      role: input.role,
      label: input.label ?? null,
    })
    .execute();
  return token;
}

/** The principal of a token, or null when it is unknown or revoked. */
export async function verifyApiToken(db: SagaDb, token: string): Promise<Principal | null> {
  const row = await db
    .selectFrom('api_tokens')
    .select(['tenant_id', 'role', 'label', 'token_hash'])
    .where('token_hash', '=', hashToken(token))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row
    ? {
        tenantId: row.tenant_id,
        role: row.role,
        actor: row.label ?? `token:${row.token_hash.slice(0, 12)}`,
      }
    : null;
}
