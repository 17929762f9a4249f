import type { Vendor } from '../vendors.js';

/** One request as the sandbox saw it, for tests that need calls rather than effects. */
export interface RequestLogEntry {
  readonly at: string;
  readonly vendor: Vendor;
  readonly method: string;
  readonly path: string;
  readonly idempotencyKey: string | undefined;
  /** The W3C `traceparent` header the caller sent, if any (the harness's trace of the call). */
  readonly traceparent: string | undefined;
  /** The answer's status; undefined when no answer was sent (drop, reset). */
  statusCode: number | undefined;
  /** True when the answer was replayed from an idempotency store. */
  replayed: boolean;
  /** The kind of the fault that hit the request, if any. */
  fault: string | undefined;
}

/** Why 1,000: enough for one test's calls, small enough that a long demo does not grow without bound. */
const MAX_ENTRIES = 1_000;

/** The last requests of all vendors, oldest first. */
export class RequestLog {
  readonly #entries: RequestLogEntry[] = [];

  add(entry: RequestLogEntry): void {
    this.#entries.push(entry);
    if (this.#entries.length > MAX_ENTRIES) this.#entries.shift();
  }

  list(): readonly RequestLogEntry[] {
    return this.#entries.map((e) => ({ ...e }));
  }

  clear(): void {
    this.#entries.length = 0;
  }
}
