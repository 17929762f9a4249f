import type { HttpEndpoint } from '../http/send-http-request.js';
import type { JiraConfig } from './jira-config.js';

/** What every Jira tool needs: the settings and the endpoint with its Basic auth header, built once. */
export interface JiraConnection {
  readonly config: JiraConfig;
  readonly endpoint: HttpEndpoint;
}

export function createJiraConnection(config: JiraConfig): JiraConnection {
  const basic = Buffer.from(`${config.email}:${config.apiToken}`).toString('base64');
  return Object.freeze({
    config,
    endpoint: Object.freeze({ vendor: 'jira', baseUrl: config.baseUrl, authorization: `Basic ${basic}` }),
  });
}
