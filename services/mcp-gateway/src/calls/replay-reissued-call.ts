import { DuplicateOperationError, type SagaClient, type Submission } from '@agent-saga/client';

/** The call a submission answered, as the gateway sent it. */
export interface SentCall {
  readonly runId: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly waitMs: number;
}

/**
 * A call re-issued after its first attempt was answered: the answer was lost on its way to the client
 * (the stream broke after the gateway wrote it), or the first attempt went through another process, whose
 * run handle saw it settle. This handle then takes it for a new step, which the dispatcher refuses as
 * DUPLICATE_OPERATION naming the earlier step, writing nothing.
 *
 * When that earlier step is the same tool with exactly the same arguments, the call is the re-issue every
 * MCP client makes, not a replanned duplicate. The dispatcher says so (`sameArgs`: it compares the parsed
 * forms, so a schema's defaults and the run view's redaction of personal fields do not matter; the gateway
 * holds only the raw arguments and cannot compare them itself). Then the gateway answers with the earlier
 * step's outcome, read by a retry at its index (the dispatcher replays the recorded outcome, `replayed: true`, and
 * sends nothing; an open step answers as its retry would). Any other difference keeps the refusal, as every
 * framework adapter shows it, so a model that rephrased an operation still reads "do not do it again".
 * Nothing here can act twice: it only ever retries a step that exists.
 */
export async function replayReissuedCall(
  client: Pick<SagaClient, 'call'>,
  call: SentCall,
  submission: Submission,
): Promise<Submission> {
  if (submission.ok || !(submission.error instanceof DuplicateOperationError)) return submission;
  const stepIdx = submission.error.earlierStepIdx;
  if (stepIdx === undefined || submission.error.details.tool !== call.tool || !submission.error.sameArgs)
    return submission;
  try {
    const outcome = await client.call(call.runId, call.tool, call.args, { stepIdx, waitMs: call.waitMs });
    return { ok: true, outcome };
  } catch (error) {
    return { ok: false, error };
  }
}
