import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../util/sha256-hex.js';
import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import { BadRequestError } from '../errors/errors.js';
import { TokenRole } from './token-role.js';
import { TokenScope } from './token-scope.js';

/** What a bearer token grants: one tenant, one role, a scope of runs. */
export interface Principal {
  readonly tenantId: string;
  readonly role: TokenRole;
  /** The token's stable id (`tok_…`), recorded on every decision beside {@link actor}. */
  readonly tokenId: string;
  /** Which runs of the tenant it may see: all, or those it created (`runs.created_by_token`). */
  readonly scope: TokenScope;
  /** When it stops working; null: never. */
  readonly expiresAt: Date | null;
  /**
   * Who acts, as recorded on decisions: the token's label (unique per tenant), or `token:<id>` for a token
   * without one. Never the token itself.
   */
  readonly actor: string;
}

/**
 * The token of an `Authorization: Bearer <token>` header (the scheme in any case, spaces around the token
 * allowed), or undefined when there is none: the one reading of the header, for the API and the MCP
 * gateway, so a token spelled differently never counts as another.
 */
export function bearerTokenOf(header: string | undefined): string | undefined {
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/** Tokens are stored as sha256 hex only; the plain token is shown once, when created or rotated. */
export function hashToken(token: string): string {
  return sha256Hex(token);
}

/** A new secret: `sgt_` and 24 random bytes. */
export function newTokenSecret(): string {
  return `sgt_${randomBytes(24).toString('base64url')}`;
}

export interface NewApiToken {
  readonly tenantId: string;
  readonly role: TokenRole;
  /** Unique per tenant among all its tokens, revoked included: a second use is a BadRequestError. */
  readonly label?: string;
  /** Which runs it may see; absent: `tenant`. `own-runs` is for agent tokens only (see {@link issueApiToken}). */
  readonly scope?: TokenScope;
  /** Lifetime from now (by the database's clock); absent: never expires. */
  readonly expiresInMs?: number;
}

/** A created token: its id and, in plain text, the secret (the only time it exists so). */
export interface IssuedApiToken {
  readonly id: string;
  readonly token: string;
  readonly scope: TokenScope;
  readonly expiresAt: Date | null;
}

/**
 * Creates a token. Refused before anything is written: an operator token with the `own-runs` scope
 * (BadRequestError on `scope`: an operator decides the whole tenant's review queues, so a scope of runs
 * would be a promise the queues do not keep); after the insert, a label already used by a token of the
 * tenant (BadRequestError on `label`).
 */
export async function issueApiToken(db: SagaDb, input: NewApiToken): Promise<IssuedApiToken> {
  const scope = input.scope ?? TokenScope.TENANT;
  if (scope === TokenScope.OWN_RUNS && input.role !== TokenRole.AGENT)
    throw new BadRequestError(
      'scope',
      `the ${TokenScope.OWN_RUNS} scope is for ${TokenRole.AGENT} tokens only; an ${input.role} token sees its whole tenant (scope ${TokenScope.TENANT})`,
    );
  const token = newTokenSecret();
  const expiresAt =
    input.expiresInMs === undefined
      ? null
      : sql<Date>`now() + make_interval(secs => ${input.expiresInMs / 1000})`;
  try {
    const row = await db
      .insertInto('api_tokens')
      .values({
        token_hash: hashToken(token),
        tenant_id: input.tenantId,
        role: input.role,
        label: input.label ?? null,
        scope,
        expires_at: expiresAt,
      })
      .returning(['id', 'expires_at'])
      .executeTakeFirstOrThrow();
    return { id: row.id, token, scope, expiresAt: row.expires_at };
  } catch (err) {
    if ((err as { constraint?: string }).constraint === 'api_tokens_tenant_label')
      throw new BadRequestError(
        'label',
        `tenant ${input.tenantId} already has a token labelled ${input.label ?? ''} (labels are unique per tenant, revoked tokens included; rotate keeps a label)`,
      );
    throw err;
  }
}

/** Creates a token and returns it in plain text; {@link issueApiToken} also returns its id. */
export async function createApiToken(db: SagaDb, input: NewApiToken): Promise<string> {
  return (await issueApiToken(db, input)).token;
}

/**
 * The principal of a token, or null when it is unknown, revoked or expired. Expiry is checked here, in the
 * SQL, by the database's clock: one clock for every API process.
 */
export async function verifyApiToken(db: SagaDb, token: string): Promise<Principal | null> {
  const row = await db
    .selectFrom('api_tokens')
    .select(['id', 'tenant_id', 'role', 'label', 'scope', 'expires_at'])
    .where('token_hash', '=', hashToken(token))
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
    .executeTakeFirst();
  return row
    ? {
        tenantId: row.tenant_id,
        role: row.role,
        tokenId: row.id,
        scope: row.scope,
        expiresAt: row.expires_at,
        actor: row.label ?? `token:${row.id}`,
      }
    : null;
}
