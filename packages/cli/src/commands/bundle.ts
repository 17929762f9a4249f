import type { Command } from 'commander';
import { BUNDLED_ROLES, bundleRoles, type BundledRole } from '../bundle/bundle-roles.js';
import { CliUsageError, printJson, println, type CliIo } from '../cli-io.js';

const ROLE_NAMES = Object.keys(BUNDLED_ROLES) as BundledRole[];

/**
 * `agent-saga bundle --tools <module> --out <dir>`: each role with the tool module in one file
 * (`<dir>/api.mjs`, …), which starts in about half the CPU of the role loaded file by file (see
 * `bundleRoles`). Run it after `pnpm build`, where the roles will run; start a role as
 * `node <dir>/<role>.mjs` with `SAGA_TOOLS` naming the same module.
 */
export function registerBundle(program: Command, io: CliIo): void {
  program
    .command('bundle')
    .description('bundle each role with the tool module into one file per role, for a faster start')
    .requiredOption('--tools <module>', 'the tool module the roles load (SAGA_TOOLS)')
    .requiredOption('--out <dir>', 'where to write <role>.mjs')
    .option('--roles <names>', `comma-separated, of ${ROLE_NAMES.join(', ')}`, ROLE_NAMES.join(','))
    .option('--json', 'print the result as JSON')
    .action(async (opts: { tools: string; out: string; roles: string; json?: boolean }) => {
      const roles = parseRoles(opts.roles);
      const files = await bundleRoles({ tools: opts.tools, outDir: opts.out, roles });
      if (opts.json) {
        printJson(io, { files });
        return;
      }
      for (const f of files) println(io, `${f.role}: ${f.file} (${(f.bytes / 1e6).toFixed(1)} MB)`);
    });
}

function parseRoles(list: string): BundledRole[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !ROLE_NAMES.includes(n as BundledRole));
  if (names.length === 0 || unknown.length > 0)
    throw new CliUsageError(
      `--roles: ${unknown.length > 0 ? `unknown ${unknown.join(', ')}` : 'none named'}; expected some of ${ROLE_NAMES.join(', ')}`,
    );
  return [...new Set(names)] as BundledRole[];
}
