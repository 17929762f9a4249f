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

/**
 * The NOTIFY channel on which a run announces its id when its status changes (payload: the run id). Sent
 * by every move of a run's status (`transitionRun`, the compensator's grouped close) in the moving
 * transaction, so it is delivered at commit; the API's run reads that wait for a status (`waitMs`) listen.
 */
export function runChangedChannel(schema: string): string {
  return `${RUN_CHANGED_PREFIX}${schema}`;
}

const RUN_CHANGED_PREFIX = 'saga_run_changed_';

/**
 * {@link runChangedChannel} as a SQL expression of the session's schema (`current_schema()`: every
 * connection's search path is the saga schema alone, `pgConnectionConfig`), for statements that move a
 * run's status without being told the schema.
 */
export const RUN_CHANGED_CHANNEL_SQL = `'${RUN_CHANGED_PREFIX}' || current_schema()`;
