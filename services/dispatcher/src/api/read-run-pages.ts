import type { SagaDb, StepEventRow, StepRow } from '@agent-saga/core';

/**
 * Keyset pages of a run's steps and events, for `GET /v1/runs/{runId}` and `GET /v1/runs/{runId}/events`.
 *
 * Decisions:
 * - Keyset, not offset: a page is "the next `limit` rows after the cursor" on the table's own key
 *   (`saga_log (run_id, step_idx)`, `step_events (run_id, id)`, both primary keys), so each page is one
 *   index range scan however deep it is, and a row written meanwhile never shifts a later page.
 * - One row more than asked is read: the page is full *and* there is more only when it arrives, so the last
 *   page says `nextCursor: null` instead of sending the caller for an empty one.
 * - Events are ordered by id, the order they were written (`listStepEvents`'s order). An id is taken at
 *   insert, so an event whose transaction commits after a later-numbered one may appear behind a page the
 *   caller has read; a reader that must see every event of a live run reads again from its first page once
 *   the run is terminal (nothing is written to a terminal run's journal but decisions about it).
 * - The caller has checked that the run belongs to its tenant (`getRun`).
 *
 * These are SQL of the saga log's tables outside core because the routes own their paging; they belong
 * next to `listSteps` and `listStepEvents` in core once core's surface takes page options.
 */

export interface Page<Row, Cursor> {
  readonly rows: readonly Row[];
  /** The key of the page's last row when more rows follow; null on the last page. */
  readonly nextCursor: Cursor | null;
}

/** Parameters: `runId`; `after` (exclusive; none: from the first step); `limit` (rows per page). */
export async function readStepsPage(
  db: SagaDb,
  runId: string,
  page: { readonly after: number | undefined; readonly limit: number },
): Promise<Page<StepRow, number>> {
  let q = db.selectFrom('saga_log').selectAll().where('run_id', '=', runId);
  if (page.after !== undefined) q = q.where('step_idx', '>', page.after);
  const rows = await q
    .orderBy('step_idx')
    .limit(page.limit + 1)
    .execute();
  return cut(rows, page.limit, (r) => r.step_idx);
}

/**
 * Steps of the run at the given indices (those its approvals, cases and corrections name, when they are not
 * on the page shown), for presenting those review items with their tool and arguments.
 */
export async function readStepsAt(
  db: SagaDb,
  runId: string,
  indices: readonly number[],
): Promise<readonly StepRow[]> {
  if (indices.length === 0) return [];
  return db
    .selectFrom('saga_log')
    .selectAll()
    .where('run_id', '=', runId)
    .where('step_idx', 'in', [...indices])
    .orderBy('step_idx')
    .execute();
}

/** Parameters: `runId`; `after` (an event id, exclusive; none: from the first event); `limit`. */
export async function readEventsPage(
  db: SagaDb,
  runId: string,
  page: { readonly after: string | undefined; readonly limit: number },
): Promise<Page<StepEventRow, string>> {
  let q = db.selectFrom('step_events').selectAll().where('run_id', '=', runId);
  if (page.after !== undefined) q = q.where('id', '>', page.after);
  const rows = await q
    .orderBy('id')
    .limit(page.limit + 1)
    .execute();
  return cut(rows, page.limit, (r) => String(r.id));
}

/**
 * The tool, arguments and result of each of the run's steps at `indices` (an event names its step by index
 * only): what its events are redacted with, by the tool's declared paths and the values found there.
 */
export async function readStepTools(
  db: SagaDb,
  runId: string,
  indices: readonly number[],
): Promise<ReadonlyMap<number, { readonly tool: string; readonly args: unknown; readonly result: unknown }>> {
  if (indices.length === 0) return new Map();
  const rows = await db
    .selectFrom('saga_log')
    .select(['step_idx', 'tool', 'args', 'result'])
    .where('run_id', '=', runId)
    .where('step_idx', 'in', [...indices])
    .execute();
  return new Map(rows.map((r) => [r.step_idx, { tool: r.tool, args: r.args, result: r.result }]));
}

function cut<Row, Cursor>(rows: Row[], limit: number, keyOf: (row: Row) => Cursor): Page<Row, Cursor> {
  if (rows.length <= limit) return { rows, nextCursor: null };
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: keyOf(page[page.length - 1]!) };
}
