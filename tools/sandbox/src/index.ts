export { startSandbox } from './start-sandbox.js';
export type { RunningSandbox, SandboxOptions, SandboxServer } from './start-sandbox.js';
export type { SandboxAdmin } from './sandbox-core.js';
export type { Ledger } from './admin/ledger.js';
export { FaultKind, DelayPhase } from './faults/fault-rule.js';
export type { FaultSpec, FaultSpecInput, FaultRule } from './faults/fault-rule.js';
export { stripePartialBatchFault } from './faults/stripe-partial-batch.js';
export { DEFAULT_CREDENTIALS, DEFAULT_SETTINGS } from './settings.js';
export type { SandboxCredentials, SandboxSettings } from './settings.js';
export { DEFAULT_SEED } from './seed.js';
export type { Seed } from './seed.js';
export { Vendor } from './vendors.js';
export type { RequestLogEntry } from './http/request-log.js';
export { sandboxAdminClient } from './admin/admin-client.js';
export type { ArmedFault, LedgerAnswer, SandboxAdminClient } from './admin/admin-client.js';
export { sandboxConnectorEnv, sandboxProcessEnv, sandboxUrls } from './sandbox-env.js';
export type { SandboxPorts, SandboxUrls } from './sandbox-env.js';
export {
  startMcpDesk,
  type McpDeskFault,
  type McpDeskOptions,
  type RunningMcpDesk,
  type Ticket as McpDeskTicket,
} from './mcp-desk/start-mcp-desk.js';
