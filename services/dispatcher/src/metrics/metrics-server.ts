// Moved to @agent-saga/core (shared by every worker process); re-exported for the dispatcher's bins.
export { startMetricsServer, stopMetricsServer } from '@agent-saga/core';
