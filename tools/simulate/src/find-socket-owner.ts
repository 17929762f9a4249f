/**
 * Which of the harness's processes holds one TCP connection to the sandbox, found from the kernel's own
 * tables (Linux `/proc`): the connection's inode in `/proc/net/tcp{,6}` by its two ports, then the process
 * whose file descriptors include that socket. The sandbox knows only the client's port of a request it
 * holds; this names the process to SIGKILL, so an `executor_killed` fault kills the executor that sent the
 * request and no other.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The inode of the connection from local port `clientPort` to `serverPort`, if the kernel lists it. */
export function socketInode(clientPort: number, serverPort: number): string | undefined {
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
      const cols = line.trim().split(/\s+/);
      const local = cols[1]?.split(':').pop();
      const remote = cols[2]?.split(':').pop();
      if (local === undefined || remote === undefined || cols[9] === undefined) continue;
      if (parseInt(local, 16) === clientPort && parseInt(remote, 16) === serverPort) return cols[9];
    }
  }
  return undefined;
}

/** The name among `processes` (name → pid) whose open files include socket `inode`. */
export function ownerOfSocket<N extends string>(
  inode: string,
  processes: ReadonlyMap<N, number>,
): N | undefined {
  const link = `socket:[${inode}]`;
  for (const [name, pid] of processes) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // exited meanwhile
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === link) return name;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}
