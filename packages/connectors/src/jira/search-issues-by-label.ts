import { sendHttpRequest, type HttpCall } from '../http/send-http-request.js';
import type { JiraConnection } from './jira-connection.js';
import { searchPageSchema } from './jira-wire.js';
import { sagaLabelJql } from './saga-label.js';

/** Why 50: Jira's default page; more than a handful of issues under one key is an incident anyway. */
const PAGE_SIZE = 50;
/** Why 20 pages: a bound on a runaway paging loop; 1,000 issues under one key is never legitimate. */
const MAX_PAGES = 20;

export interface LabelledIssue {
  readonly id: string;
  readonly key: string;
}

/**
 * Every issue carrying the label of `key`, oldest first (by numeric id: Jira's `created` has second
 * resolution, ids never repeat). Uses the enhanced search `POST /rest/api/3/search/jql` (the old
 * `/rest/api/3/search` was removed), paging with `nextPageToken` until `isLast`.
 *
 * The JQL index lags behind writes: an issue labelled a moment ago may be missing. Callers must not take an
 * empty answer for absence before the tool's `lookupLagMs` has passed; the harness re-checks.
 */
export async function searchIssuesByLabel(
  conn: JiraConnection,
  key: string,
  call: HttpCall,
): Promise<readonly LabelledIssue[]> {
  const found = new Map<string, LabelledIssue>();
  let nextPageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await sendHttpRequest(conn.endpoint, {
      method: 'POST',
      path: '/rest/api/3/search/jql',
      body: {
        jql: sagaLabelJql(key),
        fields: ['status'],
        maxResults: PAGE_SIZE,
        ...(nextPageToken !== undefined ? { nextPageToken } : {}),
      },
      answer: searchPageSchema,
      call,
    });
    for (const issue of answer.body.issues) found.set(issue.id, { id: issue.id, key: issue.key });
    nextPageToken = answer.body.nextPageToken ?? undefined;
    if (answer.body.isLast !== false || nextPageToken === undefined) break;
  }
  return [...found.values()].sort((a, b) => Number(a.id) - Number(b.id));
}
