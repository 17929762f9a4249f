import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  isAdfDocument,
  validateCreateFields,
  validateDescription,
  validateLabels,
  validateSummary,
} from './issue-fields.js';
import { commentWire, issueWire, selectFields } from './issue-wire.js';
import { issueNotFound, JiraApiError } from './jira-error.js';
import { jiraTimestamp, type JiraIssue, type JiraState } from './jira-state.js';
import { availableTransitions, INITIAL_STATUS, statusWire } from './workflow.js';

/** The absolute base URL the client used, for `self` links (Jira's are absolute). */
export function baseUrlOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? request.hostname}`;
}

type IdParams = { Params: { idOrKey: string } };

function objectBody(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new JiraApiError(400, ['Can not deserialize the request body: expected a JSON object.']);
  }
  return body as Record<string, unknown>;
}

function mustFind(state: JiraState, idOrKey: string): JiraIssue {
  const issue = state.findIssue(idOrKey);
  if (issue === undefined) throw issueNotFound();
  return issue;
}

function touch(state: JiraState, issue: JiraIssue): void {
  issue.updated = jiraTimestamp();
  state.saveIssue(issue);
}

function addComment(state: JiraState, issue: JiraIssue, body: unknown): JiraIssue['comments'][number] {
  if (!isAdfDocument(body)) throw new JiraApiError(400, [], { comment: 'Comment body is not valid!' });
  const comment = { id: state.nextCommentId(), body, created: jiraTimestamp() };
  issue.comments.push(comment);
  touch(state, issue);
  return comment;
}

/**
 * Issue endpoints of Jira Cloud REST v3: create (no idempotency: the same body twice is two tickets),
 * get, edit, delete, transitions, comments.
 */
export function registerIssueRoutes(app: FastifyInstance, state: JiraState): void {
  app.post('/rest/api/3/issue', (request, reply) => {
    const fields = objectBody(request).fields;
    if (typeof fields !== 'object' || fields === null) {
      throw new JiraApiError(400, [], {
        project: 'valid project is required',
        summary: 'You must specify a summary of the issue.',
      });
    }
    const result = validateCreateFields(fields as Record<string, unknown>, state.projectKeys);
    if (!result.ok) throw new JiraApiError(400, [], result.errors);
    const now = jiraTimestamp();
    const issue: JiraIssue = {
      id: state.nextIssueId(),
      key: state.nextIssueKey(result.value.projectKey),
      projectKey: result.value.projectKey,
      issueType: result.value.issueType,
      summary: result.value.summary,
      description: result.value.description,
      labels: result.value.labels,
      status: INITIAL_STATUS,
      created: now,
      updated: now,
      comments: [],
    };
    state.saveIssue(issue);
    return reply
      .code(201)
      .send({ id: issue.id, key: issue.key, self: `${baseUrlOf(request)}/rest/api/3/issue/${issue.id}` });
  });

  app.get<IdParams & { Querystring: { fields?: string | string[] } }>(
    '/rest/api/3/issue/:idOrKey',
    (request) => {
      const issue = mustFind(state, request.params.idOrKey);
      const raw = request.query.fields;
      const requested =
        raw === undefined ? undefined : (Array.isArray(raw) ? raw : [raw]).flatMap((f) => f.split(','));
      return issueWire(issue, baseUrlOf(request), selectFields(requested, ['*all']));
    },
  );

  app.put<IdParams>('/rest/api/3/issue/:idOrKey', (request, reply) => {
    const issue = mustFind(state, request.params.idOrKey);
    const body = objectBody(request);
    const fields = (body.fields ?? {}) as Record<string, unknown>;
    const update = (body.update ?? {}) as Record<string, unknown>;
    const errors: Record<string, string> = {};
    const summary = fields.summary === undefined ? undefined : validateSummary(fields.summary, errors);
    const description =
      fields.description === undefined ? undefined : validateDescription(fields.description, errors);
    let labels = fields.labels === undefined ? undefined : validateLabels(fields.labels, errors);
    const labelOps = Array.isArray(update.labels) ? (update.labels as Record<string, unknown>[]) : [];
    for (const op of labelOps) {
      const next = new Set(labels ?? issue.labels);
      if (typeof op.add === 'string' && validateLabels([op.add], errors) !== undefined) next.add(op.add);
      if (typeof op.remove === 'string') next.delete(op.remove);
      if (Array.isArray(op.set)) for (const l of validateLabels(op.set, errors) ?? []) next.add(l);
      labels = [...next];
    }
    if (Object.keys(errors).length > 0) throw new JiraApiError(400, [], errors);
    if (summary !== undefined) issue.summary = summary;
    if (description !== undefined) issue.description = description;
    if (labels !== undefined) issue.labels = labels;
    touch(state, issue);
    return reply.code(204).send();
  });

  app.delete<IdParams>('/rest/api/3/issue/:idOrKey', (request, reply) => {
    state.deleteIssue(mustFind(state, request.params.idOrKey));
    return reply.code(204).send();
  });

  app.get<IdParams>('/rest/api/3/issue/:idOrKey/transitions', (request) => {
    const issue = mustFind(state, request.params.idOrKey);
    const base = baseUrlOf(request);
    return {
      expand: 'transitions',
      transitions: availableTransitions(issue.status).map((t) => ({
        id: t.id,
        name: t.name,
        to: statusWire(t.to, base),
        hasScreen: false,
        isGlobal: true,
        isInitial: false,
        isAvailable: true,
        isConditional: false,
        isLooped: false,
      })),
    };
  });

  app.post<IdParams>('/rest/api/3/issue/:idOrKey/transitions', (request, reply) => {
    const issue = mustFind(state, request.params.idOrKey);
    const body = objectBody(request);
    const rawId = (body.transition as { id?: unknown } | undefined)?.id;
    const transitionId = typeof rawId === 'string' || typeof rawId === 'number' ? String(rawId) : undefined;
    if (transitionId === undefined) throw new JiraApiError(400, ["Missing 'transition' identifier"]);
    const transition = availableTransitions(issue.status).find((t) => t.id === transitionId);
    if (transition === undefined) {
      throw new JiraApiError(400, [`Transition id '${transitionId}' is not valid for this issue.`]);
    }
    const commentOps = ((body.update as Record<string, unknown> | undefined)?.comment ?? []) as {
      add?: { body?: unknown };
    }[];
    for (const op of commentOps) if (op.add !== undefined) addComment(state, issue, op.add.body);
    issue.status = transition.to;
    touch(state, issue);
    return reply.code(204).send();
  });

  app.post<IdParams>('/rest/api/3/issue/:idOrKey/comment', (request, reply) => {
    const issue = mustFind(state, request.params.idOrKey);
    const comment = addComment(state, issue, objectBody(request).body);
    return reply.code(201).send(commentWire(issue, comment, baseUrlOf(request)));
  });

  app.get<IdParams>('/rest/api/3/issue/:idOrKey/comment', (request) => {
    const issue = mustFind(state, request.params.idOrKey);
    const comments = issue.comments.map((c) => commentWire(issue, c, baseUrlOf(request)));
    return { startAt: 0, maxResults: comments.length, total: comments.length, comments };
  });
}
