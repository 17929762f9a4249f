import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '@agent-saga/core';
import { createTestEnv, dumpSchema, type TestEnv } from '@agent-saga/core/testing';
import { CONNECTOR_MIGRATIONS, migrateConnectorTables } from '../src/migrate-connector-tables.js';

/**
 * The connectors' own migration list: it owns `email_drafts` from now on, while core's 0002 keeps creating
 * it on every schema core migrates (see `src/migrations/0001_email_drafts.ts`).
 */
let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('connector_migrations');
});
afterAll(async () => env?.close());

/** The `TABLE <name>` block of a dump. */
const tableBlock = (dump: string, name: string) =>
  dump
    .split('\n\n')
    .find((block) => block.startsWith(`TABLE ${name}\n`))
    ?.trimEnd();

describe('the connectors migration list', () => {
  it('on a schema core has migrated, records its migrations once and leaves email_drafts as it is', async () => {
    const before = await dumpSchema(env.db, env.schema);
    const first = await migrateConnectorTables(env.db, env.schema);
    expect(first.map((r) => [r.migrationName, r.status])).toEqual(
      Object.keys(CONNECTOR_MIGRATIONS.migrations).map((name) => [name, 'Success']),
    );
    expect(await migrateConnectorTables(env.db, env.schema)).toEqual([]);
    const after = await dumpSchema(env.db, env.schema);
    expect(tableBlock(after, 'email_drafts')).toBe(tableBlock(before, 'email_drafts'));
    expect(tableBlock(after, 'connector_migration')).toBeDefined();
  });

  it('on a schema core has not migrated, creates email_drafts exactly as core 0002 does', async () => {
    const schema = `${env.schema}_alone`;
    const db = createDb({ url: env.databaseUrl, schema });
    try {
      await migrateConnectorTables(db, schema);
      const alone = tableBlock(await dumpSchema(db, schema), 'email_drafts');
      expect(alone).toBeDefined();
      expect(alone).toBe(tableBlock(await dumpSchema(env.db, env.schema), 'email_drafts'));
    } finally {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
      await db.destroy();
    }
  });
});
