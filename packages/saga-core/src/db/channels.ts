// The LISTEN/NOTIFY channels of the saga log, one name each. Channels are per database: the schema name keeps
// deployments (and test files) that share a database apart.

/** The NOTIFY channel on which a settled step announces its key. Channels are per database; the schema
 * name keeps deployments (and test files) that share a database apart. */
export function stepSettledChannel(schema: string): string {
  return `saga_step_settled_${schema}`;
}

/** The NOTIFY channel that wakes outbox relays when a message is committed. */
export function outboxChannel(schema: string): string {
  return `saga_outbox_${schema}`;
}

/**
 * The NOTIFY channel that wakes compensators when a run is to be unwound (payload: the run id). Sent only
 * by `wakeCompensators`; listened to by the compensator's worker.
 */
export function unwindChannel(schema: string): string {
  return `saga_unwind_${schema}`;
}
