/**
 * What the model reads as a tool's result lives in `@agent-saga/client` (`tool-answers.ts`), shared with
 * the other framework integrations so the words a model reads are written once; re-exported here under
 * this package's own names.
 */
export {
  outcomeResult,
  unknownResult,
  UNKNOWN_WHAT_TO_DO,
  type SagaToolResult,
  type RefusalResult,
} from '@agent-saga/client';
