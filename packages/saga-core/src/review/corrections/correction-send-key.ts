import { stepKey } from '../../steps/intent/idempotency-key.js';

/**
 * The tool a correction is sent with. A stored correction is a message (`{ template, to, vars }`, see
 * `CorrectionCommand`), so it goes out through the registry's email tool, under its own key, and an unknown
 * send is settled by that tool's lookup by key (the email's `saga_key` tag).
 */
export const CORRECTION_TOOL = 'send_email';

/**
 * The key version `version` of the correction of step `stepIdx` (forward tool `forwardTool`) is sent under.
 * Derived from the correction's identity (its run and step: one correction per step) and the message's
 * version, never from the message's text: an edit makes a new version, hence a new key, so an unknown send
 * of version 1 can never be repeated as version 2 under the same key (the vendor would replay version 1).
 * Resending the same version (after a lookup proved it absent) reuses its key, so a repeat is a replay.
 *
 * Version 1 keeps the spelling corrections were sent under before versions existed (`correct:<tool>`), so a
 * send left unknown by an older build is looked up and repeated under the key it really went out with.
 */
export function correctionSendKey(
  runId: string,
  stepIdx: number,
  forwardTool: string,
  version: number,
): string {
  if (!Number.isInteger(version) || version < 1) throw new RangeError('version must be a positive integer');
  return stepKey(
    runId,
    stepIdx,
    version === 1 ? `correct:${forwardTool}` : `correct:${forwardTool}:v${version}`,
  );
}

/**
 * How long a send holds its lease: the email tool's timeout (the sender stops waiting then) plus `marginMs`
 * to record the outcome. Written as `now() + leaseMs` by the database, and read against its clock.
 */
export function correctionLeaseMs(tool: { readonly timeoutMs: number }, marginMs: number): number {
  return tool.timeoutMs + marginMs;
}
