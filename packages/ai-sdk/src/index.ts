// The public surface of @agent-saga/ai-sdk. Named exports only: what is not here is internal.
export { sagaTools, loadSagaTools, type SagaToolsOptions } from './saga-tools.js';
export {
  createSagaApprovals,
  type SagaApprovals,
  type HeldCall,
  type ApprovalRequestPart,
} from './saga-approvals.js';
export { UNKNOWN_WHAT_TO_DO, type SagaToolResult, type RefusalResult } from './tool-result.js';
