import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ToolDefinitionError } from '../errors/errors.js';

const TYPESCRIPT = /\.[cm]?ts$/;
/** An optional dependency, named through a variable so that nothing requires it to build. */
const TSX_API = 'tsx/esm/api';
const loaded = new Map<string, Promise<Record<string, unknown>>>();
/** The modules a role bundle carries, per setting: the path they were built from and their namespace. */
const bundled = new Map<string, { readonly path: string; readonly module: Record<string, unknown> }>();

/**
 * Called by a role bundle (`agent-saga bundle`) before the role starts: the module `setting` names was
 * built into the bundle from `modulePath` (relative to the directory the bundle was built in, or absolute),
 * and {@link importModuleFile} answers with it instead of loading a file.
 *
 * Why a bundle carries its tool module rather than importing it at run time: the tool module imports
 * `@agent-saga/core` and the connectors itself, so a role bundled without it would load a second copy of
 * them from their files (twice the start, and two copies of core's error classes, which the executor tells
 * apart by class). Why the setting must still name the same module: a role started with another
 * `SAGA_TOOLS` than it was built with would run tools its operator did not choose; it stops instead,
 * naming the setting.
 */
export function provideBundledModule(
  setting: string,
  modulePath: string,
  module: Record<string, unknown>,
): void {
  bundled.set(setting, { path: modulePath, module });
}

/**
 * Imports the module file a setting names (`SAGA_TOOLS`), once per process: every caller gets the same
 * evaluation, so a module's state (a sandbox client, a counter) exists once.
 *
 * A TypeScript module also loads in a compiled role (plain Node, which refuses `.ts`): then tsx is
 * registered for what is imported from here on (the role's own modules are already loaded, so they keep
 * their compiled instances and the tool module shares them: one `@agent-saga/core`, whose error classes
 * the executor tells apart). The price is more than tsx's own 0.3–0.4 s: its hooks serve every module
 * imported afterwards (the tool module's graph, and what the role loads lazily), on a second thread —
 * measured 3.2–4.0 s of that thread's CPU per role start under `pnpm simulate`, and on a quiet machine an
 * import of fastify, bullmq, ioredis, pino, kysely and core costing 2.2–2.6 s of CPU instead of 1.2–1.4 s.
 * It stays registered, so that a module that imports TypeScript lazily still works; compile the module
 * for a role that restarts often. Without tsx installed the role stops, naming the setting: compile the
 * module, or install tsx.
 */
export function importModuleFile(modulePath: string, setting: string): Promise<Record<string, unknown>> {
  const inBundle = bundled.get(setting);
  if (inBundle) {
    if (resolve(inBundle.path) === resolve(modulePath)) return Promise.resolve(inBundle.module);
    return Promise.reject(
      new ToolDefinitionError(
        '(module)',
        setting,
        `this role is a bundle built with ${inBundle.path}, and ${setting} names ${modulePath}: ` +
          `set ${setting} to ${inBundle.path}, or bundle the role again with ${modulePath}`,
      ),
    );
  }
  const url = pathToFileURL(resolve(modulePath)).href;
  let module = loaded.get(url);
  if (!module) {
    module = load(url, modulePath, setting);
    loaded.set(url, module);
  }
  return module;
}

async function load(url: string, modulePath: string, setting: string): Promise<Record<string, unknown>> {
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !TYPESCRIPT.test(modulePath))
      throw err;
  }
  const tsx = (await import(TSX_API).catch(() => null)) as { register(): unknown } | null;
  if (!tsx)
    throw new ToolDefinitionError(
      '(module)',
      setting,
      `${modulePath} is TypeScript and this process runs compiled JavaScript: compile it, or install tsx`,
    );
  tsx.register();
  // A new URL: the module map keeps the failed load of the plain one.
  return (await import(`${url}?typescript`)) as Record<string, unknown>;
}
