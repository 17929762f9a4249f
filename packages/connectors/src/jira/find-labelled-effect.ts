import type { ToolEffect } from '@agent-saga/core';
import type { JiraConnection } from './jira-connection.js';
import { searchIssuesByLabel, type LabelledIssue } from './search-issues-by-label.js';
import type { HttpCall } from '../http/send-http-request.js';

/**
 * The effect made under `key`: the oldest issue carrying its label, with any others as `duplicates` (a
 * duplicate-effect incident: Jira has no idempotency, so a blind retry makes a second issue). `confirm`,
 * when given, reads the issue live and returns its result, or null when the issue carries the label but the
 * effect is not complete (the label is written first, then the change: see each tool).
 */
export async function findLabelledEffect(
  conn: JiraConnection,
  key: string,
  call: HttpCall,
  confirm: (issue: LabelledIssue) => Promise<Record<string, unknown> | null> = (issue) =>
    Promise.resolve({ id: issue.id, key: issue.key }),
): Promise<ToolEffect | null> {
  const issues = await searchIssuesByLabel(conn, key, call);
  const [first, ...rest] = issues;
  if (first === undefined) return null;
  const result = await confirm(first);
  if (result === null) return null;
  return {
    externalRef: first.key,
    result,
    ...(rest.length > 0 ? { duplicates: rest.map((i) => i.key) } : {}),
  };
}
