import { parseConfig } from '@agent-saga/core';
import { z } from 'zod';

/** Why 30 s: Jira Cloud's JQL index usually catches up within seconds, but lags of tens of seconds are seen. */
export const DEFAULT_JIRA_LOOKUP_LAG_MS = 30_000;

/**
 * Why 120 s: the longest after a create (or a transition) is sent that Jira may still make it, held past
 * the tool's timeout and committed afterwards. Atlassian documents no server-side bound on how long Jira
 * Cloud goes on with a request whose client has gone (nor any idempotency for a create), so the default is
 * a guess on the safe side: four times the tools' 30 s timeout. Past it, plus `JIRA_LOOKUP_LAG_MS`, a "not
 * found" by the `saga-<key>` label is believed and the ticket is created again: a horizon too short makes
 * two tickets, one too long only delays the recovery of a create that never arrived.
 */
export const DEFAULT_JIRA_COMMIT_HORIZON_MS = 120_000;

const jiraEnvSchema = z.object({
  /** The site, e.g. `https://acme.atlassian.net` (the sandbox: `http://127.0.0.1:12112`). */
  JIRA_BASE_URL: z.url(),
  /** Basic auth: the account's email and an API token. */
  JIRA_EMAIL: z.string().min(1),
  JIRA_API_TOKEN: z.string().min(1),
  /** Project that tickets are created in, e.g. `SUP`. */
  JIRA_PROJECT_KEY: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'a Jira project key (upper case)'),
  /** Issue type of created tickets. */
  JIRA_ISSUE_TYPE: z.string().min(1).default('Task'),
  /** Status that `create_ticket_draft` moves a ticket to: one the team's queue does not show. */
  JIRA_DRAFT_STATUS: z.string().min(1).default('Draft'),
  /** Status that `open_ticket` moves a draft to: the team's queue. */
  JIRA_OPEN_STATUS: z.string().min(1).default('To Do'),
  /** How long a new label may take to show in JQL search; the harness waits this long before believing "absent". */
  JIRA_LOOKUP_LAG_MS: z.coerce.number().int().min(0).default(DEFAULT_JIRA_LOOKUP_LAG_MS),
  /** How long after a request is sent Jira may still commit it (the tools' `commitHorizonMs`). */
  JIRA_COMMIT_HORIZON_MS: z.coerce.number().int().min(0).default(DEFAULT_JIRA_COMMIT_HORIZON_MS),
});

/** The Jira connector's settings, parsed once. `apiToken` is a secret: never log this object. */
export interface JiraConfig {
  readonly baseUrl: string;
  readonly email: string;
  readonly apiToken: string;
  readonly projectKey: string;
  readonly issueType: string;
  readonly draftStatus: string;
  readonly openStatus: string;
  readonly lookupLagMs: number;
  /** The tools' `commitHorizonMs`: how long after a request is sent Jira may still make its effect. */
  readonly commitHorizonMs: number;
}

/** Parses the Jira variables from `env`; a missing or bad one fails naming it (`ConfigError`). */
export function jiraConfigFromEnv(env: Record<string, string | undefined>): JiraConfig {
  const e = parseConfig(jiraEnvSchema, env);
  return Object.freeze({
    baseUrl: e.JIRA_BASE_URL.replace(/\/+$/, ''),
    email: e.JIRA_EMAIL,
    apiToken: e.JIRA_API_TOKEN,
    projectKey: e.JIRA_PROJECT_KEY,
    issueType: e.JIRA_ISSUE_TYPE,
    draftStatus: e.JIRA_DRAFT_STATUS,
    openStatus: e.JIRA_OPEN_STATUS,
    lookupLagMs: e.JIRA_LOOKUP_LAG_MS,
    commitHorizonMs: e.JIRA_COMMIT_HORIZON_MS,
  });
}
