/** An answer as saved under an idempotency key, replayed byte for byte. */
export interface SavedResponse {
  readonly statusCode: number;
  readonly body: string;
  readonly contentType: string;
}

/** What a request carrying an idempotency key meets. */
export type IdempotencyClaim =
  /** The key is new: this request runs, and must `save` or `release` it. */
  | { readonly kind: 'claimed' }
  /** The key was used with the same parameters and answered: replay the saved answer. */
  | { readonly kind: 'replay'; readonly response: SavedResponse }
  /** The key was used with other parameters (or another endpoint). */
  | { readonly kind: 'mismatch' }
  /** The key is held by a request still being processed. */
  | { readonly kind: 'in_flight' };

type Entry =
  | { readonly state: 'in_flight'; readonly fingerprint: string }
  | { readonly state: 'done'; readonly fingerprint: string; readonly response: SavedResponse };

/**
 * The idempotency keys of one vendor, scoped (Stripe scopes them per API key). A key moves from absent to
 * `in_flight` when a request claims it, then to `done` when its answer is saved, or back to absent when the
 * request ends without saving (a validation error: "results are only saved if an API endpoint started
 * executing"). A `done` key never changes again (real vendors prune after 24 hours; a sandbox run is
 * shorter, so keys are kept until `/__admin/reset`). A mismatch is reported before "in flight": a different
 * request under a used key is wrong whatever the first one's progress.
 */
export class IdempotencyStore {
  readonly #entries = new Map<string, Entry>();

  claim(scope: string, key: string, fingerprint: string): IdempotencyClaim {
    const id = storeKey(scope, key);
    const entry = this.#entries.get(id);
    if (entry === undefined) {
      this.#entries.set(id, { state: 'in_flight', fingerprint });
      return { kind: 'claimed' };
    }
    if (entry.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (entry.state === 'in_flight') return { kind: 'in_flight' };
    return { kind: 'replay', response: entry.response };
  }

  save(scope: string, key: string, response: SavedResponse): void {
    const id = storeKey(scope, key);
    const entry = this.#entries.get(id);
    if (entry?.state !== 'in_flight') return;
    this.#entries.set(id, { state: 'done', fingerprint: entry.fingerprint, response });
  }

  release(scope: string, key: string): void {
    const id = storeKey(scope, key);
    if (this.#entries.get(id)?.state === 'in_flight') this.#entries.delete(id);
  }

  clear(): void {
    this.#entries.clear();
  }
}

function storeKey(scope: string, key: string): string {
  return JSON.stringify([scope, key]);
}
