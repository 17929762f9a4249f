import { ConfigError, OutcomeUnknownError } from '@agent-saga/core';

/**
 * The mapping file cannot be used: unreadable, not JSON, or a field fails its rule. The message names the
 * file and each failing field's path (`tools.desk_open_ticket.lookup.tool: Required`).
 */
export class McpUpstreamMappingError extends ConfigError {
  constructor(
    readonly source: string,
    readonly issues: readonly { readonly field: string; readonly message: string }[],
  ) {
    super(`${source}: ${issues.map((i) => `${i.field || '(file)'}: ${i.message}`).join('; ')}`);
  }
}

/**
 * An upstream cannot be used at start: it did not answer, or a tool the mapping names (forward, lookup or
 * compensation) is not in its `tools/list`. Stops the process at start, naming the upstream and the tool.
 */
export class McpUpstreamUnavailableError extends ConfigError {
  constructor(
    readonly upstream: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`upstream ${upstream}: ${message}`, options);
  }
}

/**
 * An upstream offers a tool the mapping does not class, and its annotations do not say it only reads: the
 * gateway refuses to start rather than expose (or silently drop) a tool that may change things. A hint
 * never decides a class; it only lets an unmapped read-only tool be hidden without stopping the start.
 */
export class UnmappedUpstreamToolError extends ConfigError {
  constructor(
    readonly upstream: string,
    readonly tool: string,
    readonly source: string,
  ) {
    super(
      `upstream tool ${upstream}.${tool} has no mapping in ${source}: ` +
        'map it with a class (annotations may suggest, never decide)',
    );
  }
}

/**
 * A `tools/call` to an upstream may have taken effect: the connection was reset or lost, the answer was a
 * 5xx or unreadable, the call timed out or was aborted. The step is UNKNOWN; its lookup decides.
 * `vendorCode` names what was seen (`ECONNRESET`, `http_500`, `timeout`) and is stored with the step.
 */
export class McpOutcomeUnknownError extends OutcomeUnknownError {
  constructor(
    message: string,
    readonly vendor: string,
    readonly vendorCode: string | undefined,
    readonly status: number | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
