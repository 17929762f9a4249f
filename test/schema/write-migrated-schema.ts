/**
 * `pnpm schema:dump`: migrates a fresh schema and writes its structure to `test/schema/migrated-schema.txt`.
 * Run it after adding a migration, then review `git diff test/schema/migrated-schema.txt`: the diff is what
 * the migration does to a fresh database. Needs DATABASE_URL (the environment, or `.env` from
 * `pnpm bootstrap`); without it, starts a Postgres container as the tests do.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { resolveServiceUrls } from '@agent-saga/core/testing';
import { MIGRATED_SCHEMA_PATH, dumpFreshlyMigratedSchema } from './dump-migrated-schema.js';

if (existsSync('.env')) process.loadEnvFile('.env'); // keeps variables that are already set
const databaseUrl = process.env.DATABASE_URL ?? (await resolveServiceUrls()).databaseUrl;
writeFileSync(MIGRATED_SCHEMA_PATH, await dumpFreshlyMigratedSchema(databaseUrl));
console.log(`wrote ${MIGRATED_SCHEMA_PATH}`);
