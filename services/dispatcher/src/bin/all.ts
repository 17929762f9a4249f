/**
 * Development only: starts the three roles (api, relay, executor) as three child processes sharing this
 * process's environment, prefixes nothing (each logs JSON with its own `name`), and forwards SIGTERM and
 * SIGINT to all of them. When one child exits on its own the others are stopped and this process exits
 * with that child's code: a half-started dispatcher is worse than none. In production run each role as its
 * own process, so each pool scales by itself.
 *
 * Compiled (`node --conditions=agent-saga-dist services/dispatcher/dist/bin/all.js`, after `pnpm build`) it starts the compiled roles
 * as production does, with `ROLE_NODE_FLAGS`; from its TypeScript source (`node --import tsx
 * services/dispatcher/src/bin/all.ts`) it starts the roles' sources through tsx, as before.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeArgsFor } from '@agent-saga/core';

const ROLES = ['api', 'relay', 'executor'] as const;
const here = dirname(fileURLToPath(import.meta.url));

/** Compiled when this file is dist/bin/all.js: start the roles' .js beside it, else their .ts through tsx. */
const compiled = import.meta.url.endsWith('.js');
/** Each role's source entry (src/bin/<role>.ts, wherever this file runs from); core's `nodeArgsFor` runs it. */
const roleArgs = (role: string): string[] =>
  nodeArgsFor(join(here, '..', '..', 'src', 'bin', `${role}.ts`), compiled);

const children = new Map<string, ChildProcess>();
let stopping = false;

function stopAll(signal: NodeJS.Signals): void {
  stopping = true;
  for (const child of children.values()) if (child.exitCode === null) child.kill(signal);
}

/**
 * Each role has a metrics listener of its own: with METRICS_PORT set, the api takes it and the relay and
 * the executor the next two ports (the three would otherwise collide on one port); unset or 0, each picks
 * a free one.
 */
const metricsBase = Number(process.env.METRICS_PORT ?? 0);
const envOf = (i: number): NodeJS.ProcessEnv =>
  metricsBase > 0 ? { ...process.env, METRICS_PORT: String(metricsBase + i) } : process.env;

for (const [i, role] of ROLES.entries()) {
  const child = spawn(process.execPath, roleArgs(role), {
    stdio: 'inherit',
    env: envOf(i),
  });
  children.set(role, child);
  child.on('exit', (code, signal) => {
    children.delete(role);
    if (!stopping) {
      process.stderr.write(`${role} exited (${signal ?? code}); stopping the others\n`);
      process.exitCode = code ?? 1;
      stopAll('SIGTERM');
    }
    if (children.size === 0) process.exit(process.exitCode ?? 0);
  });
}

process.on('SIGTERM', () => stopAll('SIGTERM'));
process.on('SIGINT', () => stopAll('SIGINT'));
