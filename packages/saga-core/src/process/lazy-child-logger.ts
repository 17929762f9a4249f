import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

/** The log methods a lazy child answers without being made, while their level is off. */
const LOG_METHODS: ReadonlySet<PropertyKey> = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace']);

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
 * A log method whose level is off is a no-op that makes nothing (judged on the parent's level, unless
 * `options.level` gives the child its own); any other read (`level`, `bindings()`, `child`, a method
 * whose level is on) makes the child once (`child` of it gives a lazy grandchild) and is answered by it, so the lazy child behaves as the child
 * would, level changes included (a write of `level` goes to the child).
 */
export function lazyChildLogger(parent: Logger, bindings: Bindings, options?: ChildLoggerOptions): Logger {
  let child: Logger | undefined;
  const made = (): Logger => (child ??= parent.child(bindings, options));
  const quietMethod =
    (level: string) =>
    (...args: unknown[]): void => {
      if (!parent.isLevelEnabled(level)) return;
      (made() as unknown as Record<string, (...a: unknown[]) => void>)[level]!(...args);
    };
  const grandchild = (b: Bindings, o?: ChildLoggerOptions): Logger => lazyChildLogger(made(), b, o);
  return new Proxy(parent, {
    get(_target, prop) {
      if (!child && options?.level === undefined && typeof prop === 'string' && LOG_METHODS.has(prop))
        return quietMethod(prop);
      // Whether a level is on is the parent's answer until the child exists (it has the parent's level).
      if (!child && options?.level === undefined && prop === 'isLevelEnabled')
        return (level: string): boolean => parent.isLevelEnabled(level);
      // A child of the lazy child is lazy too; fastify reads `child` of every request logger (to check it).
      if (!child && prop === 'child') return grandchild;
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
