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
  readonly 'Total Cost'?: number;
  readonly Plans?: readonly PlanNode[];
}

/** A one-connection pool set up as a role's group pool, and the plans of what ran on it. */
export interface ExplainedGroupPool {
  readonly db: SagaDb;
  /**
   * Plans by prepared statement name (`preparedAs`); `nested:<table>` for queries run inside functions
   * and triggers, by the first table the query names (`nested:saga_log`, `nested:capture_check_runs`;
   * `unnest` of the function's parameters is not a table, so skipped).
   */
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
      const text = explained['Query Text'];
      const name =
        /prepared:([a-z_]+)/.exec(text)?.[1] ??
        `nested:${/\b(?:INTO|FROM|UPDATE)\s+(?!unnest\b)([a-z_]+)/i.exec(text)?.[1] ?? '?'}`;
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
 * Postgres's cost of a path its settings disable (`disable_cost`, 10¹⁰), chosen when no other path exists:
 * a node costed at this or more is such a path, whatever its type.
 */
const DISABLED_PATH_COST = 1e10;

/**
 * The nodes of `plan` that read a whole relation or a whole index: a sequential scan, or an index scan
 * with no key condition. Either costs a read of the table or index per execution once the log is large,
 * which a plan made once must never do. Also any node built on a path the pool's settings disable
 * (`enable_seqscan = off`): its cost of 10¹⁰ would have Postgres JIT-compile the statement on every
 * execution, were JIT not off on this pool (the capture-check trigger did, until migration 0025).
 */
export function wholeReads(plan: PlanNode): string[] {
  const own: string[] = [];
  if (plan['Node Type'] === 'Seq Scan') own.push(`Seq Scan on ${plan['Relation Name']}`);
  // The node that took the disabled path, not each of its ancestors (whose costs include it).
  const disabled = (node: PlanNode) => (node['Total Cost'] ?? 0) >= DISABLED_PATH_COST;
  if (disabled(plan) && !(plan.Plans ?? []).some(disabled))
    own.push(`${plan['Node Type']} on a disabled path (cost ${plan['Total Cost']})`);
  if (/^(Index|Index Only|Bitmap Index) Scan$/.test(plan['Node Type']) && !plan['Index Cond'])
    own.push(`${plan['Node Type']} on ${plan['Index Name']} without a key condition`);
  return [...own, ...(plan.Plans ?? []).flatMap(wholeReads)];
}
