import { sendHttpRequest, type HttpCall } from '../http/send-http-request.js';
import type { AdfDocument } from './adf.js';
import type { JiraConnection } from './jira-connection.js';
import {
  createdIssueSchema,
  issueSchema,
  noContent,
  transitionsSchema,
  type CreatedIssue,
  type JiraIssue,
  type JiraTransition,
} from './jira-wire.js';

/**
 * The Jira Cloud REST v3 issue endpoints the tools use, each one HTTP call with the caller's signal. Errors
 * are already classified (`classifyHttpFailure`).
 */
const issuePath = (key: string) => `/rest/api/3/issue/${encodeURIComponent(key)}`;

export interface NewIssue {
  readonly summary: string;
  readonly description: AdfDocument;
  readonly labels: readonly string[];
}

/** `POST /rest/api/3/issue` in the configured project. Not idempotent: the same body twice is two issues. */
export async function createIssue(
  conn: JiraConnection,
  issue: NewIssue,
  call: HttpCall,
): Promise<CreatedIssue> {
  const { projectKey, issueType } = conn.config;
  const answer = await sendHttpRequest(conn.endpoint, {
    method: 'POST',
    path: '/rest/api/3/issue',
    body: {
      fields: {
        project: { key: projectKey },
        issuetype: { name: issueType },
        summary: issue.summary,
        description: issue.description,
        labels: issue.labels,
      },
    },
    answer: createdIssueSchema,
    call,
  });
  return answer.body;
}

/** `GET /rest/api/3/issue/{key}?fields=status,labels`: read live, not from the lagging index. */
export async function getIssue(conn: JiraConnection, key: string, call: HttpCall): Promise<JiraIssue> {
  const answer = await sendHttpRequest(conn.endpoint, {
    method: 'GET',
    path: issuePath(key),
    query: { fields: 'status,labels' },
    answer: issueSchema,
    call,
  });
  return answer.body;
}

/** Adds one label with `update.labels[].add` (a set: adding a label twice keeps one). */
export async function addIssueLabel(
  conn: JiraConnection,
  key: string,
  label: string,
  call: HttpCall,
): Promise<void> {
  await sendHttpRequest(conn.endpoint, {
    method: 'PUT',
    path: issuePath(key),
    body: { update: { labels: [{ add: label }] } },
    answer: noContent,
    call,
  });
}

/** The transitions the workflow offers from the issue's current status. */
export async function listTransitions(
  conn: JiraConnection,
  key: string,
  call: HttpCall,
): Promise<readonly JiraTransition[]> {
  const answer = await sendHttpRequest(conn.endpoint, {
    method: 'GET',
    path: `${issuePath(key)}/transitions`,
    answer: transitionsSchema,
    call,
  });
  return answer.body.transitions;
}

/** Performs a transition, with an optional comment added in the same call (`update.comment[].add`). */
export async function doTransition(
  conn: JiraConnection,
  key: string,
  transitionId: string,
  comment: AdfDocument | undefined,
  call: HttpCall,
): Promise<void> {
  await sendHttpRequest(conn.endpoint, {
    method: 'POST',
    path: `${issuePath(key)}/transitions`,
    body: {
      transition: { id: transitionId },
      ...(comment !== undefined ? { update: { comment: [{ add: { body: comment } }] } } : {}),
    },
    answer: noContent,
    call,
  });
}

/** `DELETE /rest/api/3/issue/{key}`. */
export async function deleteIssue(conn: JiraConnection, key: string, call: HttpCall): Promise<void> {
  await sendHttpRequest(conn.endpoint, { method: 'DELETE', path: issuePath(key), answer: noContent, call });
}
