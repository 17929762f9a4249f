import { existsSync } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';
import { ROLE_NODE_FLAGS } from './role-node-flags.js';

/**
 * Whether the harnesses that start role processes (the test fixtures, the soak, the simulator, the demo)
 * start them compiled: `SAGA_ROLES_COMPILED=true`. The test run sets it after building (`vitest.config.ts`
 * and its global set-up, `test/build-once.ts`), as `pnpm soak` and `pnpm simulate` do after theirs; a
 * plain `pnpm demo` leaves it unset and runs the sources, so an edit needs no build.
 */
export function rolesCompiled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.SAGA_ROLES_COMPILED === 'true';
}

/**
 * Where the harnesses find role bundles (`agent-saga bundle --out <dir>`), when they are to start roles
 * from them: `SAGA_ROLES_BUNDLED=<dir>` (`pnpm simulate` sets it after bundling); undefined otherwise.
 */
export function rolesBundleDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = env.SAGA_ROLES_BUNDLED;
  return dir ? resolve(dir) : undefined;
}

/**
 * The `node` arguments that run the TypeScript entry `sourceEntry` (an absolute path, e.g.
 * `…/services/dispatcher/src/bin/api.ts`):
 * - with `bundleDir`, and a bundle of that role in it (`<bundleDir>/api.mjs`, named after the entry): the
 *   bundle with {@link ROLE_NODE_FLAGS}. A bundle is the role, its tool module and everything both import in
 *   one file, so a start reads one file instead of some 2,300 (see `agent-saga bundle`);
 * - with `compiled`, and its twin built under the package's `dist/` (`…/dist/bin/api.js`): the twin with
 *   {@link ROLE_NODE_FLAGS}, exactly as production and the bench run a role. Why the harnesses want this: a
 *   role through tsx takes about 3 s of CPU to start on this 2-core machine (tsx's module-hooks thread
 *   resolves and loads every module), compiled about 1.3 s, and a test run, a soak and a simulation start
 *   and kill hundreds of roles. A TypeScript tool module (`SAGA_TOOLS`) still loads: tsx is registered for
 *   it alone (`importModuleFile`).
 * - otherwise (not asked, or an entry of a package the build does not compile, such as the sandbox): the
 *   source through tsx.
 *
 * Only the harnesses that built first ask for `compiled`, so a twin is never older than its source there.
 */
export function nodeArgsFor(
  sourceEntry: string,
  compiled: boolean = rolesCompiled(),
  bundleDir: string | undefined = rolesBundleDir(),
): string[] {
  if (bundleDir !== undefined) {
    const bundle = join(bundleDir, `${basename(sourceEntry).replace(/\.ts$/, '')}.mjs`);
    if (existsSync(bundle)) return [...ROLE_NODE_FLAGS, bundle];
  }
  const srcDir = `${sep}src${sep}`;
  const at = sourceEntry.lastIndexOf(srcDir);
  if (compiled && at >= 0 && sourceEntry.endsWith('.ts')) {
    const built = `${sourceEntry.slice(0, at)}${sep}dist${sep}${sourceEntry.slice(at + srcDir.length, -3)}.js`;
    if (existsSync(built)) return [...ROLE_NODE_FLAGS, built];
  }
  return ['--import', 'tsx', sourceEntry];
}
