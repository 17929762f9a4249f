/**
 * How every role process runs, in production and in the bench (infra/Dockerfile and infra/compose.yaml spell
 * the same list on their command lines, where nothing can be imported): compiled JavaScript (`pnpm build`),
 * the workspace packages resolved to their `dist/` by the `agent-saga-dist` export condition, and a heap
 * sized for a role. Why: tsx costs a role ~45–50 MiB (its module-hooks thread is a second V8 instance, plus
 * the transformed sources), and with V8's defaults old space fills to ~95 MiB before a full collection while
 * a role's live heap is 24–35 MiB; with these every role peaks at 100–124 MiB under load (issue 10's 150 MB),
 * at no measurable CPU cost (docs/benchmarks.md). The cap is hard: a role whose live heap passed 128 MiB
 * would stop with an out-of-memory error and be restarted, rather than grow.
 */
export const ROLE_NODE_FLAGS: readonly string[] = [
  '--conditions=agent-saga-dist',
  '--max-semi-space-size=8',
  '--max-old-space-size=128',
];
