import { createHash } from 'node:crypto';

/**
 * The deployment's key namespace (`SAGA_KEY_NAMESPACE`): a secret-ish string mixed into every key the
 * harness derives (step, compensation, correction, pure-call keys), so two deployments sharing a vendor
 * account (staging and production, blue and green) never send the same `Idempotency-Key`, Jira label or
 * email tag for the same run id. `null` is "no namespace": today's keys, byte for byte, so the keys
 * already in the logs and at the vendors stay valid.
 *
 * The namespace is hashed in (HMAC, see `idempotency-key.ts`), never prefixed raw: the vendors see only the
 * 32 hex characters they saw before (the Jira label `saga-<key>` and the email tag keep their length and
 * alphabet), and a key does not reveal which deployment sent it.
 */
export type KeyNamespace = string | null;

/**
 * Why per process, not per run: a key is derived once, when the row that carries it is written
 * (`saga_log.idempotency_key`, the stored compensation's `key`, a correction send's `idempotency_key`), and
 * every later send, lookup, reconcile and compensation reads the stored key, never derives it again. So a
 * process whose namespace differs from the one the rows it reads were written under still acts on those
 * rows' own keys; its namespace only shapes the keys of rows it writes itself. The one re-derivation, a
 * correction re-sent after its lookup proved the first send absent, gets a new (still namespaced) key,
 * which is safe because nothing went out under the old one.
 *
 * It is installed once, by `runRole` from the parsed base config (every role starts there), rather than
 * threaded through every intake and review call: one home for the value, and no caller can forget it. A
 * second install with another value throws, so one process can never mix two namespaces. An application
 * that records intents in its own transaction (the caller-transaction intake) installs it the same way.
 */
let installed: { readonly value: KeyNamespace } | undefined;

/** Installs the process's key namespace (once; again with the same value is a no-op). */
export function installKeyNamespace(namespace: KeyNamespace): void {
  if (installed && installed.value !== namespace)
    throw new Error('SAGA_KEY_NAMESPACE is already installed with another value in this process');
  installed = { value: namespace };
}

/** The process's key namespace: `null` (today's keys) until {@link installKeyNamespace}. */
export function currentKeyNamespace(): KeyNamespace {
  return installed?.value ?? null;
}

/**
 * A short, non-reversible name of a namespace for logs and `/readyz`-free diagnostics ("none" when unset):
 * operators compare it across roles to see that every role of a deployment runs with the same value,
 * without the value itself reaching a log. First 12 hex characters of sha256 with its own prefix, so it is
 * never a prefix of a key.
 */
export function keyNamespaceFingerprint(namespace: KeyNamespace): string {
  if (namespace === null) return 'none';
  return createHash('sha256')
    .update(`agent-saga key namespace fingerprint:${namespace}`)
    .digest('hex')
    .slice(0, 12);
}
