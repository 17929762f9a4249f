import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../src/index.js';
import { basic, call } from './http-client.js';

let sandbox: RunningSandbox;
let auth: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ settings: { jiraSearchLagMs: 300 } });
  auth = { authorization: basic(sandbox.credentials.jiraEmail, sandbox.credentials.jiraApiToken) };
});
afterAll(async () => sandbox.close());
beforeEach(() => sandbox.admin.reset());

const jira = (path: string, init: { method?: string; json?: unknown } = {}) =>
  call(`${sandbox.urls.jira}${path}`, { ...init, headers: auth });

const create = (labels: string[], summary = 'Order #1182 refund') =>
  jira('/rest/api/3/issue', {
    json: { fields: { project: { key: 'SUP' }, issuetype: { name: 'Task' }, summary, labels } },
  });

const adf = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});

describe('jira sandbox', () => {
  it('creates issues with 201 { id, key, self } and no idempotency: a duplicate is a second ticket', async () => {
    const first = await create(['saga-run1-0']);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: '10000',
      key: 'SUP-1',
      self: `${sandbox.urls.jira}/rest/api/3/issue/10000`,
    });
    const second = await create(['saga-run1-0']);
    expect((second.body as { key: string }).key).toBe('SUP-2');
    expect(sandbox.admin.ledger().jira.issues).toHaveLength(2);
  });

  it('validates labels and fields with Jira error bodies', async () => {
    const spaced = await create(['has space']);
    expect(spaced.status).toBe(400);
    expect(spaced.body).toEqual({
      errorMessages: [],
      errors: { labels: "The label 'has space' contains spaces which is invalid." },
    });
    const long = await create(['x'.repeat(256)]);
    expect((long.body as { errors: Record<string, string> }).errors.labels).toMatch(/255/);
    const noSummary = await jira('/rest/api/3/issue', {
      json: { fields: { project: { key: 'NOPE' }, issuetype: { name: 'Task' } } },
    });
    expect((noSummary.body as { errors: Record<string, string> }).errors).toEqual({
      project: 'valid project is required',
      summary: 'You must specify a summary of the issue.',
    });
    expect(sandbox.admin.ledger().jira.issues).toHaveLength(0);
  });

  it('rejects bad Basic auth with 401', async () => {
    const answer = await call(`${sandbox.urls.jira}/rest/api/3/myself`, {
      headers: { authorization: basic('agent@example.com', 'wrong') },
    });
    expect(answer.status).toBe(401);
    expect((answer.body as { errorMessages: string[] }).errorMessages).toHaveLength(1);
  });

  it('searches /search/jql behind an index lag; reconcileIssues reads given ids at once', async () => {
    const created = (await create(['saga-run2-0'])).body as { id: string; key: string };
    const jql = encodeURIComponent('project = SUP AND labels = "saga-run2-0"');
    const early = await jira(`/rest/api/3/search/jql?jql=${jql}&fields=summary,status,labels`);
    expect(early.status).toBe(200);
    expect(early.body).toEqual({ issues: [], isLast: true });
    const reconciled = await jira('/rest/api/3/search/jql', {
      json: { jql: 'labels = "saga-run2-0"', fields: ['summary'], reconcileIssues: [Number(created.id)] },
    });
    expect((reconciled.body as { issues: { key: string }[] }).issues.map((i) => i.key)).toEqual([
      created.key,
    ]);
    await new Promise((r) => setTimeout(r, 350));
    const late = await jira(`/rest/api/3/search/jql?jql=${jql}&fields=summary,status`);
    const issues = (
      late.body as { issues: { key: string; fields: { status: { statusCategory: { key: string } } } }[] }
    ).issues;
    expect(issues.map((i) => i.key)).toEqual([created.key]);
    expect(issues[0]?.fields.status.statusCategory.key).toBe('new');
  });

  it('pages with nextPageToken and isLast, and refuses unbounded queries', async () => {
    sandbox.admin.configure({ jiraSearchLagMs: 0 });
    for (let i = 0; i < 3; i++) await create([`bulk`]);
    const page1 = (await jira('/rest/api/3/search/jql?jql=labels%3Dbulk&maxResults=2')).body as {
      issues: unknown[];
      nextPageToken?: string;
      isLast: boolean;
    };
    expect(page1.issues).toHaveLength(2);
    expect(page1.isLast).toBe(false);
    const page2 = (
      await jira(
        `/rest/api/3/search/jql?jql=labels%3Dbulk&maxResults=2&nextPageToken=${page1.nextPageToken ?? ''}`,
      )
    ).body as { issues: unknown[]; nextPageToken?: string; isLast: boolean };
    expect(page2.issues).toHaveLength(1);
    expect(page2.isLast).toBe(true);
    expect(page2.nextPageToken).toBeUndefined();
    const unbounded = await jira('/rest/api/3/search/jql?jql=ORDER%20BY%20created');
    expect(unbounded.status).toBe(400);
  });

  it('answers 410 on the removed /rest/api/3/search', async () => {
    const answer = await jira('/rest/api/3/search?jql=project%3DSUP');
    expect(answer.status).toBe(410);
    expect((answer.body as { errorMessages: string[] }).errorMessages[0]).toMatch(/search\/jql/);
  });

  it('transitions by target status category and comments in ADF', async () => {
    const { key } = (await create(['saga-run3-0'])).body as { key: string };
    const list = (await jira(`/rest/api/3/issue/${key}/transitions`)).body as {
      transitions: { id: string; name: string; to: { name: string; statusCategory: { key: string } } }[];
    };
    expect(list.transitions.map((t) => t.to.name)).not.toContain('To Do');
    const done = list.transitions.find((t) => t.to.statusCategory.key === 'done');
    expect(done).toBeDefined();
    expect(
      (await jira(`/rest/api/3/issue/${key}/transitions`, { json: { transition: { id: done?.id } } })).status,
    ).toBe(204);
    const bad = await jira(`/rest/api/3/issue/${key}/transitions`, { json: { transition: { id: '999' } } });
    expect(bad.status).toBe(400);
    const comment = await jira(`/rest/api/3/issue/${key}/comment`, {
      json: { body: adf('Closed: duplicate') },
    });
    expect(comment.status).toBe(201);
    const notAdf = await jira(`/rest/api/3/issue/${key}/comment`, { json: { body: 'plain text' } });
    expect(notAdf.status).toBe(400);
    const [issue] = sandbox.admin.ledger().jira.issues;
    expect(issue).toMatchObject({ key, status: 'Done', statusCategory: 'done', labels: ['saga-run3-0'] });
    expect(issue?.comments.map((c) => c.text)).toEqual(['Closed: duplicate']);
  });
});
