/**
 * The naive harness, the kind the seed incident describes: the agent calls the vendors through the same
 * connectors' HTTP requests (the real Stripe, Jira and shipping tools of `@agent-saga/connectors`, with the
 * same timeouts), but
 * - deduplication is by hashing the arguments: the idempotency key is a hash of the tool and its arguments,
 *   so a reworded retry is a new call (and Jira, which has no idempotency, gets no protection at all);
 * - the transcript is the log: there is none besides what the agent remembers, so a resumed agent redoes
 *   what its transcript lacks, and a patient agent has nothing to read back;
 * - rollback walks the transcript: it compensates what the transcript says happened (closes the tickets it
 *   believes it opened, refunds the charges it believes it made, apologises to a customer who got a receipt),
 *   whether or not they exist;
 * - there is no pivot and no person: a workflow around one is just its writes, in order;
 * - the process faults (`executor_killed`, `api_restart`) are its own process dying at the same moment,
 *   after the vendor answered: the answer is lost with the process and the resumed agent, reading its
 *   transcript, calls the write again with its first wording (as `resume_after_crash`).
 */
import { createHash } from 'node:crypto';
import { sleep } from '../../../test/soak/seeded-random.js';
import {
  ClientError,
  createDb,
  createLogger,
  type AnyTool,
  type Logger,
  type SagaDb,
  type ToolContext,
} from '@agent-saga/core';
import {
  createEmailTools,
  createJiraTools,
  createShippingTools,
  createStripeTools,
  DEFAULT_EMAIL_TEMPLATES,
  emailConfigFromEnv,
  jiraConfigFromEnv,
  shippingConfigFromEnv,
  stripeConfigFromEnv,
} from '@agent-saga/connectors';
import type { z } from 'zod';
import type { Episode } from './draw-episodes.js';
import { isProcessMode } from './fault-modes.js';
import { TOOL_TIMEOUT_MS } from './sim-timings.js';
import { CHARGE_AMOUNT, CHARGE_CURRENCY, resolveRefs, sendsReceipt, WriteTool } from './support-workflows.js';
import type { Observation, ToolPort, TranscriptEntry } from './tool-port.js';

/** The connectors the naive harness calls, built once per simulation over one sandbox. */
export interface NaiveToolbox {
  readonly tools: ReadonlyMap<string, AnyTool>;
  readonly logger: Logger;
  close(): Promise<void>;
}

/**
 * Builds the tools from the connector environment of the naive harness's sandbox (`sandboxConnectorEnv`).
 * The email tools want a database for drafts; `send_email` never touches it, and `createDb` connects only
 * on first use, so a placeholder URL is enough when the simulation has no database.
 */
export function createNaiveToolbox(
  connectorEnv: Readonly<Record<string, string>>,
  databaseUrl?: string,
): NaiveToolbox {
  const env = { DATABASE_URL: databaseUrl ?? 'postgres://unused@127.0.0.1:1/unused', ...connectorEnv };
  const emailConfig = emailConfigFromEnv(env);
  const db: SagaDb = createDb({
    ...emailConfig.db,
    poolSize: 1,
    applicationName: 'agent-saga-simulate-naive',
  });
  const stripeTools: readonly AnyTool[] = Object.values(createStripeTools(stripeConfigFromEnv(env)));
  const all: readonly AnyTool[] = [
    ...stripeTools,
    ...createJiraTools(jiraConfigFromEnv(env)),
    ...createShippingTools(shippingConfigFromEnv(env)),
    ...createEmailTools(emailConfig, DEFAULT_EMAIL_TEMPLATES, { db }),
  ];
  return {
    tools: new Map(all.map((t) => [t.name, t])),
    logger: createLogger({ level: 'silent', name: 'simulate-naive' }),
    close: () => db.destroy(),
  };
}

/** The naive harness's key: a hash of the tool and its arguments, as the seed incident's harness made it. */
export function argumentHashKey(tool: string, args: unknown): string {
  return `naive-${createHash('sha256')
    .update(`${tool}\n${JSON.stringify(args)}`)
    .digest('hex')
    .slice(0, 40)}`;
}

/** The HTTP status an error carries, when an answer arrived (the connectors keep it as `status`). */
function statusOf(e: unknown): number | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const s =
    (e as { status?: unknown; statusCode?: unknown }).status ?? (e as { statusCode?: unknown }).statusCode;
  return typeof s === 'number' ? s : undefined;
}

/** Calls `tool` once as the naive harness does: its key from the arguments, the tool's own timeout. */
async function callOnce(
  box: NaiveToolbox,
  episode: Episode,
  step: number,
  tool: string,
  args: unknown,
): Promise<Observation> {
  const t = box.tools.get(tool);
  if (!t) throw new Error(`the naive harness has no tool ${tool}`);
  // Parsed as the executor parses a call's arguments, with the tool's own schema.
  const schema = t.args as z.ZodType;
  const parsed: unknown = schema.parse(args);
  const signal = AbortSignal.timeout(Math.min(t.timeoutMs, TOOL_TIMEOUT_MS));
  const ctx: ToolContext = {
    idempotencyKey: argumentHashKey(tool, args),
    runId: episode.ids.tag,
    stepIdx: step,
    tenantId: 'naive',
    attempt: 1,
    signal,
    logger: box.logger,
  };
  try {
    const effect = await t.execute(parsed, ctx);
    return { kind: 'done', ref: effect.externalRef };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (e instanceof ClientError) return { kind: 'refused', message };
    if (signal.aborted) return { kind: 'silence', message: 'timed out' };
    // An answer with a status is an error the agent sees; none is a reset or a closed connection.
    return statusOf(e) !== undefined ? { kind: 'error', message } : { kind: 'silence', message };
  }
}

/**
 * Why 60 s: longer than the agent spends on the hold (an eager agent's 20 s budget, a patient one's three
 * tries under timeouts), so a capture called beside its hold waits for the hold's last answer; an id not
 * read by then is one the agent never got.
 */
const REF_WAIT_MS = 60_000;

/** The naive harness's side of one episode. */
export function naivePort(box: NaiveToolbox, episode: Episode): ToolPort {
  let step = 0;
  const compensate = (tool: string, args: Record<string, unknown>) =>
    callOnce(box, episode, step++, tool, args).catch(() => undefined);
  /** The id each write's last `done` answer gave: what the agent read, and fills a capture in from. */
  const refs = new Map<number, string | null>();
  /** The writes whose process fault already played the crash (it plays once, as the fault fires once). */
  const crashedAt = new Set<number>();
  const callWrite = async (write: number, tool: string, args: Readonly<Record<string, unknown>>) => {
    // A `parallel` agent calls the capture beside the hold: it sends the id once it has read it.
    const until = Date.now() + REF_WAIT_MS;
    while (resolveRefs(args, (w) => refs.get(w) ?? null) === null && Date.now() < until) await sleep(100);
    const resolved = resolveRefs(args, (w) => refs.get(w) ?? null);
    if (resolved === null)
      return {
        kind: 'refused',
        message: `${tool}: no id to act on (an earlier answer was never read)`,
      } as const;
    const obs = await callOnce(box, episode, step++, tool, resolved);
    if (obs.kind === 'done') refs.set(write, obs.ref);
    return obs;
  };
  return {
    start: () => Promise.resolve(),
    async call(write, tool, args) {
      const crash = episode.faults.some((f) => f.write === write && isProcessMode(f.mode));
      if (!crash || crashedAt.has(write)) return callWrite(write, tool, args);
      // The vendor answered; the process died before the transcript recorded it. The resumed agent's
      // transcript lacks the write, so it calls it again, worded as at first.
      crashedAt.add(write);
      await callWrite(write, tool, args);
      return callWrite(write, tool, episode.writes[write]?.args(1, false) ?? args);
    },
    readBack: () => Promise.resolve({ kind: 'silence', message: 'the naive harness keeps no log to read' }),
    crash: () => undefined,
    finish: () => Promise.resolve(),
    async undo(reason, transcript: readonly TranscriptEntry[]) {
      for (const entry of [...transcript].reverse()) {
        switch (entry.tool) {
          case WriteTool.CREATE_TICKET:
            if (entry.ref !== null)
              await compensate('close_ticket', { ticket: entry.ref, reason: reason.slice(0, 200) });
            break;
          case WriteTool.CHARGE_CARD:
            if (entry.ref !== null) await compensate('refund', { payment: entry.ref });
            // The customer got a receipt (the transcript says it charged): tell them it was refunded.
            if (sendsReceipt(episode.workflow))
              await compensate('send_email', {
                to: episode.ids.email,
                template: 'charge_refunded_note',
                vars: { amount: CHARGE_AMOUNT, currency: CHARGE_CURRENCY, orderId: episode.ids.orderId },
              });
            break;
          case WriteTool.RESHIP:
            if (entry.ref !== null) await compensate('cancel_shipment', { shipment: entry.ref });
            break;
          case WriteTool.AUTHORIZE_PAYMENT:
            if (entry.ref !== null) await compensate('cancel_authorization', { authorization: entry.ref });
            break;
          case WriteTool.CAPTURE_PAYMENT:
            if (entry.ref !== null) await compensate('refund', { payment: entry.ref });
            break;
          case WriteTool.SEND_EMAIL:
            break; // an email cannot be unsent

          default: {
            const never: never = entry.tool;
            throw new Error(`unknown write ${String(never)}`);
          }
        }
      }
    },
    settle: () => Promise.resolve({ runStatus: null }),
  };
}
