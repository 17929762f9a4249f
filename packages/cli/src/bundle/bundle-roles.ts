import { cpSync, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { CliUsageError } from '../cli-io.js';

/**
 * The roles a bundle can be made of, each the compiled entry its service exports (`pnpm build` first), and
 * whether it loads the tool module (`SAGA_TOOLS`). The relay never runs a tool, so its bundle carries none.
 */
export const BUNDLED_ROLES = {
  api: { entry: '@agent-saga/dispatcher/bin/api', tools: true },
  relay: { entry: '@agent-saga/dispatcher/bin/relay', tools: false },
  executor: { entry: '@agent-saga/dispatcher/bin/executor', tools: true },
  reconciler: { entry: '@agent-saga/reconciler/bin/reconciler', tools: true },
  compensator: { entry: '@agent-saga/compensator/bin/compensator', tools: true },
} as const;
export type BundledRole = keyof typeof BUNDLED_ROLES;

/**
 * Packages a bundle imports from where they are installed instead of carrying: `@fastify/swagger-ui` serves
 * files that sit beside its code; `pg-native` and tsx are optional and loaded only if present.
 */
const LEFT_OUT = ['@fastify/swagger-ui', 'pg-native', 'tsx', 'tsx/*'];

/**
 * Where the api's operator console finds its files: `./assets/` beside the module that serves them
 * (`console-routes.ts`), which in a bundle is the bundle itself; they are copied from the dispatcher's build.
 */
const CONSOLE_ASSETS = 'dist/console/assets';

export interface BundleRolesOptions {
  /** The tool module (`SAGA_TOOLS`), relative to `cwd` or absolute; TypeScript is compiled in. */
  readonly tools: string;
  readonly outDir: string;
  readonly roles: readonly BundledRole[];
  /** Where the services are installed and relative paths start; the process's directory by default. */
  readonly cwd?: string;
}

export interface BundledFile {
  readonly role: BundledRole;
  readonly file: string;
  readonly bytes: number;
}

/**
 * Bundles each role with the tool module into one ES module, `<outDir>/<role>.mjs`, which starts as
 * `node <ROLE_NODE_FLAGS> <outDir>/<role>.mjs` with the role's usual environment (`SAGA_TOOLS` naming the
 * same module: the role stops otherwise, see core's `provideBundledModule`).
 *
 * Why: a role imports some 2,300 files (kysely, stripe, bullmq, zod, fastify and their own), and on Node 20
 * resolving, reading and compiling them one by one is most of its start — about 1.1 s of CPU for the api on
 * a quiet machine against 0.5 s for its bundle (measured 5 December 2026). A role that a supervisor
 * restarts, or that an autoscaler adds, serves that much sooner, and on a busy host costs the others less.
 * The tool module goes into the bundle with the role so that one copy of core and the connectors serves
 * both: imported at run time it would load its own copy of everything it imports.
 *
 * A bundle refers to what it leaves out ({@link LEFT_OUT}) by absolute path: build it where it runs (in the
 * image, after `pnpm install`).
 */
export async function bundleRoles(opts: BundleRolesOptions): Promise<BundledFile[]> {
  const cwd = resolve(opts.cwd ?? process.cwd());
  const toolsFile = resolve(cwd, opts.tools);
  if (!existsSync(toolsFile) || !statSync(toolsFile).isFile())
    throw new CliUsageError(`--tools: ${opts.tools} is not a file (from ${cwd})`);
  // Recorded as given (relative to cwd), as SAGA_TOOLS names it where the role runs.
  const toolsAsNamed = isAbsolute(opts.tools) ? opts.tools : relative(cwd, toolsFile);
  const outDir = resolve(cwd, opts.outDir);
  const out: BundledFile[] = [];
  for (const role of opts.roles) {
    const { entry, tools } = BUNDLED_ROLES[role];
    const entryFile = resolveBuilt(cwd, entry);
    const file = join(outDir, `${role}.mjs`);
    await build({
      stdin: {
        contents: bundleEntry(entryFile, tools ? { file: toolsFile, asNamed: toolsAsNamed } : undefined),
        resolveDir: cwd,
        sourcefile: `${role}-bundle-entry.mjs`,
        loader: 'js',
      },
      outfile: file,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      conditions: ['agent-saga-dist'],
      // Error and class names stay as written (logs, `err.name`).
      keepNames: true,
      sourcemap: 'linked',
      // CommonJS packages inside an ES module still call `require` for Node's own modules.
      banner: {
        js: "import { createRequire as __agentSagaRequire } from 'node:module'; const require = __agentSagaRequire(import.meta.url);",
      },
      plugins: [leaveOut(cwd)],
      logLevel: 'silent',
    });
    if (role === 'api') copyConsoleAssets(entryFile, outDir);
    out.push({ role, file, bytes: statSync(file).size });
  }
  return out;
}

/**
 * The bundle's entry: the tool module first, handed to core under `SAGA_TOOLS`, then the role, imported
 * after it so that the role's own start finds the module already provided.
 */
function bundleEntry(roleFile: string, tools?: { file: string; asNamed: string }): string {
  if (!tools) return `await import(${JSON.stringify(roleFile)});\n`;
  return [
    `import * as toolModule from ${JSON.stringify(tools.file)};`,
    `import { provideBundledModule } from '@agent-saga/core';`,
    `provideBundledModule('SAGA_TOOLS', ${JSON.stringify(tools.asNamed)}, toolModule);`,
    `await import(${JSON.stringify(roleFile)});`,
    '',
  ].join('\n');
}

/** The compiled file a role's entry names, or a usage error saying to build first. */
function resolveBuilt(cwd: string, entry: string): string {
  const require = createRequire(join(cwd, 'package.json'));
  let source: string;
  try {
    source = require.resolve(entry);
  } catch (err) {
    throw new CliUsageError(
      `cannot find ${entry} from ${cwd} (is @agent-saga/${entry.split('/')[1]} installed?): ${(err as Error).message}`,
    );
  }
  // `require` resolves the package's default condition (its TypeScript source); the bundle uses its build.
  const built = source.replace(/\/src\/bin\/([^/]+)\.ts$/, '/dist/bin/$1.js');
  if (!existsSync(built)) throw new CliUsageError(`${built} does not exist: run \`pnpm build\` first`);
  return built;
}

function copyConsoleAssets(apiFile: string, outDir: string): void {
  const pkgRoot = resolve(dirname(apiFile), '../..');
  const assets = join(pkgRoot, CONSOLE_ASSETS);
  if (!existsSync(assets)) throw new CliUsageError(`${assets} does not exist: run \`pnpm build\` first`);
  cpSync(assets, join(outDir, 'assets'), { recursive: true });
}

/** Resolves each left-out package where it is installed and keeps it out of the bundle, by absolute path. */
function leaveOut(cwd: string): Plugin {
  const matches = (path: string) =>
    LEFT_OUT.some((p) => (p.endsWith('/*') ? path.startsWith(p.slice(0, -1)) : path === p));
  return {
    name: 'agent-saga-leave-out',
    setup(b) {
      b.onResolve({ filter: /^[@a-z]/ }, async (args) => {
        if (!matches(args.path) || args.pluginData === 'leave-out') return undefined;
        const found = await b.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir || cwd,
          pluginData: 'leave-out',
        });
        // Not installed (optional): left as written, for the role to find or do without at run time.
        return { path: found.errors.length === 0 ? found.path : args.path, external: true };
      });
    },
  };
}
