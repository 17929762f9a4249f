import { existsSync } from 'node:fs';

/**
 * Starts Postgres and Redis in containers with testcontainers, only where a Docker engine answers.
 * Elsewhere it fails saying what to set instead. Containers live as long as the test process.
 */
export async function startContainers(have: {
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
}): Promise<{ databaseUrl: string; redisUrl: string }> {
  const hasDocker = existsSync('/var/run/docker.sock') || Boolean(process.env.DOCKER_HOST);
  if (!hasDocker) {
    throw new Error(
      'Tests need a real Postgres and Redis: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test) ' +
        'and REDIS_URL (e.g. redis://127.0.0.1:6379), or run them where a Docker engine is available.',
    );
  }
  const { GenericContainer } = await import('testcontainers');
  let databaseUrl = have.databaseUrl;
  let redisUrl = have.redisUrl;
  if (!databaseUrl) {
    const c = await new GenericContainer('postgres:15')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .start();
    databaseUrl = `postgres://postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`;
  }
  if (!redisUrl) {
    const c = await new GenericContainer('redis:7').withExposedPorts(6379).start();
    redisUrl = `redis://${c.getHost()}:${c.getMappedPort(6379)}`;
  }
  return { databaseUrl, redisUrl };
}
