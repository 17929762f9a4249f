import type { RefusedUnderKey } from './refused-under-key.js';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { ToolClass } from './tool-class.js';
import { valuesOf } from '../util/values-of.js';
import { type Audience } from '../review/corrections/audience.js';
import { ToolDefinitionError } from '../errors/errors.js';

/** What a tool receives with every call. */
export interface ToolContext {
  /** The harness's key for this call; send it to the real system (header, metadata, label, tag). */
  readonly idempotencyKey: string;
  readonly runId: string;
  readonly stepIdx: number;
  readonly tenantId: string;
  /** 1 for the first send of this step, higher after a re-dispatch. */
  readonly attempt: number;
  /** Fires at the tool's timeout (or on shutdown): stop and let the step become UNKNOWN. */
  readonly signal: AbortSignal;
  /** A child logger bound to the run, the step and the key. */
  readonly logger: Logger;
  /**
   * The W3C `traceparent` of the span this call runs in (the executor's, a lookup's, a compensation's):
   * send it as the `traceparent` header of the request to the real system, so the vendor's side of the
   * call joins the step's trace. Absent when the caller runs outside any trace (a test calling a tool).
   */
  readonly traceparent?: string;
  /**
   * Set only when the call is a compensation: why the run is being unwound, in the words of whoever asked
   * (`POST /v1/runs/{runId}/unwind { reason }`). The stored compensation was written before the forward
   * call, long before anyone knew this reason; a tool that leaves a note on the target (a closing comment)
   * can say why. Absent on forward calls.
   */
  readonly unwindReason?: string;
}

/** What a tool reports for an effect that exists in the real system. */
export interface ToolEffect<R = unknown> {
  /** The real system's id of the effect (ticket key, PaymentIntent id), or null when it has none. */
  readonly externalRef: string | null;
  readonly result: R;
  /** Set by a lookup that found more than one effect under one key: a duplicate-effect incident. */
  readonly duplicates?: readonly string[];
}

/**
 * What a lookup receives besides the key. `args` are the call's stored arguments as they were sent (refs
 * resolved): a lookup of an effect that carries no key of its own (a delete, a cancel) checks the state the
 * call was meant to reach; most lookups search by the key alone.
 */
export type LookupContext = Omit<ToolContext, 'attempt'> & {
  readonly args: Readonly<Record<string, unknown>>;
  /**
   * When the call's intent was recorded (the step's `created_at`, by the database's clock). The call was
   * sent after that row committed, so no effect of it is older, but for the skew between the database's
   * clock and the real system's: a lookup that scans by time (a list with no key filter) may stop there,
   * less a margin for that skew.
   */
  readonly intendedAt: Date;
};

/**
 * The forward effect as the step left it, recorded at confirmation: the external ref and the result the
 * tool returned (a tool that wants a precondition returns the target's status or version in `result`).
 */
export interface ForwardEffect {
  readonly externalRef: string | null;
  readonly result: unknown;
}

/**
 * What a precondition saw on the target of a forward effect, just before its compensation is sent:
 * - `as_left`: the target is as the forward step left it: the compensation may be sent;
 * - `already_compensated`: the target is already in the state the compensation would bring it to (a person
 *   closed the ticket, the charge was refunded elsewhere): nothing is sent, the step is compensated;
 * - `{ changed }`: the target changed in another way (edited, partly refunded): the compensation must not
 *   overwrite it; `changed` says what was seen, for the person who decides.
 */
export type PreconditionVerdict = 'as_left' | 'already_compensated' | { readonly changed: string };

/**
 * The `precondition` of a forward tool: reads the target of `forward` now. `ctx` is the forward step's
 * (its key, run, step, stored arguments). Throwing means "could not read": nothing is decided.
 */
export type PreconditionCheck = (forward: ForwardEffect, ctx: LookupContext) => Promise<PreconditionVerdict>;

/** A command stored as data: run later, by another process, with its own key. */
export interface CompensationCommand {
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

/** An amount of money a call moves, in the currency's minor units (cents), as Stripe counts it. */
export interface MoneyMove {
  /** Three letters, any case (compared lower-cased). */
  readonly currency: string;
  /** A non-negative integer in minor units. */
  readonly amount: number;
}

/**
 * What `moves` may read besides the call's arguments: the step of the same run whose effect the call acts
 * on, as the saga log has it. For a compensation, the forward step it undoes (a refund of a charge); for a
 * forward call whose arguments name an earlier step's external ref (a capture of an authorisation), that
 * step. Absent when there is none.
 */
export interface MoneyContext {
  readonly of?: {
    readonly tool: string;
    readonly args: Readonly<Record<string, unknown>>;
    readonly externalRef: string | null;
    readonly result: unknown;
  };
}

/** A message to people that the harness never sends by itself; a human reviews it. */
export interface CorrectionCommand {
  readonly template: string;
  readonly to: string;
  readonly vars: Record<string, unknown>;
}

type AnyArgs = z.ZodType<Record<string, unknown>>;

export interface ToolSpec<S extends AnyArgs = AnyArgs, R = unknown> {
  /** Unique, `[a-z][a-z0-9_]*`. */
  readonly name: string;
  /**
   * What the tool does, for the model that calls it (`GET /v1/tools` hands it to function calling with the
   * input schema). One or two sentences; at most 1,024 characters.
   */
  readonly description?: string;
  readonly class: ToolClass;
  /** Stored with every row, so a later process knows which definition wrote it. Positive integer. */
  readonly version: number;
  readonly args: S;
  /**
   * Argument paths (dotted) that make two calls "the same intent": a retry that changes one is refused
   * (IDEMPOTENCY_MISMATCH), and a new step whose values equal an earlier step's that may have taken effect is
   * refused as a duplicate (DUPLICATE_OPERATION) unless the tool is {@link repeatable}. A tool that declares
   * none is compared on its whole arguments.
   */
  readonly identity?: readonly string[];
  /**
   * Whether the same operation may legitimately happen more than once in one run (a second note, a second
   * email to the same person). Default false: a new step of this tool whose identity values (its whole
   * arguments, without `identity`) equal those of an earlier step of the run that may have taken effect
   * (any status but FAILED, NOT_EXECUTED and REJECTED) is refused 409 DUPLICATE_OPERATION, writing nothing;
   * while that earlier step's outcome is not known (INTENDED, UNKNOWN), 409 STEP_UNRESOLVED naming it.
   */
  readonly repeatable?: boolean;
  /**
   * The money this call moves (a charge, a capture, a refund), or null when these arguments move none
   * (an authorisation holds money, it moves none). Counted against a run's `budget.maxAmount` and compared
   * with its policy's `approveMoneyAbove`, forward and in compensations. A tool that moves money and does
   * not declare it is counted as moving none: declare it on every money-moving tool.
   */
  readonly moves?: (args: z.infer<S>, ctx: MoneyContext) => MoneyMove | null;
  /**
   * The call deletes something (a ticket, a draft): with the run policy `approveDeletions`, a compensation
   * of this tool waits for a person. Default false.
   */
  readonly deletes?: boolean;
  /**
   * Argument paths (dotted; a path through an array applies to each element) of credentials and the like:
   * never written to logs, and shown to nobody (`"[REDACTED]"` in every view, event, evidence and
   * correction). See `privacy/redact-personal.ts`, the one home of the rule.
   */
  readonly secret?: readonly string[];
  /**
   * Personal data the tool carries: argument paths (`personal`) and result paths (`personalResult`), dotted
   * like {@link secret}. One concept in two places: a customer's email, name, address or a free text about
   * them, whether the model wrote it in the arguments or the real system answered it in the result.
   * Operators see it (they correct customers); agent tokens see `"[PERSONAL]"` in run views and events,
   * wherever the step's data appears (its compensation's arguments, its result, its error); logs never carry
   * any argument value (names and a hash only). Declare every field that may hold personal data; a field
   * left out is shown to agents as it is.
   */
  readonly personal?: readonly string[];
  /** Result paths (dotted) of personal data; see {@link personal}. */
  readonly personalResult?: readonly string[];
  /**
   * Whether a call may carry argument fields that `args` does not know. Default false: a call with one is
   * refused 400 INVALID_ARGS naming it (zod would drop it without a word, and a model that writes
   * `receipt_email` for `receiptEmail` would get a charge with no receipt and no error). Set it for a
   * schema that renames or reshapes fields on purpose (a transform), so its output lacks input keys.
   */
  readonly acceptsUnknownArgs?: boolean;
  /** Who could see the effect. */
  readonly audience?: readonly Audience[] | ((args: z.infer<S>) => readonly Audience[]);
  /**
   * Builds the compensation, before the call, from the arguments and this step's key. Return null when
   * no compensation can be built for these arguments: the call is then held for approval.
   */
  readonly compensate?: (args: z.infer<S>, key: string) => CompensationCommand | null;
  /** The tool `compensate` names, when the probe at registration cannot find it by itself. */
  readonly compensationTool?: string;
  /** A note for people that could be needed if the effect is undone (never sent automatically). */
  readonly correction?: (args: z.infer<S>, key: string) => CorrectionCommand | null;
  readonly execute: (args: z.infer<S>, ctx: ToolContext) => Promise<ToolEffect<R>>;
  /**
   * Finds the effect made under `key` in the real system, or null. Required for non-pure tools. A lookup
   * that finds the vendor's record of the call refused, or done only in part and never to be completed
   * under this key, returns {@link RefusedUnderKey} (`refusedUnderKey(new ClientError(…))`): the step is
   * FAILED with that error (once the commit horizon has passed, or at once after an answered 500 from a
   * vendor that dedupes by key), instead of being sent again.
   */
  readonly lookup?: (key: string, ctx: LookupContext) => Promise<ToolEffect | RefusedUnderKey | null>;
  /**
   * Optional. Reads the target of this (forward) call's effect as it stands now and compares it with the
   * state the call left it in (`forward.result`, recorded at confirmation). The compensator asks it before
   * sending this step's compensation: `as_left` → send; `already_compensated` → mark compensated with the
   * evidence, send nothing; `{ changed }` → send nothing, a person decides. Declared on the forward tool
   * because it knows how to read its own target. See {@link PreconditionCheck}.
   */
  readonly precondition?: PreconditionCheck;
  /** How long the real system may take to show a new effect to `lookup`. Default 0. */
  readonly lookupLagMs?: number;
  /** The executor aborts the call after this long and records UNKNOWN. Default 30 000. */
  readonly timeoutMs?: number;
  /**
   * The longest after an attempt is sent that the real system may still make its effect: a request it
   * holds past the client's timeout and commits afterwards. An integer of milliseconds, ≥ 0. Default: the
   * tool's own {@link timeoutMs}, read when the rule is applied (so a copy of the tool with a shorter timeout
   * has a shorter default horizon): the harness never holds a request longer, and a vendor that may commit
   * later must declare more.
   *
   * Why it exists: aborting a call ends the client's wait, not the vendor's work. A "not found" is evidence
   * of absence only once this horizon and then `lookupLagMs` have passed since the attempt was sent
   * (`readLookupLag`, the one home of the rule); before that the effect may still appear, and a re-send
   * would make it twice on a vendor that does not dedupe by key (Jira). A keyed vendor (Stripe's
   * Idempotency-Key) dedupes the re-send, so the default is safe for it.
   */
  readonly commitHorizonMs?: number;
  /**
   * The real system itself dedupes a request that carries the step's key (Stripe's `Idempotency-Key`,
   * Resend's, a shipping API's): a second send under the key, while the first is in flight or after it
   * committed, makes no second effect (it is answered 409 "in flight", or replays the first answer).
   * Default false (Jira has no such key: a label is searched, not enforced).
   *
   * Why it matters: for such a tool a "not found" past its `lookupLagMs` is enough to **send the step
   * again** for a run still going forward (the lookup verdict `resendable`), without waiting out the
   * commit horizon: whatever became of the first send, the vendor makes the effect at most once. It is not
   * proof of absence: an unwind, or a run that stopped, still waits for the horizon before it concludes
   * that nothing happened. Declare it only when the vendor's documented contract says so.
   */
  readonly dedupesByKey?: boolean;
  /**
   * For a hold (a card authorisation, a reservation): how long the effect stays usable after it is made.
   * A pivot that stages such a step expires before the hold does: its approval's deadline is the earliest
   * hold's end, and on expiry the run unwinds (the holds are released). Unset: the effect does not lapse.
   */
  readonly holdWindowMs?: number;
}

/**
 * A tool after validation. Defaults are filled in, except `commitHorizonMs`, whose default follows the
 * tool's `timeoutMs` (read it through `commitHorizonOf`); the object is frozen.
 */
export type Tool<S extends AnyArgs = AnyArgs, R = unknown> = Readonly<
  Omit<
    ToolSpec<S, R>,
    | 'audience'
    | 'lookupLagMs'
    | 'timeoutMs'
    | 'identity'
    | 'secret'
    | 'personal'
    | 'personalResult'
    | 'repeatable'
    | 'dedupesByKey'
    | 'deletes'
    | 'acceptsUnknownArgs'
  >
> & {
  readonly acceptsUnknownArgs: boolean;
  readonly audience: (args: z.infer<S>) => readonly Audience[];
  /** The audience when it is declared as a list; null when it is a function of the arguments. */
  readonly fixedAudience: readonly Audience[] | null;
  readonly deletes: boolean;
  readonly identity: readonly string[];
  readonly repeatable: boolean;
  readonly dedupesByKey: boolean;
  readonly secret: readonly string[];
  readonly personal: readonly string[];
  readonly personalResult: readonly string[];
  readonly lookupLagMs: number;
  readonly timeoutMs: number;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any, any>;

const NAME = /^[a-z][a-z0-9_]*$/;
/** A dotted path of a declaration: non-empty segments, no leading, trailing or doubled dot. */
const isDottedPath = (p: unknown): boolean =>
  typeof p === 'string' && p.length > 0 && p.split('.').every((part) => part.length > 0);
/**
 * Why 100: far above any real tool's name, and a bound on what a caller's `tool` may be before it is
 * looked up (the API refuses a longer one without reading it further).
 */
export const MAX_TOOL_NAME = 100;
const CLASSES = valuesOf(ToolClass);
/** Why 1,024: OpenAI's limit on a function's description; a model reads it on every turn. */
const MAX_DESCRIPTION = 1024;
/** Default tool timeout: long enough for a slow vendor, short enough that an agent is not left waiting. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/**
 * Declares a tool. Fails at once, naming the field, when the declaration cannot be run safely: no class,
 * a compensatable or reversible tool without `compensate`, a side-effecting tool without `lookup`.
 */
export function defineTool<S extends AnyArgs, R>(spec: ToolSpec<S, R>): Tool<S, R> {
  const name = typeof spec?.name === 'string' ? spec.name : String(spec?.name);
  const fail = (field: string, message: string): never => {
    throw new ToolDefinitionError(name, field, message);
  };
  if (typeof spec?.name !== 'string' || !NAME.test(spec.name)) fail('name', 'must match [a-z][a-z0-9_]*');
  if (spec.name.length > MAX_TOOL_NAME) fail('name', `must be at most ${MAX_TOOL_NAME} characters`);
  if (spec.class === undefined) fail('class', `is required: one of ${CLASSES.join(', ')}`);
  if (!CLASSES.includes(spec.class))
    fail('class', `must be one of ${CLASSES.join(', ')}; got ${String(spec.class)}`);
  if (!Number.isInteger(spec.version) || spec.version < 1) fail('version', 'must be a positive integer');
  if (!spec.args || typeof (spec.args as { safeParse?: unknown }).safeParse !== 'function')
    fail('args', 'must be a zod schema');
  if (typeof spec.execute !== 'function') fail('execute', 'must be a function');
  const needsCompensation = spec.class === ToolClass.COMPENSATABLE || spec.class === ToolClass.REVERSIBLE;
  if (needsCompensation && typeof spec.compensate !== 'function')
    fail('compensate', `a ${spec.class} tool must declare its compensation`);
  if (spec.class !== ToolClass.PURE && typeof spec.lookup !== 'function')
    fail('lookup', 'a side-effecting tool must be able to find its effect by key');
  if (spec.precondition !== undefined && typeof spec.precondition !== 'function')
    fail('precondition', 'must be a function');
  if (spec.lookupLagMs !== undefined && !(Number.isFinite(spec.lookupLagMs) && spec.lookupLagMs >= 0))
    fail('lookupLagMs', 'must be a non-negative number of milliseconds');
  if (spec.timeoutMs !== undefined && !(Number.isFinite(spec.timeoutMs) && spec.timeoutMs > 0))
    fail('timeoutMs', 'must be a positive number of milliseconds');
  if (
    spec.commitHorizonMs !== undefined &&
    !(Number.isInteger(spec.commitHorizonMs) && spec.commitHorizonMs >= 0)
  )
    fail('commitHorizonMs', 'must be a whole number of milliseconds, 0 or more');
  if (spec.holdWindowMs !== undefined && !(Number.isFinite(spec.holdWindowMs) && spec.holdWindowMs > 0))
    fail('holdWindowMs', 'must be a positive number of milliseconds');
  if (spec.repeatable !== undefined && typeof spec.repeatable !== 'boolean')
    fail('repeatable', 'must be true or false');
  if (
    spec.description !== undefined &&
    (typeof spec.description !== 'string' || spec.description.length > MAX_DESCRIPTION)
  )
    fail('description', `must be a string of at most ${MAX_DESCRIPTION} characters`);
  if (spec.moves !== undefined && typeof spec.moves !== 'function')
    fail('moves', 'must be a function (args, ctx) returning { currency, amount } or null');
  if (spec.deletes !== undefined && typeof spec.deletes !== 'boolean')
    fail('deletes', 'must be true or false');
  if (spec.dedupesByKey !== undefined && typeof spec.dedupesByKey !== 'boolean')
    fail('dedupesByKey', 'must be true or false');
  if (spec.acceptsUnknownArgs !== undefined && typeof spec.acceptsUnknownArgs !== 'boolean')
    fail('acceptsUnknownArgs', 'must be true or false');
  for (const field of ['secret', 'personal', 'personalResult'] as const) {
    const paths: unknown = spec[field];
    if (paths !== undefined && !(Array.isArray(paths) && paths.every(isDottedPath)))
      fail(field, 'must be a list of dotted paths (`to`, `address.line1`)');
  }
  const audience = spec.audience;
  // A tool re-validated by the registry already carries `fixedAudience` (its `audience` is a function now).
  const carried = (spec as Partial<Pick<AnyTool, 'fixedAudience'>>).fixedAudience;
  const fixedAudience = Array.isArray(audience)
    ? Object.freeze([...(audience as readonly Audience[])])
    : audience === undefined
      ? Object.freeze([])
      : (carried ?? null);
  return Object.freeze({
    ...spec,
    fixedAudience,
    identity: Object.freeze([...(spec.identity ?? [])]),
    repeatable: spec.repeatable ?? false,
    dedupesByKey: spec.dedupesByKey ?? false,
    deletes: spec.deletes ?? false,
    acceptsUnknownArgs: spec.acceptsUnknownArgs ?? false,
    secret: Object.freeze([...(spec.secret ?? [])]),
    personal: Object.freeze([...(spec.personal ?? [])]),
    personalResult: Object.freeze([...(spec.personalResult ?? [])]),
    audience: typeof audience === 'function' ? audience : () => audience ?? [],
    lookupLagMs: spec.lookupLagMs ?? 0,
    timeoutMs: spec.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
  });
}
