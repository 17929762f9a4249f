/**
 * BullMQ for the bench, taken from the dispatcher's own dependency so the baseline runs the very version
 * the executor runs. The root package does not depend on bullmq and the bench is not a workspace package,
 * so a bare `'bullmq'` does not resolve from here; this is the one place that knows the path.
 */
export {
  Queue,
  QueueEvents,
  Worker,
  type ConnectionOptions,
  type Job,
} from '../services/dispatcher/node_modules/bullmq/dist/esm/index.js';
