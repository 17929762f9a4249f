import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * The id a process's workers go by: an executor's, the API's inline executor's, a compensator's and a
 * reconciler's lease owner (`lease_owner`, `reconcile_lease_owner`, a compensation's), and the `worker` of
 * the ATTEMPT events they write. `<host>:<pid>:<6 hex>`: the host and pid say where to look in the logs,
 * the random part makes each start of a process a new owner (a restarted process with the same pid does
 * not inherit the leases of the one that died, which expire into the reconciler's lookup by key).
 */
export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}
