import pg from 'pg';

/** Pause before a lost dedicated session is opened again. */
const RECONNECT_MS = 1_000;

/** Server-side TCP keep-alive of a session (idle 10 s, then 3 probes 5 s apart). */
const SERVER_KEEPALIVE = '-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3';

/**
 * `config` with the server probing the session's peer: a host that froze or vanished without closing the
 * session loses it within about 25 s (the OS default would be two hours). For a session whose end others
 * act on: what it holds (an advisory lock) is released then.
 */
export function withServerKeepAlive(config: pg.ClientConfig): pg.ClientConfig {
  return { ...config, options: `${config.options ?? ''} ${SERVER_KEEPALIVE}` };
}

export interface DedicatedSession {
  /** The open session, or undefined while it is being reopened (or after `stop`). */
  readonly client: pg.Client | undefined;
  /** Which session this is: one more each time a session is opened (a lost one's state died with it). */
  readonly generation: number;
  /** Ends the session; no callback runs after it resolves. */
  stop(): Promise<void>;
}

export interface DedicatedSessionOptions {
  /** Connection settings (`pgConnectionConfig`, with the session's own application name). */
  readonly config: pg.ClientConfig;
  /** Run on each new session before it is handed out (a LISTEN); a failure counts as a failed connect. */
  readonly setUp?: (client: pg.Client) => Promise<void>;
  /** A NOTIFY delivered to the session. */
  readonly onNotification?: (msg: pg.Notification) => void;
  /** Told of a lost session or a failed reconnect (the session keeps being reopened). */
  readonly onError?: (err: unknown) => void;
  /** Called after a lost session is open again: whatever lived in the old one (a LISTEN, a lock) is gone. */
  readonly onReconnect?: () => void;
  /** How long the first connect is retried (the role's PG_START_WAIT_MS), in ms; 0: once. */
  readonly startWaitMs?: number;
}

/**
 * One Postgres session of its own, outside every pool, for what belongs to a session and not to a
 * statement: a LISTEN (`listenChannel`), a session-level advisory lock (the compensator's run locks).
 * When the session drops it is reopened every {@link RECONNECT_MS} until it succeeds, as a new
 * `generation`; callers keep their own fallback for the gap (a sweep), so a lost session delays work and
 * never loses it. Resolves once the first session is open and set up.
 */
export async function openDedicatedSession(o: DedicatedSessionOptions): Promise<DedicatedSession> {
  let client: pg.Client | undefined;
  let generation = 0;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    const c = new pg.Client(o.config);
    c.on('notification', (msg) => {
      if (!stopped) o.onNotification?.(msg);
    });
    c.on('error', (err) => {
      o.onError?.(err);
      drop(c);
    });
    c.on('end', () => drop(c));
    try {
      await c.connect();
      await o.setUp?.(c);
    } catch (err) {
      void quiet(c);
      throw err;
    }
    if (stopped) void quiet(c);
    else {
      generation += 1;
      client = c;
    }
  }

  /** Ends `c` with no callback left on it; the promise settles when it has ended (never rejects). */
  function quiet(c: pg.Client): Promise<void> {
    c.removeAllListeners();
    c.on('error', () => {});
    return c.end().catch(() => {});
  }

  function drop(dead: pg.Client): void {
    if (stopped || client !== dead) return;
    client = undefined;
    void quiet(dead);
    scheduleConnect();
  }

  function scheduleConnect(): void {
    if (stopped) return;
    retry = setTimeout(() => {
      connect().then(
        () => o.onReconnect?.(),
        (err: unknown) => {
          o.onError?.(err);
          scheduleConnect();
        },
      );
    }, RECONNECT_MS);
  }

  // The first session is retried too (Postgres restarting while the role starts), for as long as the role
  // waits for Postgres at start.
  const giveUpAt = Date.now() + (o.startWaitMs ?? 0);
  for (;;) {
    try {
      await connect();
      break;
    } catch (err) {
      if (Date.now() >= giveUpAt) throw err;
      o.onError?.(err);
      await new Promise((r) => setTimeout(r, RECONNECT_MS));
    }
  }
  return {
    get client() {
      return client;
    },
    get generation() {
      return generation;
    },
    async stop() {
      stopped = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      if (c) await quiet(c);
    },
  };
}
