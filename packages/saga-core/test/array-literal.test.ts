import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { arrayLiteral } from '../src/db/array-literal.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('array_literal');
});
afterAll(async () => {
  await env?.close();
});

describe('arrayLiteral', () => {
  it('gives Postgres back every string as it was, whatever it holds', async () => {
    const values = [
      'plain',
      '',
      'NULL',
      'null',
      ' spaced out ',
      'a,b',
      '{braces}',
      'quote " inside',
      'back\\slash',
      '\\"both\\"',
      'ünïcödé ✓ 日本',
      'line\nbreak\ttab',
      'bell \u0007 and DEL \u007f',
      'emoji 😀 outside the BMP',
      'emoji 😀 and "quotes" \\ both',
      JSON.stringify({ n: 1, s: 'a "q" \\ b', nested: { list: [1, 'two', null] } }),
      null,
    ];
    const r = await sql<{ v: (string | null)[] }>`SELECT ${arrayLiteral(values)}::text[] AS v`.execute(
      env.db,
    );
    expect(r.rows[0]!.v).toEqual(values);
  });

  it('casts to jsonb, int, float and bool arrays as pg would send a JavaScript array', async () => {
    const docs = [{ a: 1 }, [1, 'x'], 'text "q"', 2.5, true, null];
    const r = await sql<{ j: unknown[]; i: number[]; f: number[]; b: (boolean | null)[] }>`
      SELECT ${arrayLiteral(docs.map((d) => (d === null ? null : JSON.stringify(d))))}::jsonb[] AS j,
             ${arrayLiteral([0, -7, 2147483647])}::int[] AS i,
             ${arrayLiteral([0.25, -1e-9, 12345.5])}::float8[] AS f,
             ${arrayLiteral([true, false, null])}::bool[] AS b`.execute(env.db);
    expect(r.rows[0]).toEqual({
      j: docs,
      i: [0, -7, 2147483647],
      f: [0.25, -1e-9, 12345.5],
      b: [true, false, null],
    });
  });

  it('is the empty array for no values', async () => {
    const r = await sql<{ n: number }>`SELECT cardinality(${arrayLiteral([])}::text[]) AS n`.execute(env.db);
    expect(r.rows[0]!.n).toBe(0);
  });

  it('refuses a number Postgres could not read back as sent', () => {
    expect(() => arrayLiteral([1, Number.NaN])).toThrow(/element 1/);
    expect(() => arrayLiteral([Number.POSITIVE_INFINITY])).toThrow(/element 0/);
  });
});
