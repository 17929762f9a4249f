/**
 * The command line of `pnpm simulate`, parsed once with zod into a frozen object. A bad flag throws a
 * {@link UsageError} naming it (the entry point prints it with the usage line and exits 2).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';

export const Harness = { AGENT_SAGA: 'agent-saga', NAIVE: 'naive' } as const;
export type Harness = (typeof Harness)[keyof typeof Harness];
export const HARNESSES: readonly Harness[] = Object.values(Harness);

export const SIMULATE_USAGE =
  'usage: pnpm simulate [--episodes N] [--seed S] [--harness agent-saga|naive|both] [--concurrency C] [--json]\n' +
  '  --episodes N     how many seeded episodes (default 200)\n' +
  '  --seed S         seed of the episodes (default: time-based, printed); same seed, same episodes\n' +
  '  --harness H      agent-saga, naive or both (default both): which harnesses play the episodes\n' +
  '  --concurrency C  episodes in flight at once per harness (default 12)\n' +
  '  --json           print one JSON object (totals, byFaultMode, byPolicy) instead of the tables';

/** A bad command line: the message names the flag. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface SimulateOptions {
  readonly episodes: number;
  readonly seed: number;
  readonly harnesses: readonly Harness[];
  readonly concurrency: number;
  readonly json: boolean;
  /** From the environment or `.env` (as `vitest.config.ts` reads it); needed by the agent-saga harness. */
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
}

const positiveInt = (max: number) => z.coerce.number().int().min(1).max(max);

/**
 * Why these bounds: 100,000 episodes is ten times the issue's target run; 64 in flight is past what two
 * cores serve (the roles answer each call in a few ms, the faults hold calls for seconds). Seeds are 32-bit
 * (the random source is mulberry32).
 */
const flagsSchema = z.object({
  '--episodes': positiveInt(100_000).default(200),
  '--seed': z.coerce.number().int().min(1).max(0xffff_ffff).optional(),
  '--harness': z.enum(['agent-saga', 'naive', 'both']).default('both'),
  '--concurrency': positiveInt(64).default(12),
  '--json': z.boolean().default(false),
});

const envSchema = z.object({
  DATABASE_URL: z.url().optional(),
  REDIS_URL: z.url().optional(),
});

const VALUED = new Set(['--episodes', '--seed', '--harness', '--concurrency']);

/** Parses argv (after the script name); `repoRoot` is where `.env` may be. */
export function parseSimulateOptions(
  argv: readonly string[],
  repoRoot: string,
  environment: Readonly<Record<string, string | undefined>>,
): SimulateOptions {
  const raw: Record<string, unknown> = {};
  const args = argv.filter((a) => a !== '--');
  for (let i = 0; i < args.length; i++) {
    const flag = args[i] ?? '';
    if (flag === '--json') raw[flag] = true;
    else if (VALUED.has(flag)) {
      const value = args[++i];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`${flag} needs a value`);
      raw[flag] = value;
    } else throw new UsageError(`unknown argument ${flag}`);
  }
  const parsed = flagsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const flag = String(issue?.path[0] ?? 'argument');
    throw new UsageError(`${flag}: ${issue?.message ?? 'invalid'} (got ${JSON.stringify(raw[flag])})`);
  }
  const f = parsed.data;
  const dotenvPath = resolve(repoRoot, '.env');
  const dotenv = existsSync(dotenvPath) ? parseEnv(readFileSync(dotenvPath, 'utf8')) : {};
  const env = envSchema.safeParse({
    DATABASE_URL: environment.DATABASE_URL ?? dotenv.DATABASE_URL,
    REDIS_URL: environment.REDIS_URL ?? dotenv.REDIS_URL,
  });
  if (!env.success) throw new UsageError(`${String(env.error.issues[0]?.path[0])}: not a URL`);
  const harnesses = f['--harness'] === 'both' ? HARNESSES : [f['--harness']];
  if (harnesses.includes(Harness.AGENT_SAGA) && (!env.data.DATABASE_URL || !env.data.REDIS_URL))
    throw new UsageError('the agent-saga harness needs DATABASE_URL and REDIS_URL (or `pnpm bootstrap`)');
  return Object.freeze({
    episodes: f['--episodes'],
    seed: f['--seed'] ?? (Date.now() % 1_000_000) + 1,
    harnesses,
    concurrency: f['--concurrency'],
    json: f['--json'],
    databaseUrl: env.data.DATABASE_URL,
    redisUrl: env.data.REDIS_URL,
  });
}
