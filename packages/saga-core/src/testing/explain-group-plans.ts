import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { pgConnectionConfig, type SagaDb } from '../db/connect.js';
import { installPreparedStatements } from '../db/prepared-statements.js';
import type { Database } from '../db/schema.js';

/** One node of a plan as auto_explain writes it in JSON. */
export interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Index Cond'?: string;
  readonly Plans?: readonly PlanNode[];
}

/** A one-connection pool set up as a role's group pool, and the plans of what ran on it. */
export interface ExplainedGroupPool {
  readonly db: SagaDb;
  /** Plans by prepared statement name (`preparedAs`); `nested` for queries run inside functions. */
  readonly plans: ReadonlyMap<string, readonly PlanNode[]>;
  readonly close: () => Promise<void>;
}

/**
 * A pool with the settings of a role's group pool (`groupedStatements`) whose session sends the plan of
 * every statement it runs, and of every query inside the functions they call, to this client (auto_explain,
 * at LOG level, read as notices): the plans Postgres really used, not an EXPLAIN of a copy. Needs a role
 * that may LOAD auto_explain (a superuser, as the tests' connection is).
 */
export async function explainGroupPool(url: string, schema: string): Promise<ExplainedGroupPool> {
  const pool = new pg.Pool(pgConnectionConfig({ url, schema, poolSize: 1, groupedStatements: true }));
  installPreparedStatements(pool);
  const plans = new Map<string, PlanNode[]>();
  pool.on('connect', (client) => {
    client.on('notice', (n) => {
      const at = n.message?.indexOf('{') ?? -1;
      if (at < 0) return;
      const explained = JSON.parse(n.message!.slice(at)) as { 'Query Text': string; Plan: PlanNode };
      const name = /prepared:([a-z_]+)/.exec(explained['Query Text'])?.[1] ?? 'nested';
      plans.set(name, [...(plans.get(name) ?? []), explained.Plan]);
    });
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  await sql`LOAD 'auto_explain'`.execute(db);
  await sql`SET auto_explain.log_min_duration = 0`.execute(db);
  await sql`SET auto_explain.log_format = 'json'`.execute(db);
  await sql`SET auto_explain.log_nested_statements = on`.execute(db);
  await sql`SET client_min_messages = 'log'`.execute(db);
  return { db, plans, close: () => db.destroy() };
}

/**
 * The nodes of `plan` that read a whole relation or a whole index: a sequential scan, or an index scan
 * with no key condition. Either costs a read of the table or index per execution once the log is large,
 * which a plan made once must never do.
 */
export function wholeReads(plan: PlanNode): string[] {
  const own: string[] = [];
  if (plan['Node Type'] === 'Seq Scan') own.push(`Seq Scan on ${plan['Relation Name']}`);
  if (/^(Index|Index Only|Bitmap Index) Scan$/.test(plan['Node Type']) && !plan['Index Cond'])
    own.push(`${plan['Node Type']} on ${plan['Index Name']} without a key condition`);
  return [...own, ...(plan.Plans ?? []).flatMap(wholeReads)];
}
