import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { parseTimestamptz } from '../src/db/parse-timestamptz.js';

/** pg's own parser (postgres-date), what every form outside the fast path goes to. */
const pgParse = pg.types.getTypeParser(1184, 'text') as (text: string) => unknown;

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('timestamptz');
});
afterAll(async () => {
  await env?.close();
});

describe('parseTimestamptz', () => {
  it('reads each ISO form Postgres writes as the same instant', () => {
    const cases: [string, string][] = [
      ['2026-12-06 16:44:44.492989+00', '2026-12-06T16:44:44.492Z'],
      ['2026-12-06 16:44:44+00', '2026-12-06T16:44:44.000Z'],
      ['2026-12-06 16:44:44.5+00', '2026-12-06T16:44:44.500Z'],
      ['2026-12-06 16:44:44.07+00', '2026-12-06T16:44:44.070Z'],
      ['2026-12-06 22:14:44.123+05:30', '2026-12-06T16:44:44.123Z'],
      ['2026-12-06 11:44:44.999999-05', '2026-12-06T16:44:44.999Z'],
      ['2026-12-06 13:14:44-03:30', '2026-12-06T16:44:44.000Z'],
      ['1890-01-01 00:19:32+00:19:32', '1890-01-01T00:00:00.000Z'],
      ['1000-01-01 00:00:00+00', '1000-01-01T00:00:00.000Z'],
      ['9999-12-31 23:59:59.999+00', '9999-12-31T23:59:59.999Z'],
      ['2024-02-29 00:00:00+14', '2024-02-28T10:00:00.000Z'],
    ];
    for (const [text, iso] of cases) expect((parseTimestamptz(text) as Date).toISOString(), text).toBe(iso);
  });

  it("leaves every other form to pg's parser", () => {
    for (const text of [
      'infinity',
      '-infinity',
      '0099-01-01 00:00:00+00',
      '0001-01-01 00:00:00+00 BC',
      '12026-01-01 00:00:00+00',
      'Sun Dec 06 16:44:44 2026 UTC',
      '2026-12-06T16:44:44Z',
    ])
      expect(parseTimestamptz(text), text).toEqual(pgParse(text));
  });

  it('agrees with Postgres on every timestamp it writes, in zones with odd offsets', async () => {
    const client = new pg.Client({ connectionString: env.databaseUrl });
    await client.connect();
    try {
      for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Asia/Kathmandu', 'Europe/Amsterdam']) {
        await client.query(`SET TimeZone = '${zone}'`);
        // Text out, so nothing parses it on the way; the instant in whole milliseconds beside it.
        const { rows } = await client.query<{ text: string; ms: string }>({
          text: `SELECT t::text AS text, floor(extract(epoch FROM t) * 1000)::bigint::text AS ms
                   FROM (SELECT timestamptz '1850-03-01 00:00:00+00' + g * interval '7 days 3 hours 17 minutes 1.234567 seconds' AS t
                           FROM generate_series(0, 9000) g) s`,
        });
        for (const r of rows) {
          const parsed = parseTimestamptz(r.text) as Date;
          expect(parsed.getTime(), `${zone}: ${r.text}`).toBe(Number(r.ms));
        }
      }
    } finally {
      await client.end();
    }
  });

  it('is what a saga connection parses a timestamptz with', async () => {
    const r = await sql<{ at: Date; ms: string }>`
      SELECT timestamptz '2026-12-06 16:44:44.492989+00' AS at,
             floor(extract(epoch FROM timestamptz '2026-12-06 16:44:44.492989+00') * 1000)::bigint::text AS ms`.execute(
      env.db,
    );
    expect(r.rows[0]!.at).toBeInstanceOf(Date);
    expect(r.rows[0]!.at.getTime()).toBe(Number(r.rows[0]!.ms));
  });
});
