import { TokenRole } from '../auth/token-role.js';
import type { AnyTool } from '../tools/define-tool.js';

/**
 * The one home of the redaction rule: what of a step's data a reader may see.
 *
 * - `secret` argument paths (a credential, a card token): shown to nobody. Every view, event, evidence and
 *   correction shows {@link SECRET_MARK} instead, for operators too.
 * - `personal` argument paths and `personalResult` result paths (an email, a name, an address, a free text
 *   about a customer): shown to operator tokens, who correct customers; agent tokens read
 *   {@link PERSONAL_MARK}. Logs carry no argument value at all (see `args-for-log.ts`); an error a log line
 *   carries is scrubbed as for an agent.
 *
 * Where the values appear: a declared path is redacted in the step's arguments (and a retry's), its result
 * (`personalResult`), and its compensation's arguments (the compensation tool's own declarations, and the
 * forward tool's paths, which a compensation built from the forward arguments shares). Besides, the values
 * found at those paths are searched for in every text of the step's data (an error message that quotes the
 * address, a lookup's evidence, a case's evidence, a free-text reason) and replaced there too: a value
 * copied elsewhere is still the customer's.
 */

/** What a reader sees instead of a secret value. */
export const SECRET_MARK = '[REDACTED]';
/** What an agent token sees instead of a personal value. */
export const PERSONAL_MARK = '[PERSONAL]';

/**
 * Why 4: a shorter declared value ("eu", "12") is searched for only at its own path, not inside every text:
 * replacing every "12" in an error message would hide more than it protects. An email, a name, an address
 * line are longer.
 */
const MIN_SCRUBBED_LENGTH = 4;

/** Who reads: an API token's role, or a log line (which hides what an agent may not see). */
export type Viewer = TokenRole | 'log';

/** Where the tools are found by name (a `ToolRegistry`). */
export interface ToolLookup {
  get(name: string): AnyTool | undefined;
}

/** Whether `viewer` may read personal data. */
export const seesPersonal = (viewer: Viewer): boolean => viewer === TokenRole.OPERATOR;

/**
 * A copy of `value` with the value at each dotted path replaced by `mark`. A path through an array applies
 * to every element (`items.name`), or to one when the segment is its index (`items.0.name`); a missing path,
 * a null or an undefined value is left as it is. `value` itself is never changed.
 */
export function redactPaths(value: unknown, paths: readonly string[], mark: string): unknown {
  let out = value;
  for (const path of paths) out = redactAt(out, path.split('.'), mark);
  return out;
}

function redactAt(value: unknown, parts: readonly string[], mark: string): unknown {
  if (value === null || value === undefined) return value;
  const [head, ...rest] = parts;
  if (head === undefined) return mark;
  if (Array.isArray(value)) {
    if (/^\d+$/.test(head)) {
      const i = Number(head);
      if (i >= value.length) return value;
      const copy = [...(value as unknown[])];
      copy[i] = redactAt(copy[i], rest, mark);
      return copy;
    }
    return value.map((v: unknown) => redactAt(v, parts, mark));
  }
  if (typeof value !== 'object' || !Object.hasOwn(value, head)) return value;
  const obj = value as Record<string, unknown>;
  return { ...obj, [head]: redactAt(obj[head], rest, mark) };
}

/** Every string (and number) at `paths` in `value`, arrays walked as in {@link redactPaths}. */
function valuesAt(value: unknown, paths: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (v: unknown, parts: readonly string[]): void => {
    if (v === null || v === undefined) return;
    const [head, ...rest] = parts;
    if (head === undefined) {
      if (typeof v === 'string' || typeof v === 'number') found.push(String(v));
      else if (typeof v === 'object') for (const x of Object.values(v)) walk(x, []);
      return;
    }
    if (Array.isArray(v)) {
      if (/^\d+$/.test(head)) walk(v[Number(head)], rest);
      else for (const x of v) walk(x, parts);
      return;
    }
    if (typeof v === 'object' && Object.hasOwn(v, head)) walk((v as Record<string, unknown>)[head], rest);
  };
  for (const p of paths) walk(value, p.split('.'));
  return found;
}

/** A copy of `value` in which every string has each `[text, mark]` replaced; object keys are kept. */
function scrub(value: unknown, texts: readonly (readonly [string, string])[]): unknown {
  if (texts.length === 0) return value;
  if (typeof value === 'string') {
    let s = value;
    for (const [text, mark] of texts) if (s.includes(text)) s = s.split(text).join(mark);
    return s;
  }
  if (Array.isArray(value)) return value.map((v: unknown) => scrub(v, texts));
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrub(v, texts);
    return out;
  }
  return value;
}

/** How one step's data is redacted for one viewer; each method returns a copy. */
export interface StepRedaction {
  /** The step's arguments, or a retry's arguments of the same tool. */
  args(args: unknown): unknown;
  /** The step's result. */
  result(result: unknown): unknown;
  /** The stored compensation `{ tool, args }` (or null). */
  compensation(compensation: unknown): unknown;
  /** Anything else that may quote the step's values: an error, an event's detail, a case's evidence. */
  text(value: unknown): unknown;
}

/**
 * The redaction of a step of `step.tool` for `viewer`. A tool this process does not know has no
 * declarations: its data is shown as stored.
 */
export function stepRedaction(
  tools: ToolLookup,
  step: { readonly tool: string; readonly args: unknown; readonly result?: unknown },
  viewer: Viewer,
): StepRedaction {
  const tool = tools.get(step.tool);
  const personal = seesPersonal(viewer) ? [] : (tool?.personal ?? []);
  const personalResult = seesPersonal(viewer) ? [] : (tool?.personalResult ?? []);
  const secret = tool?.secret ?? [];
  const texts = scrubList([
    ...valuesAt(step.args, secret).map((v) => [v, SECRET_MARK] as const),
    ...valuesAt(step.args, personal).map((v) => [v, PERSONAL_MARK] as const),
    ...valuesAt(step.result, personalResult).map((v) => [v, PERSONAL_MARK] as const),
  ]);
  const argsOf = (t: AnyTool | undefined, args: unknown): unknown => {
    const own = redactPaths(args, t?.secret ?? [], SECRET_MARK);
    return seesPersonal(viewer) ? own : redactPaths(own, t?.personal ?? [], PERSONAL_MARK);
  };
  const forwardArgs = (args: unknown): unknown =>
    redactPaths(redactPaths(args, secret, SECRET_MARK), personal, PERSONAL_MARK);
  return {
    args: (args) => scrub(forwardArgs(args), texts),
    result: (result) => scrub(redactPaths(result, personalResult, PERSONAL_MARK), texts),
    compensation: (c) => {
      if (c === null || typeof c !== 'object' || !('args' in c)) return scrub(c, texts);
      const cmd = c as { readonly tool?: unknown; readonly args: unknown };
      const own = typeof cmd.tool === 'string' ? tools.get(cmd.tool) : undefined;
      return scrub({ ...cmd, args: forwardArgs(argsOf(own, cmd.args)) }, texts);
    },
    text: (value) => scrub(value, texts),
  };
}

/** Secret first (a value declared both ways stays a secret), longest first (no partial replacement). */
function scrubList(pairs: readonly (readonly [string, string])[]): (readonly [string, string])[] {
  const byText = new Map<string, string>();
  for (const [text, mark] of pairs)
    if (text.length >= MIN_SCRUBBED_LENGTH && byText.get(text) !== SECRET_MARK) byText.set(text, mark);
  return [...byText].sort((a, b) => b[0].length - a[0].length);
}

/** The fields of a saga-log row that carry the step's data. */
export interface StepData {
  readonly tool: string;
  readonly args: unknown;
  readonly result: unknown;
  readonly error: unknown;
  readonly compensation: unknown;
}

/** A copy of `step` with its arguments, result, error and compensation redacted for `viewer`. */
export function redactStep<S extends StepData>(step: S, tools: ToolLookup, viewer: Viewer): S {
  const r = stepRedaction(tools, step, viewer);
  return {
    ...step,
    args: r.args(step.args),
    result: r.result(step.result),
    error: r.text(step.error),
    compensation: r.compensation(step.compensation),
  };
}

/**
 * A correction command (`{ template, to, vars }`) for `viewer`: a message to a person, so its recipient and
 * its variables are personal by definition, whatever the tool declares; the template name is not.
 */
export function redactCorrectionCommand<C>(command: C, viewer: Viewer): C {
  if (seesPersonal(viewer) || command === null || typeof command !== 'object') return command;
  const c = command as Record<string, unknown>;
  const vars = c.vars;
  return {
    ...c,
    ...('to' in c ? { to: PERSONAL_MARK } : {}),
    ...(vars !== null && typeof vars === 'object'
      ? { vars: Object.fromEntries(Object.keys(vars).map((k) => [k, PERSONAL_MARK])) }
      : {}),
  } as C;
}
