import { LaggedIndex } from '../lagged-index.js';
import type { JiraStatusName } from './workflow.js';

/** An Atlassian Document Format document (`{ type: 'doc', version: 1, content: [...] }`), kept as sent. */
export type AdfDocument = Record<string, unknown>;

export interface JiraComment {
  readonly id: string;
  readonly body: AdfDocument;
  readonly created: string;
}

/** An issue as the sandbox keeps it; its wire shape is built by `issue-wire.ts`. */
export interface JiraIssue {
  readonly id: string;
  readonly key: string;
  readonly projectKey: string;
  readonly issueType: string;
  summary: string;
  description: AdfDocument | null;
  labels: string[];
  status: JiraStatusName;
  readonly created: string;
  updated: string;
  comments: JiraComment[];
}

/** The fake Jira site: its issues by id, per-project key counters, and the lagging JQL index. */
export class JiraState {
  readonly issues = new Map<string, JiraIssue>();
  readonly searchIndex = new LaggedIndex<JiraIssue>();
  readonly #nextNumber = new Map<string, number>();
  #nextId = 10_000;
  #nextCommentId = 10_000;

  constructor(readonly projectKeys: readonly string[]) {}

  /** Why ids from 10000: Jira Cloud's numeric issue ids start there on a fresh site. */
  nextIssueId(): string {
    return String(this.#nextId++);
  }

  nextIssueKey(projectKey: string): string {
    const n = this.#nextNumber.get(projectKey) ?? 1;
    this.#nextNumber.set(projectKey, n + 1);
    return `${projectKey}-${n}`;
  }

  nextCommentId(): string {
    return String(this.#nextCommentId++);
  }

  findIssue(idOrKey: string): JiraIssue | undefined {
    const byId = this.issues.get(idOrKey);
    if (byId !== undefined) return byId;
    const upper = idOrKey.toUpperCase();
    for (const issue of this.issues.values()) if (issue.key === upper) return issue;
    return undefined;
  }

  /** Stores an issue after any change and lets the JQL index see the change later. */
  saveIssue(issue: JiraIssue): void {
    this.issues.set(issue.id, issue);
    this.searchIndex.record(issue.id, structuredClone(issue));
  }

  deleteIssue(issue: JiraIssue): void {
    this.issues.delete(issue.id);
    this.searchIndex.record(issue.id, null);
  }

  clear(): void {
    this.issues.clear();
    this.searchIndex.clear();
    this.#nextNumber.clear();
    this.#nextId = 10_000;
    this.#nextCommentId = 10_000;
  }
}

/** Jira's timestamp format: `2024-03-01T12:34:56.789+0000`. */
export function jiraTimestamp(ms: number = Date.now()): string {
  return new Date(ms).toISOString().replace('Z', '+0000');
}
