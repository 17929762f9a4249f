/**
 * Postgres and Redis as the soak restarts them. Two kinds:
 *
 * - the machine's own (the default): DATABASE_URL and REDIS_URL, restarted with the machine's commands
 *   (`pg_ctlcluster … restart`; `redis-cli shutdown nosave` then a fresh `redis-server` without
 *   persistence, so Redis loses everything it held). That needs root: `machineServices` refuses, saying so,
 *   before anything has started.
 * - a private pair (`--private-services`, private-services.ts): a throwaway cluster and a Redis of the
 *   soak's own, so a soak never disturbs what else runs on the machine.
 *
 * Every command is bounded by a timeout; a restart resolves only once the service answers again.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { sleep } from './seeded-random.js';

export interface ServiceControl {
  /** What the soak runs against, for the report. */
  readonly description: string;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  /** Restarts Postgres (every connection is cut); resolves with what was done once it accepts again. */
  restartPostgres(): Promise<string>;
  /** Restarts Redis losing every key it held; resolves once it answers PING again. */
  restartRedis(): Promise<string>;
  /** Tears down what the soak started (private services); the machine's are left running. */
  close(): Promise<void>;
}

/** The soak lacks the right to restart the machine's services; nothing was started. */
export class NeedsRootError extends Error {}

/** Why 60 s: a Postgres restart after a crash replays WAL; on a loaded 2-core machine that takes seconds. */
const COMMAND_TIMEOUT_MS = 60_000;

/** Runs a command with a timeout; rejects with its stderr on a non-zero exit. */
export function run(cmd: string, args: readonly string[], timeoutMs = COMMAND_TIMEOUT_MS): Promise<string> {
  return new Promise((resolveRun, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`.trim()));
      else resolveRun(stdout);
    });
  });
}

/** Waits until Postgres at `url` accepts a connection and answers a query (`psql`, bounded). */
export async function waitForPostgres(url: string, timeoutMs = COMMAND_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await run('psql', [url, '-tAXc', 'SELECT 1'], 3_000).catch((e: unknown) => String(e));
    if (answer.trim() === '1') return;
    if (Date.now() > deadline)
      throw new Error(`Postgres at ${redact(url)} not back after ${timeoutMs} ms: ${answer}`);
    await sleep(200);
  }
}

/** Waits until Redis on `port` answers PING. */
export async function waitForRedis(port: number, timeoutMs = COMMAND_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await run('redis-cli', ['-p', String(port), 'ping'], 2_000).catch(() => '');
    if (answer.trim() === 'PONG') return;
    if (Date.now() > deadline) throw new Error(`Redis on port ${port} not back after ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** A URL without its password, for messages. */
export function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

/**
 * The machine's Postgres and Redis. Refuses (NeedsRootError) unless the soak runs as root and the
 * machine's commands exist, so a soak that cannot restart them stops before it starts anything.
 */
export function machineServices(
  databaseUrl: string | undefined,
  redisUrl: string | undefined,
): ServiceControl {
  if (!databaseUrl || !redisUrl)
    throw new NeedsRootError('DATABASE_URL and REDIS_URL are needed (run `pnpm bootstrap`, it writes .env)');
  if (process.getuid?.() !== 0)
    throw new NeedsRootError(
      "restarting the machine's Postgres and Redis needs root: run `pnpm soak` as root, or with " +
        '--private-services (a throwaway Postgres and Redis of its own)',
    );
  const versions = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql') : [];
  const version = versions[0];
  if (versions.length !== 1 || version === undefined || !existsSync('/usr/bin/pg_ctlcluster'))
    throw new NeedsRootError(
      `cannot restart the machine's Postgres: expected pg_ctlcluster and one cluster version under ` +
        `/etc/postgresql, found ${JSON.stringify(versions)}; use --private-services`,
    );
  const redisPort = Number(new URL(redisUrl).port || 6379);
  return {
    description: `the machine's Postgres (${redact(databaseUrl)}, cluster ${version}/main) and Redis (port ${redisPort})`,
    databaseUrl,
    redisUrl,
    async restartPostgres() {
      await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart']);
      await waitForPostgres(databaseUrl);
      return `pg_ctlcluster ${version} main restart`;
    },
    async restartRedis() {
      // `shutdown nosave` closes the connection without an answer: its exit status is not the outcome.
      await run('redis-cli', ['-p', String(redisPort), 'shutdown', 'nosave']).catch(() => undefined);
      await waitUntil(
        async () =>
          !(await run('redis-cli', ['-p', String(redisPort), 'ping'], 2_000).catch(() => '')).includes(
            'PONG',
          ),
        'Redis to stop',
      );
      await run('redis-server', [
        '--daemonize',
        'yes',
        '--bind',
        '127.0.0.1',
        '-::1',
        '--port',
        String(redisPort),
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        '/var/lib/redis',
        '--logfile',
        '/var/log/redis/ci.log',
      ]);
      await waitForRedis(redisPort);
      return `redis-cli shutdown nosave; redis-server --port ${redisPort} --save "" --appendonly no`;
    },
    close: () => Promise.resolve(),
  };
}

/** Polls `done` every 100 ms until it is true; fails after `timeoutMs`. */
export async function waitUntil(
  done: () => Promise<boolean>,
  what: string,
  timeoutMs = COMMAND_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}
