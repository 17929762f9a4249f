import { ClientError } from '@agent-saga/core';
import type { AdfDocument } from './adf.js';
import { doTransition, listTransitions } from './issue-endpoints.js';
import type { JiraConnection } from './jira-connection.js';
import type { JiraTransition } from './jira-wire.js';
import type { HttpCall } from '../http/send-http-request.js';

/**
 * Moves an issue along the first transition the workflow offers whose target matches `target` (by status
 * name, or by status category for "done"), picking by target and never by id: ids differ between workflows.
 * No matching transition is a definitive refusal (nothing was changed): {@link ClientError}.
 */
export async function transitionToStatus(
  conn: JiraConnection,
  key: string,
  target: { readonly name: string } | { readonly category: string },
  comment: AdfDocument | undefined,
  call: HttpCall,
): Promise<JiraTransition> {
  const offered = await listTransitions(conn, key, call);
  const matches = (t: JiraTransition) =>
    'name' in target
      ? t.to.name.toLowerCase() === target.name.toLowerCase()
      : t.to.statusCategory.key === target.category;
  const transition = offered.find(matches);
  if (transition === undefined) {
    const wanted = 'name' in target ? `status ${target.name}` : `status category ${target.category}`;
    throw new ClientError(`jira: ${key} offers no transition to ${wanted}`, {
      vendor: 'jira',
      vendorCode: 'no_transition',
    });
  }
  await doTransition(conn, key, transition.id, comment, call);
  return transition;
}
