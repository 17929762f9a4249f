import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveServiceUrls } from '@agent-saga/core/testing';
import { MIGRATED_SCHEMA_PATH, dumpFreshlyMigratedSchema } from './schema/dump-migrated-schema.js';

/**
 * Migrations are frozen in time: a fresh database migrated by this build has exactly the committed schema
 * (tables, columns, CHECK lists, keys, indexes with their predicates, triggers, functions). A migration that
 * changed what it creates (an edited file, a live import) or a new one not yet dumped fails here.
 */
describe('a freshly migrated schema', () => {
  it('is the committed schema dump', async () => {
    const { databaseUrl } = await resolveServiceUrls();
    const fresh = await dumpFreshlyMigratedSchema(databaseUrl);
    const file = relative(process.cwd(), MIGRATED_SCHEMA_PATH);
    expect(
      fresh,
      `a freshly migrated schema differs from ${file}: if a new migration meant this, run \`pnpm schema:dump\` ` +
        `and review \`git diff ${file}\`; if not, a committed migration changed what it creates (never edit one)`,
    ).toBe(readFileSync(MIGRATED_SCHEMA_PATH, 'utf8'));
  });
});
