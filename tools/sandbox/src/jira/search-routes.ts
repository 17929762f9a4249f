import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SandboxSettings } from '../settings.js';
import { baseUrlOf } from './issue-routes.js';
import { issueWire, selectFields } from './issue-wire.js';
import { JiraApiError } from './jira-error.js';
import type { JiraIssue, JiraState } from './jira-state.js';
import { matchesJql, parseJql, sortIssues } from './jql.js';

/** Why 50 and 5000: Jira's documented default and greatest `maxResults` on `/search/jql`. */
const DEFAULT_MAX_RESULTS = 50;
const MAX_MAX_RESULTS = 5_000;
/** Why 50: Jira's documented limit on `reconcileIssues`. */
const MAX_RECONCILE = 50;

const REMOVED =
  'The requested API has been removed. Please migrate to the /rest/api/3/search/jql API. A full migration guideline is available at https://developer.atlassian.com/changelog/#CHANGE-2046';

interface SearchParams {
  readonly jql: string;
  readonly nextPageToken: string | undefined;
  readonly maxResults: number;
  readonly fields: string[] | undefined;
  readonly reconcileIssues: string[];
}

function list(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const items = Array.isArray(value) ? value : [value];
  return items
    .flatMap((v) => String(v).split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function readParams(source: Record<string, unknown>): SearchParams {
  const maxResults = source.maxResults === undefined ? DEFAULT_MAX_RESULTS : Number(source.maxResults);
  if (!Number.isInteger(maxResults) || maxResults < 0) {
    throw new JiraApiError(400, ["The value of 'maxResults' must be a non-negative integer."]);
  }
  const reconcileIssues = list(source.reconcileIssues) ?? [];
  if (reconcileIssues.length > MAX_RECONCILE) {
    throw new JiraApiError(400, [`reconcileIssues accepts at most ${MAX_RECONCILE} issue ids.`]);
  }
  return {
    jql: typeof source.jql === 'string' ? source.jql : '',
    nextPageToken: typeof source.nextPageToken === 'string' ? source.nextPageToken : undefined,
    maxResults: Math.min(maxResults, MAX_MAX_RESULTS),
    fields: list(source.fields),
    reconcileIssues,
  };
}

function decodeToken(token: string | undefined): number {
  if (token === undefined) return 0;
  const offset = Number(Buffer.from(token, 'base64url').toString('utf8'));
  if (!Number.isInteger(offset) || offset < 0)
    throw new JiraApiError(400, ['The provided next page token is invalid.']);
  return offset;
}

/**
 * The enhanced JQL search. It reads the lagging index, except for issues named in `reconcileIssues`, read
 * live (Jira's read-after-write for ids the caller knows). The answer carries `nextPageToken` only when
 * `isLast` is false. Fields default to `id` only, as on the real endpoint.
 */
function search(state: JiraState, settings: SandboxSettings, request: FastifyRequest, params: SearchParams) {
  const query = parseJql(params.jql, state.projectKeys);
  const reconciled = new Set(params.reconcileIssues);
  const candidates: JiraIssue[] = state.searchIndex
    .visible(settings.jiraSearchLagMs)
    .filter((issue) => !reconciled.has(issue.id));
  for (const id of reconciled) {
    const live = state.issues.get(id);
    if (live !== undefined) candidates.push(structuredClone(live));
  }
  const hits = sortIssues(
    candidates.filter((issue) => query.where !== undefined && matchesJql(query.where, issue)),
    query,
  );
  const offset = decodeToken(params.nextPageToken);
  const page = hits.slice(offset, offset + params.maxResults);
  const isLast = offset + params.maxResults >= hits.length;
  const fields = selectFields(params.fields, ['id']);
  return {
    issues: page.map((issue) => issueWire(issue, baseUrlOf(request), fields)),
    ...(isLast
      ? {}
      : { nextPageToken: Buffer.from(String(offset + params.maxResults)).toString('base64url') }),
    isLast,
  };
}

export function registerSearchRoutes(
  app: FastifyInstance,
  state: JiraState,
  settings: SandboxSettings,
): void {
  app.get('/rest/api/3/search/jql', (request) =>
    search(state, settings, request, readParams(request.query as Record<string, unknown>)),
  );
  app.post('/rest/api/3/search/jql', (request) =>
    search(state, settings, request, readParams((request.body ?? {}) as Record<string, unknown>)),
  );
  for (const path of ['/rest/api/3/search', '/rest/api/2/search']) {
    app.get(path, (_request, reply) => reply.code(410).send(new JiraApiError(410, [REMOVED]).toBody()));
    app.post(path, (_request, reply) => reply.code(410).send(new JiraApiError(410, [REMOVED]).toBody()));
  }
}
