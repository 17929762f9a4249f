// The public surface of @agent-saga/connectors. Named exports only.
// --- Stripe ---
export {
  stripeConfigFromEnv,
  DEFAULT_STRIPE_LOOKUP_LAG_MS,
  DEFAULT_STRIPE_TIMEOUT_MS,
  type StripeConfig,
  type StripeApiBase,
} from './stripe/stripe-config.js';
export { createStripeTools, type StripeTools } from './stripe/create-stripe-tools.js';
export { classifyStripeError } from './stripe/classify-stripe-error.js';
export { StripeOutcomeUnknownError } from './stripe/stripe-errors.js';
// --- HTTP error classification for the plain-fetch vendors (Jira, email, shipping) ---
export { classifyHttpFailure, type HttpFailure } from './http/classify-http-failure.js';
export { HttpOutcomeUnknownError, type VendorErrorDetails } from './http/http-errors.js';
// --- the one error of a key the vendor saw with another request (every connector) ---
export {
  VendorIdempotencyMismatchError,
  type VendorIdempotencyMismatchFacts,
} from './vendor-idempotency-mismatch-error.js';
// --- Jira ---
export {
  jiraConfigFromEnv,
  DEFAULT_JIRA_COMMIT_HORIZON_MS,
  DEFAULT_JIRA_LOOKUP_LAG_MS,
  type JiraConfig,
} from './jira/jira-config.js';
export { createJiraTools } from './jira/jira-tools.js';
export { sagaLabel } from './jira/saga-label.js';
// --- Email ---
export {
  emailConfigFromEnv,
  DEFAULT_EMAIL_LOOKUP_WINDOW_MS,
  DEFAULT_EMAIL_LOOKUP_MAX_READS,
  DEFAULT_EMAIL_LOOKUP_LAG_MS,
  type EmailConfig,
} from './email/email-config.js';
export { createEmailTools, type EmailToolDeps } from './email/email-tools.js';
export {
  renderEmail,
  type EmailTemplate,
  type EmailTemplates,
  type RenderedEmail,
} from './email/email-templates.js';
export { DEFAULT_EMAIL_TEMPLATES } from './email/default-email-templates.js';
export {
  EmailDraftStatus,
  withEmailDrafts,
  type EmailDraftsTable,
  type EmailDraftRow,
  type EmailDraftsDb,
} from './email/email-drafts-table.js';
export { SAGA_KEY_TAG } from './email/resend-connection.js';
// --- Shipping ---
export { shippingConfigFromEnv, type ShippingConfig } from './shipping/shipping-config.js';
export { createShippingTools } from './shipping/shipping-tools.js';
// --- The support agent's saga definitions (its tool module exports them as `definitions`) ---
export { refundAndReship, refundAndReshipPivot, supportAgentSagas } from './support-agent-sagas.js';
// --- Upstream MCP servers as harness tools (a mapping file classes each upstream tool) ---
export {
  mcpUpstreamMappingSchema,
  loadMcpUpstreamMapping,
  parseMcpUpstreamMapping,
  type McpUpstreamMapping,
  type McpMappedTool,
  type McpUpstreamEntry,
} from './mcp-upstream/mcp-upstream-mapping.js';
export {
  createMcpUpstreamTools,
  type McpUpstreamToolsOptions,
} from './mcp-upstream/create-mcp-upstream-tools.js';
export {
  checkUpstreamTools,
  type HiddenUpstreamTool,
  type UpstreamToolsCheck,
} from './mcp-upstream/check-upstream-tools.js';
export {
  McpOutcomeUnknownError,
  McpUpstreamMappingError,
  McpUpstreamUnavailableError,
  UnmappedUpstreamToolError,
} from './mcp-upstream/mcp-upstream-errors.js';
export { classifyMcpFailure } from './mcp-upstream/classify-mcp-failure.js';
