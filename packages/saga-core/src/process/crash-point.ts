/**
 * Named crash points: a test starts a real process with `SAGA_CRASH_POINTS=after-tool-before-record` and
 * the process kills itself (SIGKILL, no cleanup, exactly like a power cut) when it reaches that point.
 * Off unless the variable names the point; the names are a contract with the tests.
 */
export const CrashPoint = {
  /** Executor: the tool returned (the effect exists) and the outcome is not yet recorded. */
  AFTER_TOOL_BEFORE_RECORD: 'after-tool-before-record',
  /** Executor: the step is claimed and the tool not yet called. */
  AFTER_CLAIM_BEFORE_TOOL: 'after-claim-before-tool',
  /** Relay: the job is added to BullMQ and the outbox row not yet marked published. */
  AFTER_PUBLISH_BEFORE_MARK: 'after-publish-before-mark',
  /** Compensator: the compensation tool returned (the effect is undone) and the outcome is not yet recorded. */
  COMPENSATION_AFTER_TOOL_BEFORE_RECORD: 'compensation-after-tool-before-record',
  /**
   * API: the correction's email went out (the vendor answered) and the correction is still `sending`: the
   * reconciler's sweep must settle it by the lookup by key, never send it again.
   */
  AFTER_CORRECTION_SEND_BEFORE_RECORD: 'after-correction-send-before-record',
} as const;
export type CrashPoint = (typeof CrashPoint)[keyof typeof CrashPoint];

export function createCrashPoints(spec: string): (point: CrashPoint) => void {
  const enabled = new Set(
    spec
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  if (enabled.size === 0) return () => {};
  return (point) => {
    if (enabled.has(point)) {
      process.stderr.write(`crash point reached: ${point}\n`);
      process.kill(process.pid, 'SIGKILL');
    }
  };
}
