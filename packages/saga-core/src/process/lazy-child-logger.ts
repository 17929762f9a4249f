import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

/**
 * `parent.child(bindings, options)`, made when a line is first written through it (or anything else of it
 * is read), not when it is asked for.
 *
 * Why: pino serialises a child's bindings, through the roles' redaction, when the child is made. The hot
 * paths make one per request (fastify's request logger), per attempt (the step's logger, handed to the
 * tool) and per unwound run, and most of them never write a line: the roles log at `warn`, and a call that
 * goes well writes nothing at that level. Measured in the bench (`pnpm bench --quick`, sampling heap
 * profile of the api): the made children were about a tenth of every byte the api allocated per call.
 *
 * A log method read while its level is off is a no-op that makes nothing, as pino's own methods are
 * (judged on the parent's level, unless `options.level` gives the child its own), and one whose level is
 * on makes the child when it is called; `child` of it gives a lazy grandchild; any other read (`level`,
 * `bindings()`) makes the child once and is answered by it, so the lazy child behaves as the child would,
 * level changes included (a write of `level` goes to the child).
 */
export function lazyChildLogger(parent: Logger, bindings: Bindings, options?: ChildLoggerOptions): Logger {
  let child: Logger | undefined;
  const made = (): Logger => (child ??= parent.child(bindings, options));
  /** The enabled log methods handed out before the child exists, one each (read on every request). */
  const writers = Object.create(null) as Partial<LogMethods>;
  return new Proxy(parent, {
    get(_target, prop) {
      if (!child && options?.level === undefined) {
        // Pino's own rule: a log method read while its level is off is a no-op. One whose level is on makes
        // the child when it is called, not when it is read (fastify reads them all to check the logger).
        // The log methods are the parent's levels (`levels.values`: pino's six and any custom ones).
        if (typeof prop === 'string' && Object.hasOwn(parent.levels.values, prop))
          return parent.isLevelEnabled(prop)
            ? (writers[prop] ??= (...args: unknown[]): void =>
                (made() as unknown as LogMethods)[prop]!(...args))
            : NOOP;
        // Whether a level is on is the parent's answer until the child exists (it has the parent's level).
        if (prop === 'isLevelEnabled') return levelCheckOf(parent);
      }
      // A child of the lazy child is lazy too; fastify reads `child` of every request logger (to check it).
      if (!child && prop === 'child')
        return (b: Bindings, o?: ChildLoggerOptions): Logger => lazyChildLogger(made(), b, o);
      const c = made();
      const value: unknown = Reflect.get(c, prop, c);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(c) : value;
    },
    set(_target, prop, value) {
      return Reflect.set(made(), prop, value);
    },
    has(_target, prop) {
      return Reflect.has(made(), prop);
    },
  });
}

const NOOP = (): void => {};
type LogMethods = Record<string, (...args: unknown[]) => void>;

/** `parent.isLevelEnabled`, bound once per parent (a request reads it for each line it might write). */
const levelChecks = new WeakMap<Logger, (level: string) => boolean>();
function levelCheckOf(parent: Logger): (level: string) => boolean {
  let check = levelChecks.get(parent);
  if (!check) levelChecks.set(parent, (check = (level: string) => parent.isLevelEnabled(level)));
  return check;
}
