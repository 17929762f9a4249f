/**
 * The soak's command line and environment, parsed once at start (`pnpm soak [options]`), and the two
 * profiles it runs: the default (100 runs started over about a minute) and `--short` (CI: fewer runs,
 * every fault at least once, about two minutes in all).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';

export const SOAK_USAGE =
  'usage: pnpm soak [--short] [--runs N] [--seed S] [--private-services] [--execute-inline] [--json]\n' +
  '  --short             fewer runs and a compressed chaos schedule (CI), about two minutes\n' +
  '  --runs N            how many runs (default 100; 24 with --short)\n' +
  '  --seed S            seed of the chaos schedule and the agents (default: time-based, printed)\n' +
  "  --private-services  a throwaway Postgres cluster and Redis of the soak's own, torn down at the end;\n" +
  "                      without it the machine's Postgres and Redis (DATABASE_URL, REDIS_URL) are restarted\n" +
  '  --execute-inline    the API runs first attempts itself (SAGA_EXECUTE_INLINE=true), steps claimed at intake\n' +
  '  --json              also print the checks as one JSON line at the end';

/** How one soak is shaped; every duration in milliseconds. */
export interface SoakProfile {
  readonly name: 'default' | 'short';
  readonly runs: number;
  /** Runs are started evenly over this window. */
  readonly startWindowMs: number;
  /** Faults are spread over this window (from the first run's start). */
  readonly chaosWindowMs: number;
  /** How long every run has, after the last one started and the chaos ended, to reach a terminal status. */
  readonly settleMs: number;
  /** Vendor answers lost (committed, then a 504 or a reset), spread over the chaos window. */
  readonly lostAnswers: number;
  /** Roles SIGKILLed beyond the one kill each gets. */
  readonly extraKills: number;
}

/**
 * Why these numbers: the default is the issue's "100 runs started over about a minute"; the settle window
 * covers the longest honest recovery: a step whose executor was killed mid-call waits for its lease (the
 * tool's 30 s timeout plus the margin), then the reconciler's lookup allows for the vendors' search lag.
 * The short profile keeps every kind of fault and a third of the runs.
 */
const PROFILES = {
  default: {
    name: 'default',
    runs: 100,
    startWindowMs: 60_000,
    chaosWindowMs: 70_000,
    settleMs: 150_000,
    lostAnswers: 12,
    extraKills: 4,
  },
  short: {
    name: 'short',
    runs: 24,
    startWindowMs: 25_000,
    chaosWindowMs: 35_000,
    settleMs: 90_000,
    lostAnswers: 6,
    extraKills: 0,
  },
} as const satisfies Record<string, SoakProfile>;

export interface SoakOptions {
  readonly profile: SoakProfile;
  readonly seed: number;
  readonly privateServices: boolean;
  /** The API runs with SAGA_EXECUTE_INLINE=true (its own first attempts, killed and restarted with it). */
  readonly executeInline: boolean;
  readonly json: boolean;
  /** From the environment or `.env`; used only without `--private-services`. */
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
}

const envSchema = z.object({
  DATABASE_URL: z.url().optional(),
  REDIS_URL: z.url().optional(),
});

/** Parses argv (after the script name); a bad argument throws with the usage line. */
export function parseSoakOptions(argv: readonly string[], repoRoot: string): SoakOptions {
  let short = false;
  let runs: number | undefined;
  let seed: number | undefined;
  let privateServices = false;
  let executeInline = false;
  let json = false;
  const args = argv.filter((a) => a !== '--');
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = () => {
      const v = args[++i];
      if (v === undefined) throw new Error(`${a} needs a value\n${SOAK_USAGE}`);
      return v;
    };
    if (a === '--short') short = true;
    else if (a === '--private-services') privateServices = true;
    else if (a === '--json') json = true;
    else if (a === '--execute-inline') executeInline = true;
    else if (a === '--runs') runs = positiveInt('--runs', value());
    else if (a === '--seed') seed = positiveInt('--seed', value());
    else throw new Error(`unknown argument ${a}\n${SOAK_USAGE}`);
  }
  const base = short ? PROFILES.short : PROFILES.default;
  // `.env` (written by `pnpm bootstrap`) fills in what the environment does not set, as in vitest.config.
  const dotenvPath = resolve(repoRoot, '.env');
  const dotenv = existsSync(dotenvPath) ? parseEnv(readFileSync(dotenvPath, 'utf8')) : {};
  const env = envSchema.parse({
    DATABASE_URL: process.env.DATABASE_URL ?? dotenv.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL ?? dotenv.REDIS_URL,
  });
  return Object.freeze({
    profile: Object.freeze({ ...base, runs: runs ?? base.runs }),
    seed: seed ?? (Date.now() % 1_000_000) + 1,
    privateServices,
    executeInline,
    json,
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
  });
}

function positiveInt(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`${flag} wants a positive integer, got ${v}\n${SOAK_USAGE}`);
  return n;
}
