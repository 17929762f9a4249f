import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { describeTools } from '@agent-saga/core';
import type { ApiDeps } from '../api-deps.js';
import { errorBody, toolList, type ToolView } from '../schemas.js';

/**
 * The registry as JSON Schema for function calling in any language. Agent and operator tokens alike: the
 * tools are code, the same for every tenant. Described once at registration: the registry never changes
 * while the process runs.
 */
export const toolRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = (app, { deps }) => {
  const tools: ToolView[] = describeTools(deps.registry).map((t) => ({
    ...t,
    identity: [...t.identity],
    audience: t.audience && [...t.audience],
  }));
  app.get(
    '/tools',
    {
      schema: {
        summary: 'The tools: name, description, class and input schema of each, for function calling',
        description:
          'Each tool with its input as JSON Schema (the schema the harness parses arguments with), the ' +
          'argument paths that identify an operation, its audience, and whether its calls are held for an ' +
          "approval. A run's policy may hold other calls too (`approveMoneyAbove`). By name.",
        tags: ['tools'],
        security: [{ bearer: [] }],
        response: { 200: toolList, 401: errorBody },
      },
    },
    () => ({ tools }),
  );
  return Promise.resolve();
};
