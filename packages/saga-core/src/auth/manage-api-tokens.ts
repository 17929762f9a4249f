import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import { NotFoundError } from '../errors/errors.js';
import { hashToken, newTokenSecret } from './api-tokens.js';
import type { TokenRole } from './token-role.js';
import type { TokenScope } from './token-scope.js';

// The operator's side of a token's life: list, revoke, rotate. Each change is one compare-and-set UPDATE on
// a token that is not revoked; zero rows is a NotFoundError naming the id. A revoked or rotated-away secret
// stops working on every API process within the auth cache's lifetime (services/dispatcher auth.ts).

/** One token as `tokens list` shows it: never its secret nor its hash. */
export interface ApiTokenListing {
  readonly id: string;
  readonly tenantId: string;
  readonly role: TokenRole;
  readonly scope: TokenScope;
  readonly label: string | null;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly expiresAt: Date | null;
  readonly rotatedAt: Date | null;
  readonly revokedAt: Date | null;
}

/** Every token, or a tenant's, oldest first. */
export async function listApiTokens(
  db: SagaDb,
  filter: { readonly tenantId?: string } = {},
): Promise<ApiTokenListing[]> {
  let q = db
    .selectFrom('api_tokens')
    .select([
      'id',
      'tenant_id',
      'role',
      'scope',
      'label',
      'created_at',
      'last_used_at',
      'expires_at',
      'rotated_at',
      'revoked_at',
    ])
    .orderBy('created_at')
    .orderBy('id');
  if (filter.tenantId !== undefined) q = q.where('tenant_id', '=', filter.tenantId);
  const rows = await q.execute();
  return rows.map((r) => ({
    id: r.id,
    tenantId: r.tenant_id,
    role: r.role,
    scope: r.scope,
    label: r.label,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    expiresAt: r.expires_at,
    rotatedAt: r.rotated_at,
    revokedAt: r.revoked_at,
  }));
}

/** Revokes a token for good (a revoked token cannot be rotated back to life). */
export async function revokeApiToken(db: SagaDb, id: string): Promise<ApiTokenListing> {
  const row = await db
    .updateTable('api_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`no live token ${id} (unknown, or already revoked)`);
  return (await listOne(db, id))!;
}

/**
 * Gives a live token a new secret: same id, label, role, scope, tenant and expiry; the old secret stops
 * working as a revoked one does. Returns the new secret in plain text, the only time it exists so.
 */
export async function rotateApiToken(db: SagaDb, id: string): Promise<{ id: string; token: string }> {
  const token = newTokenSecret();
  const row = await db
    .updateTable('api_tokens')
    .set({ token_hash: hashToken(token), rotated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`no live token ${id} (unknown, or revoked)`);
  return { id, token };
}

async function listOne(db: SagaDb, id: string): Promise<ApiTokenListing | undefined> {
  return (await listApiTokens(db)).find((t) => t.id === id);
}
