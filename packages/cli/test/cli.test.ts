import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  EXPECTED_SCHEMA_VERSION,
  createDb,
  hashToken,
  migrateToLatest,
  verifyApiToken,
  type SagaDb,
} from '@agent-saga/core';
import { resolveServiceUrls } from '@agent-saga/core/testing';
import { runCli } from './run-cli.js';

/**
 * The CLI as a deployment runs it: a real child process against real Postgres, each test in a fresh
 * schema (`cli_<random>`) that it drops afterwards.
 */
let databaseUrl: string;
let schema: string;
let db: SagaDb;

beforeAll(async () => {
  ({ databaseUrl } = await resolveServiceUrls());
});

beforeEach(() => {
  schema = `cli_${randomBytes(5).toString('hex')}`;
  db = createDb({ url: databaseUrl, schema, poolSize: 2, applicationName: 'agent-saga-cli-test' });
});

afterEach(async () => {
  await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
  await db.destroy();
});

const cli = (...args: string[]) => runCli(args, { DATABASE_URL: databaseUrl, SAGA_DB_SCHEMA: schema });

describe('agent-saga migrate', () => {
  it('applies the migrations once; the second run applies nothing', async () => {
    const first = await cli('migrate');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.lines).toContain(`applied ${EXPECTED_SCHEMA_VERSION}`);
    // The connectors' own list runs after core's, under its own owner.
    expect(first.lines).toContain('applied connectors/0001_email_drafts');

    // The second run, as JSON: nothing applied, the schema at the version this build expects.
    const second = await cli('migrate', '--json');
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({
      schema,
      applied: [],
      version: EXPECTED_SCHEMA_VERSION,
      expected: EXPECTED_SCHEMA_VERSION,
    });
  });

  it('refuses to start without DATABASE_URL, naming it (exit 2)', async () => {
    const run = await runCli(['migrate'], { SAGA_DB_SCHEMA: schema });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('DATABASE_URL');
  });
});

describe('agent-saga schema-version', () => {
  it('prints the current and expected versions, and exits 1 until the schema is migrated', async () => {
    const before = await cli('schema-version');
    expect(before.code).toBe(1);
    expect(before.stdout).toContain('current:  (not migrated)');
    expect(before.stderr).toContain('agent-saga migrate');

    await migrateToLatest(db, schema);
    const after = await cli('schema-version', '--json');
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toEqual({
      schema,
      current: EXPECTED_SCHEMA_VERSION,
      expected: EXPECTED_SCHEMA_VERSION,
      upToDate: true,
    });
  });
});

describe('agent-saga tokens create', () => {
  it('prints the token as its last line and stores only its hash', async () => {
    await migrateToLatest(db, schema); // in process: only the command under test is spawned
    const run = await cli('tokens', 'create', '--tenant', 'acme', '--role', 'operator', '--label', 'on-call');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const token = run.lines.at(-1)!;
    expect(token).toMatch(/^sgt_[A-Za-z0-9_-]{20,}$/);

    const rows = await db.selectFrom('api_tokens').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      token_hash: hashToken(token),
      tenant_id: 'acme',
      role: 'operator',
      label: 'on-call',
    });
    // The plain token is in no column of the stored row.
    const leaked = await sql<{ n: string }>`
      SELECT count(*) AS n FROM api_tokens WHERE strpos(row_to_json(api_tokens)::text, ${token}) > 0`.execute(
      db,
    );
    expect(Number(leaked.rows[0]?.n)).toBe(0);
    await expect(verifyApiToken(db, token)).resolves.toMatchObject({ tenantId: 'acme', role: 'operator' });
  });

  it('refuses a bad or missing role, naming --role (exit 2), and writes nothing', async () => {
    await migrateToLatest(db, schema);
    const bad = await cli('tokens', 'create', '--tenant', 'acme', '--role', 'admin');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--role');
    expect(bad.stderr).toContain('agent, operator');
    expect(bad.stdout).toBe('');

    const missing = await cli('tokens', 'create', '--tenant', 'acme');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--role');
    expect(await db.selectFrom('api_tokens').selectAll().execute()).toEqual([]);
  });

  it('refuses an unmigrated schema, saying to migrate (exit 1)', async () => {
    const run = await cli('tokens', 'create', '--tenant', 'acme', '--role', 'agent');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('agent-saga migrate');
    expect(run.stdout).toBe('');
  });
});

describe('agent-saga tokens create --scope', () => {
  it('issues an own-runs agent token, shown with its scope by tokens list (table and JSON)', async () => {
    await migrateToLatest(db, schema);
    const created = await cli(
      'tokens',
      'create',
      '--tenant',
      'acme',
      '--role',
      'agent',
      '--scope',
      'own-runs',
      '--label',
      'bot',
      '--json',
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const issued = JSON.parse(created.stdout) as { id: string; scope: string; token: string };
    expect(issued.scope).toBe('own-runs');
    await expect(verifyApiToken(db, issued.token)).resolves.toMatchObject({
      scope: 'own-runs',
      role: 'agent',
    });
    const plain = await cli('tokens', 'create', '--tenant', 'acme', '--role', 'agent', '--json');
    expect((JSON.parse(plain.stdout) as { scope: string }).scope).toBe('tenant');

    const listed = await cli('tokens', 'list', '--tenant', 'acme', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ id: issued.id, role: 'agent', scope: 'own-runs', label: 'bot' }),
      expect.objectContaining({ role: 'agent', scope: 'tenant' }),
    ]);
    const table = await cli('tokens', 'list', '--tenant', 'acme');
    expect(table.lines.find((l) => l.startsWith(issued.id))?.split('\t')).toEqual(
      expect.arrayContaining([issued.id, 'acme', 'agent', 'own-runs', 'bot']),
    );
  });

  it('refuses own-runs for an operator token, naming --scope (exit 2), and writes nothing', async () => {
    await migrateToLatest(db, schema);
    const run = await cli(
      'tokens',
      'create',
      '--tenant',
      'acme',
      '--role',
      'operator',
      '--scope',
      'own-runs',
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--scope');
    expect(run.stderr).toContain('agent');
    expect(run.stdout).toBe('');
    const bad = await cli('tokens', 'create', '--tenant', 'acme', '--role', 'agent', '--scope', 'mine');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--scope');
    expect(await db.selectFrom('api_tokens').selectAll().execute()).toEqual([]);
  });
});

describe('agent-saga tokens list, revoke, rotate', () => {
  it('manages a token by its id: listed without its secret, rotated to a new one, revoked for good', async () => {
    await migrateToLatest(db, schema);
    const created = await cli(
      'tokens',
      'create',
      '--tenant',
      'acme',
      '--role',
      'agent',
      '--label',
      'bot',
      '--expires-in',
      '30d',
      '--json',
    );
    expect(created.code).toBe(0);
    const issued = JSON.parse(created.stdout) as { id: string; token: string; expiresAt: string };
    expect(issued.id).toMatch(/^tok_/);
    expect(Date.parse(issued.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const rotated = await cli('tokens', 'rotate', issued.id);
    expect(rotated.code).toBe(0);
    const fresh = rotated.lines.at(-1)!;
    expect(fresh).not.toBe(issued.token);
    await expect(verifyApiToken(db, issued.token)).resolves.toBeNull();
    await expect(verifyApiToken(db, fresh)).resolves.toMatchObject({ tenantId: 'acme', actor: 'bot' });

    const revoked = await cli('tokens', 'revoke', issued.id);
    expect(revoked.code).toBe(0);
    await expect(verifyApiToken(db, fresh)).resolves.toBeNull();

    const listed = await cli('tokens', 'list', '--tenant', 'acme', '--json');
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(fresh);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ id: issued.id, tenantId: 'acme', role: 'agent', label: 'bot' }),
    ]);
    const [row] = JSON.parse(listed.stdout) as { revokedAt: string | null; rotatedAt: string | null }[];
    expect(row?.revokedAt).not.toBeNull();
    expect(row?.rotatedAt).not.toBeNull();
  });
});
