import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createVendorApp, type VendorAppDeps } from '../http/create-vendor-app.js';
import type { SandboxSettings } from '../settings.js';
import { Vendor } from '../vendors.js';
import { registerIssueRoutes } from './issue-routes.js';
import { SANDBOX_ACCOUNT } from './issue-wire.js';
import { JiraApiError } from './jira-error.js';
import type { JiraState } from './jira-state.js';
import { registerSearchRoutes } from './search-routes.js';

export interface JiraAppDeps extends VendorAppDeps {
  readonly state: JiraState;
  readonly settings: SandboxSettings;
  readonly email: string;
  readonly apiToken: string;
}

const UNAUTHENTICATED = new JiraApiError(401, [
  'You are not authenticated. Authentication required to perform this operation.',
]);

/** `onRequest` hook: Basic auth with the account's email and API token, else 401. */
function jiraAuthHook(email: string, apiToken: string) {
  const expected = `Basic ${Buffer.from(`${email}:${apiToken}`).toString('base64')}`;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.headers.authorization === expected) return;
    return reply.code(401).send(UNAUTHENTICATED.toBody());
  };
}

/** The fake Jira Cloud site (REST v3), one project per configured key. */
export function createJiraApp(deps: JiraAppDeps): FastifyInstance {
  return createVendorApp(Vendor.JIRA, deps, {
    setup: (app) => {
      app.addHook('onRequest', jiraAuthHook(deps.email, deps.apiToken));
      app.setErrorHandler((error: FastifyError | JiraApiError, request, reply) => {
        if (error instanceof JiraApiError) return reply.code(error.statusCode).send(error.toBody());
        if (error.statusCode !== undefined && error.statusCode < 500) {
          return reply
            .code(error.statusCode)
            .send(new JiraApiError(error.statusCode, [error.message]).toBody());
        }
        request.log.error(error);
        return reply.code(500).send(new JiraApiError(500, ['Internal server error']).toBody());
      });
      app.setNotFoundHandler((_request, reply) =>
        reply.code(404).send(new JiraApiError(404, ['null for uri: the resource does not exist']).toBody()),
      );
      app.get('/rest/api/3/myself', () => ({ ...SANDBOX_ACCOUNT, emailAddress: deps.email }));
      registerIssueRoutes(app, deps.state);
      registerSearchRoutes(app, deps.state, deps.settings);
    },
  });
}
