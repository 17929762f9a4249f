/**
 * BullMQ for the bench, loaded from the dispatcher's own dependency so the baseline runs the very version
 * (and the same CommonJS build) the executor runs. The bench package pins the same bullmq (6.7.0) for its
 * peers, but loading the dispatcher's copy keeps the baseline on the very module the executor loads; this
 * is the one place that knows where it is. The CommonJS build is required because it is what `import 'bullmq'` gives the
 * services (the package has no `exports` map, only `main`) and because only it can load the optional
 * `ioredis` driver; the types come from the package's declared `types`, which describe both builds.
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type * as BullMQ from '../services/dispatcher/node_modules/bullmq/dist/esm/index.js';
import { REPO_ROOT } from './bench-config.js';

const bullmq = createRequire(resolve(REPO_ROOT, 'services/dispatcher/package.json'))(
  'bullmq',
) as typeof BullMQ;

export const Queue = bullmq.Queue;
export type Queue = BullMQ.Queue;
export const QueueEvents = bullmq.QueueEvents;
export type QueueEvents = BullMQ.QueueEvents;
export const Worker = bullmq.Worker;
export type Worker = BullMQ.Worker;
/** BullMQ 6's PostgreSQL backend: pass it as the third argument of Queue and Worker. */
export const createPostgresBackend = bullmq.createPostgresBackend;
