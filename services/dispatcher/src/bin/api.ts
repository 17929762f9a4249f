/**
 * Entry point of an API process: `node --import tsx services/dispatcher/src/bin/api.ts`. Scale by processes
 * behind a load balancer; each holds one pool and one LISTEN connection. SIGTERM drains: the server stops
 * accepting (new requests get 503), calls waiting for an outcome answer 202 at once, requests under way
 * finish, then the pools close.
 */
import {
  createLogger,
  drainOnSignal,
  exitOnStartFailure,
  loadToolRegistry,
  openSagaDb,
  type Logger,
} from '@agent-saga/core';
import { buildApi } from '../api/build-api.js';
import { loadDispatcherConfig } from '../config.js';
import { bullmqProducerConnection, closeWithin } from '@agent-saga/core';
import { createExecuteQueue } from '../queue/execute-queue.js';

async function main(): Promise<void> {
  let logger: Logger | undefined;
  try {
    const config = loadDispatcherConfig();
    logger = createLogger({ level: config.LOG_LEVEL, name: 'saga-api' });
    const registry = await loadToolRegistry(config.SAGA_TOOLS);
    const { db } = await openSagaDb(config, 'api', config.DB_POOL_SIZE, logger);
    // A producer connection: while Redis is down the fast path fails at once and the relay takes over.
    const queue = createExecuteQueue(
      bullmqProducerConnection(config.REDIS_URL, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }),
      config.SAGA_QUEUE_PREFIX,
    );
    const log = logger;
    queue.on('error', (err) => log.warn({ err }, 'redis error on the execute queue; reconnecting'));
    const { app } = await buildApi({ db, schema: config.SAGA_DB_SCHEMA, registry, queue, config, logger });
    await app.listen({ host: config.HOST, port: config.PORT });
    drainOnSignal({
      logger,
      async drain() {
        await app.close();
        await closeWithin('the execute queue', () => queue.close(), log);
        await db.destroy();
      },
    });
    logger.info(
      {
        tools: registry.list().map((t) => t.name),
        schema: config.SAGA_DB_SCHEMA,
        fastPath: config.SAGA_FAST_PATH,
      },
      'api started',
    );
  } catch (err) {
    exitOnStartFailure(logger, err);
  }
}

await main();
