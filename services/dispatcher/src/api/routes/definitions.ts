import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { SagaDefinition, SagaRegistry } from '@agent-saga/core';
import type { ApiDeps } from '../api-deps.js';
import { definitionList, errorBody, type DefinitionView } from '../schemas.js';

/**
 * The saga definitions the tool module declares (`definitions`, registered against its tools at start).
 * Agent and operator tokens alike: a definition is code, the same for every tenant.
 */
export const definitionRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = (app, { deps }) => {
  app.get(
    '/definitions',
    {
      schema: {
        summary: 'The saga definitions: every registered name and version, with its steps',
        description:
          'Each step names its tool and the tool class, the steps it stands after (`dependsOn`), whether it ' +
          'is the pivot and whether it is repeatable. Lowest version first within a name. Runs are not bound ' +
          'to a definition yet: a later slice adds `POST /v1/runs { definition }`.',
        tags: ['definitions'],
        security: [{ bearer: [] }],
        response: { 200: definitionList, 401: errorBody },
      },
    },
    () => {
      const registry = deps.definitions;
      return { definitions: registry ? registry.list().map((d) => presentDefinition(registry, d)) : [] };
    },
  );
  return Promise.resolve();
};

function presentDefinition(registry: SagaRegistry, d: SagaDefinition): DefinitionView {
  return {
    name: d.name,
    version: d.version,
    steps: d.steps.map((s) => ({
      id: s.id,
      tool: s.tool,
      // Registered against these tools, so every step's tool is there.
      toolClass: registry.tools.require(s.tool).class,
      dependsOn: [...s.dependsOn],
      pivot: s.pivot,
      repeatable: s.repeatable,
    })),
  };
}
