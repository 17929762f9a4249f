// The public surface of @agent-saga/openai-agents. Named exports only: what is not here is internal.
export {
  sagaAgentTools,
  loadSagaAgentTools,
  type SagaAgentToolsOptions,
  type SagaAgentTool,
} from './saga-agent-tools.js';
export {
  createSagaAgentApprovals,
  functionCallOf,
  type SagaAgentApprovals,
  type HeldCall,
  type FunctionCallRef,
  type InterruptedState,
  type AppliedDecisions,
} from './saga-agent-approvals.js';
export { UNKNOWN_WHAT_TO_DO, type SagaToolResult, type RefusalResult } from '@agent-saga/client';
