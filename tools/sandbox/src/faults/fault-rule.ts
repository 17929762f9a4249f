import { z } from 'zod';
import { VENDORS, type Vendor } from '../vendors.js';

/**
 * What an injected fault does to the request it matches. Defined once; the admin schema and the hooks
 * derive from it.
 */
export const FaultKind = {
  /** Close the connection before the request is processed: nothing happened. */
  DROP: 'drop',
  /** Process the request (the effect exists), then answer 504 instead of the real answer. */
  ERROR_AFTER: 'error_after',
  /** Process the request (the effect exists), then destroy the socket: the client sees a reset. */
  RESET_AFTER: 'reset_after',
  /** Wait `delayMs` (e.g. past the client's timeout), then process as usual. */
  DELAY: 'delay',
  /** Answer `status` with `body` without processing: nothing happened. */
  STATUS: 'status',
  /**
   * Process the request and answer it, then process the very same request (method, path, headers, body)
   * once more, as a transport that resends: a keyed request is deduplicated by the vendor (a replay), an
   * unkeyed one (Jira) happens twice. The client sees only the first answer.
   */
  REDELIVER: 'redeliver',
  /**
   * Process only part of the request, then answer an error (`status`, default 500, with `body`): the
   * top-level body fields named in `omit` are dropped after the vendor's idempotency claim and before its
   * handler runs, as a batch whose later items never ran (e.g. a Stripe PaymentIntent created with
   * `confirm`, its confirmation omitted: the object exists, unconfirmed). The error replaces the answer
   * before the vendor's idempotency store saves it, so a vendor that saves 5xx answers (Stripe) replays the
   * error to a retry with the same key, as Stripe documents.
   */
  PARTIAL_BATCH: 'partial_batch',
} as const;
export type FaultKind = (typeof FaultKind)[keyof typeof FaultKind];

/**
 * Where a `delay` waits. `before_processing` (the default) waits before anything, idempotency included;
 * `during_processing` waits after the idempotency key has been claimed, so a second request with the same
 * key meanwhile meets the vendor's "in flight" conflict.
 */
export const DelayPhase = {
  BEFORE_PROCESSING: 'before_processing',
  DURING_PROCESSING: 'during_processing',
  /**
   * The vendor has processed the request (its effect exists, its answer is written and saved) and the
   * answer is held `delayMs` before it goes out: the window in which a caller can die after the vendor
   * answered and before it read the answer.
   */
  AFTER_PROCESSING: 'after_processing',
} as const;
export type DelayPhase = (typeof DelayPhase)[keyof typeof DelayPhase];

/** The body of `POST /__admin/faults`. */
export const faultSpecSchema = z
  .object({
    vendor: z.enum(VENDORS as [Vendor, ...Vendor[]]),
    /** HTTP method to match, or `*` (the default) for any. */
    method: z
      .string()
      .default('*')
      .transform((m) => m.toUpperCase()),
    /** Path pattern without the query string: `*` matches any run of characters, `:name` one segment. */
    path: z.string().min(1).default('*'),
    /**
     * Match only requests whose path with query string, or whose raw body, contains this text (e.g. an
     * order id), so that concurrent callers each get their own faults. Such a fault is matched once the
     * body has arrived, after the vendor's authentication (a fault without it is matched before).
     */
    contains: z.string().min(1).max(500).optional(),
    /** Which matching request (1-based, counted from when the fault was added) is hit. */
    nth: z.number().int().min(1).optional(),
    /** Hit every matching request instead of the nth. */
    every: z.boolean().optional(),
    kind: z.enum(Object.values(FaultKind) as [FaultKind, ...FaultKind[]]),
    /** For `delay`: milliseconds to wait. */
    delayMs: z.number().int().min(0).max(600_000).optional(),
    /** For `delay`: where to wait. */
    phase: z.enum(Object.values(DelayPhase) as [DelayPhase, ...DelayPhase[]]).default('before_processing'),
    /** For `status` (required) and `error_after` (default 504): the status to answer. */
    status: z.number().int().min(100).max(599).optional(),
    /** For `status` and `error_after`: the JSON body to answer; a default per kind otherwise. */
    body: z.unknown().optional(),
    /** For `status`: extra response headers. */
    headers: z.record(z.string(), z.string()).optional(),
    /** For `partial_batch`: the top-level body fields the vendor never processes. */
    omit: z.array(z.string().min(1)).min(1).optional(),
    /** The caller's own label, listed back as given (e.g. what a harness does when the fault acts). */
    note: z.string().max(200).optional(),
  })
  .refine((f) => (f.nth !== undefined) !== (f.every === true), {
    message: 'give exactly one of nth or every: true',
  })
  .refine((f) => f.kind !== FaultKind.DELAY || f.delayMs !== undefined, {
    message: 'a delay fault needs delayMs',
  })
  .refine((f) => f.kind !== FaultKind.STATUS || f.status !== undefined, {
    message: 'a status fault needs status',
  })
  .refine((f) => f.kind !== FaultKind.PARTIAL_BATCH || f.omit !== undefined, {
    message: 'a partial_batch fault needs omit',
  });
export type FaultSpec = z.infer<typeof faultSpecSchema>;
/** A fault as a caller writes it: the defaults (`method`, `path`, `phase`) may be left out. */
export type FaultSpecInput = z.input<typeof faultSpecSchema>;

/** A fault as stored and listed: its spec, an id, and how many requests matched and were hit so far. */
export interface FaultRule extends FaultSpec {
  readonly id: string;
  matched: number;
  fired: number;
  /**
   * How many requests it hit had been processed by the vendor when the fault acted on them (a `delay`
   * after processing: when the hold began; a `partial_batch`: when its error replaced the answer).
   */
  processed: number;
  /** The client's port of the last request it hit (which process sent it, for a harness that kills it). */
  lastClientPort?: number;
}
