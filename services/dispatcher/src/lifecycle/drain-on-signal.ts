// Moved to @agent-saga/core (shared by every service's entry points); re-exported for the dispatcher's bins.
export { drainOnSignal, exitOnStartFailure } from '@agent-saga/core';
