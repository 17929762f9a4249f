import { ISSUE_TYPES } from './issue-fields.js';
import type { JiraComment, JiraIssue } from './jira-state.js';
import { statusWire } from './workflow.js';

/** The account every sandbox write is attributed to. */
export const SANDBOX_ACCOUNT = {
  accountId: '5b10ac8d82e05b22cc7d4ef5',
  displayName: 'Sandbox Agent',
  active: true,
  accountType: 'atlassian',
} as const;

const ALL_FIELDS = [
  'summary',
  'description',
  'labels',
  'status',
  'issuetype',
  'project',
  'created',
  'updated',
  'comment',
];

/**
 * Which fields an answer carries, from Jira's `fields` parameter: names, `*all` or `*navigable` for all,
 * `-name` to leave one out. `undefined` means the endpoint's default.
 */
export function selectFields(
  requested: readonly string[] | undefined,
  fallback: readonly string[],
): Set<string> {
  const list = requested ?? fallback;
  const out = new Set<string>();
  for (const f of list) {
    if (f === '*all' || f === '*navigable') ALL_FIELDS.forEach((a) => out.add(a));
    else if (f.startsWith('-')) out.delete(f.slice(1));
    else if (ALL_FIELDS.includes(f)) out.add(f);
  }
  return out;
}

export function commentWire(
  issue: JiraIssue,
  comment: JiraComment,
  baseUrl: string,
): Record<string, unknown> {
  return {
    self: `${baseUrl}/rest/api/3/issue/${issue.id}/comment/${comment.id}`,
    id: comment.id,
    author: SANDBOX_ACCOUNT,
    body: comment.body,
    updateAuthor: SANDBOX_ACCOUNT,
    created: comment.created,
    updated: comment.created,
    jsdPublic: true,
  };
}

/** An issue in Jira's wire shape, `{ id, key, self, fields }`, with only the selected fields. */
export function issueWire(
  issue: JiraIssue,
  baseUrl: string,
  fields: ReadonlySet<string>,
): Record<string, unknown> {
  const all: Record<string, unknown> = {
    summary: issue.summary,
    description: issue.description,
    labels: [...issue.labels],
    status: statusWire(issue.status, baseUrl),
    issuetype: {
      id: String(10001 + ISSUE_TYPES.indexOf(issue.issueType as (typeof ISSUE_TYPES)[number])),
      name: issue.issueType,
      subtask: false,
    },
    project: {
      id: '10000',
      key: issue.projectKey,
      name: issue.projectKey,
      self: `${baseUrl}/rest/api/3/project/10000`,
    },
    created: issue.created,
    updated: issue.updated,
    comment: {
      comments: issue.comments.map((c) => commentWire(issue, c, baseUrl)),
      maxResults: issue.comments.length,
      total: issue.comments.length,
      startAt: 0,
    },
  };
  return {
    expand: 'renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations',
    id: issue.id,
    self: `${baseUrl}/rest/api/3/issue/${issue.id}`,
    key: issue.key,
    fields: Object.fromEntries(Object.entries(all).filter(([name]) => fields.has(name))),
  };
}
