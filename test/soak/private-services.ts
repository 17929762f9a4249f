/**
 * `--private-services`: a throwaway Postgres cluster and a Redis of the soak's own, on free ports, so a
 * soak restarts nothing anyone else uses. Both are torn down by `close()` (also after a failed start).
 *
 * - Postgres: `initdb` into a fresh `/tmp/soak-pg-*` directory (trust auth, user `postgres`), started with
 *   `pg_ctl` on a free port with its socket in that directory. initdb refuses to run as root, so as root
 *   every `initdb`/`pg_ctl` runs as the `postgres` OS user (`runuser`), in a directory it owns. Restarts
 *   alternate between `pg_ctl restart -m fast` (every backend terminated, as a failover) and
 *   `stop -m immediate` + `start` (a crash: WAL replayed).
 * - Redis: `redis-server --save "" --appendonly no` as a child process; a restart is `shutdown nosave`
 *   and a new server on the same port, empty, as Redis without persistence comes back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '@agent-saga/core';
import { run, waitForPostgres, waitForRedis, waitUntil, type ServiceControl } from './service-control.js';

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** Starts both services; on any failure, whatever was started is torn down before the error is thrown. */
export async function startPrivateServices(): Promise<ServiceControl> {
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync('/tmp/soak-pg-');
  const data = join(dir, 'data');
  let pgStarted = false;
  let redis: ChildProcess | undefined;
  // As root, Postgres's tools run as the `postgres` OS user; otherwise as the current user.
  const pgTool = (tool: string, args: readonly string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', join(PG_BIN, tool), ...args])
      : run(join(PG_BIN, tool), args);
  const [pgPort, redisPort] = await Promise.all([freePort(), freePort()]);
  const databaseUrl = `postgres://postgres@127.0.0.1:${pgPort}/postgres`;
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const pgStart = () =>
    pgTool('pg_ctl', [
      '-D',
      data,
      '-l',
      join(dir, 'postgres.log'),
      // Why max_connections 300: six roles, each a pool, a LISTEN connection and the email drafts' pool.
      // fsync off: a throwaway cluster; an immediate stop still replays WAL from the OS's buffers.
      '-o',
      `-p ${pgPort} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off`,
      '-w',
      '-t',
      '60',
      'start',
    ]);
  const startRedis = async () => {
    const child = spawn(
      'redis-server',
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    redis = child;
    await waitForRedis(redisPort);
  };
  const stopRedis = async () => {
    const child = redis;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    await run('redis-cli', ['-p', String(redisPort), 'shutdown', 'nosave'], 5_000).catch(() => undefined);
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };
  const close = async () => {
    await stopRedis().catch(() => undefined);
    if (pgStarted) await pgTool('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    if (asRoot) {
      const uid = Number((await run('id', ['-u', 'postgres'])).trim());
      const gid = Number((await run('id', ['-g', 'postgres'])).trim());
      chownSync(dir, uid, gid);
    }
    await pgTool('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await pgStart();
    pgStarted = true;
    await waitForPostgres(databaseUrl);
    await startRedis();
  } catch (e) {
    await close();
    throw e;
  }

  let restarts = 0;
  return {
    description: `a private Postgres cluster (${dir}, port ${pgPort}) and a private Redis (port ${redisPort})`,
    databaseUrl,
    redisUrl,
    async restartPostgres() {
      restarts += 1;
      if (restarts % 2 === 1) {
        await pgTool('pg_ctl', [
          '-D',
          data,
          '-m',
          'fast',
          '-w',
          '-t',
          '60',
          'restart',
          '-l',
          join(dir, 'postgres.log'),
          '-o',
          `-p ${pgPort} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off`,
        ]);
        await waitForPostgres(databaseUrl);
        return 'pg_ctl restart -m fast';
      }
      await pgTool('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      await pgStart();
      await waitForPostgres(databaseUrl);
      return 'pg_ctl stop -m immediate; pg_ctl start';
    },
    async restartRedis() {
      await stopRedis();
      await waitUntil(
        async () =>
          !(await run('redis-cli', ['-p', String(redisPort), 'ping'], 2_000).catch(() => '')).includes(
            'PONG',
          ),
        'the private Redis to stop',
      );
      await startRedis();
      return `redis-cli -p ${redisPort} shutdown nosave; redis-server --port ${redisPort} --save "" --appendonly no`;
    },
    close,
  };
}
