/**
 * Validation of the fields an issue is created or edited with, reporting every problem at once in Jira's
 * `errors: { field: message }` map, as Jira does.
 */
import type { AdfDocument } from './jira-state.js';

/** Why 255: Jira's limit on both a label's and a summary's length. */
const MAX_LABEL_LENGTH = 255;
const MAX_SUMMARY_LENGTH = 255;
export const ISSUE_TYPES = ['Task', 'Bug', 'Story', 'Epic'] as const;
/** Fields the sandbox's create screen has; any other field "cannot be set", as Jira answers. */
const SETTABLE = [
  'project',
  'issuetype',
  'summary',
  'description',
  'labels',
  'priority',
  'assignee',
  'duedate',
];

export function isAdfDocument(value: unknown): value is AdfDocument {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const doc = value as Record<string, unknown>;
  return doc.type === 'doc' && doc.version === 1 && Array.isArray(doc.content);
}

export function validateLabels(value: unknown, errors: Record<string, string>): string[] | undefined {
  if (!Array.isArray(value) || value.some((l) => typeof l !== 'string')) {
    errors.labels = 'data was not an array';
    return undefined;
  }
  for (const label of value as string[]) {
    if (/\s/.test(label)) {
      errors.labels = `The label '${label}' contains spaces which is invalid.`;
      return undefined;
    }
    if (label.length > MAX_LABEL_LENGTH) {
      errors.labels = `The label '${label}' exceeds the ${MAX_LABEL_LENGTH} character limit.`;
      return undefined;
    }
    if (label === '') {
      errors.labels = 'Labels cannot be empty.';
      return undefined;
    }
  }
  return [...new Set(value as string[])];
}

export function validateSummary(value: unknown, errors: Record<string, string>): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') {
    errors.summary = 'You must specify a summary of the issue.';
    return undefined;
  }
  if (value.length > MAX_SUMMARY_LENGTH) {
    errors.summary = `Summary must be less than ${MAX_SUMMARY_LENGTH} characters.`;
    return undefined;
  }
  return value;
}

export function validateDescription(
  value: unknown,
  errors: Record<string, string>,
): AdfDocument | null | undefined {
  if (value === null) return null;
  if (!isAdfDocument(value)) {
    errors.description = 'Operation value must be an Atlassian Document (see the Atlassian Document Format)';
    return undefined;
  }
  return value;
}

export interface CreateFields {
  readonly projectKey: string;
  readonly issueType: string;
  readonly summary: string;
  readonly description: AdfDocument | null;
  readonly labels: string[];
}

/** Validates `POST /rest/api/3/issue`'s `fields`; returns them or the error map. */
export function validateCreateFields(
  fields: Record<string, unknown>,
  projectKeys: readonly string[],
): { ok: true; value: CreateFields } | { ok: false; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  for (const name of Object.keys(fields)) {
    if (!SETTABLE.includes(name)) {
      errors[name] = `Field '${name}' cannot be set. It is not on the appropriate screen, or unknown.`;
    }
  }
  const project = fields.project as { key?: unknown; id?: unknown } | undefined;
  const projectKey = typeof project?.key === 'string' ? project.key.toUpperCase() : undefined;
  if (projectKey === undefined || !projectKeys.includes(projectKey))
    errors.project = 'valid project is required';
  const issueTypeRef = fields.issuetype as { name?: unknown; id?: unknown } | undefined;
  const issueType = ISSUE_TYPES.find(
    (t) => t === issueTypeRef?.name || String(10001 + ISSUE_TYPES.indexOf(t)) === issueTypeRef?.id,
  );
  if (issueType === undefined) errors.issuetype = 'valid issue type is required';
  const summary = validateSummary(fields.summary, errors);
  const description =
    fields.description === undefined ? null : validateDescription(fields.description, errors);
  const labels = fields.labels === undefined ? [] : validateLabels(fields.labels, errors);
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: {
      projectKey: projectKey ?? '',
      issueType: issueType ?? 'Task',
      summary: summary ?? '',
      description: description ?? null,
      labels: labels ?? [],
    },
  };
}
