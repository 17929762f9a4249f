/** Refusals as results the model can act on: written once in `@agent-saga/client` (`tool-answers.ts`). */
export { errorResult } from '@agent-saga/client';
