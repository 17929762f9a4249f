import pg from 'pg';
import { pgConnectionConfig, type DbOptions } from './connect.js';

/** Pause before a lost LISTEN session is opened again. */
const RECONNECT_MS = 1_000;

export interface ChannelListener {
  /** Ends the session; no callback runs after it resolves. */
  stop(): Promise<void>;
}

export interface ListenOptions {
  readonly db: DbOptions;
  /**
   * A channel name from `channels.ts` (`outboxChannel`, `stepSettledChannel`…; quoted as an identifier), or
   * several, listened to on the one session.
   */
  readonly channel: string | readonly string[];
  /** A NOTIFY on one of the channels: its payload, and which channel it came on. */
  readonly onNotify: (payload: string | undefined, channel: string) => void;
  /** Told of a lost session or a failed reconnect (the listener keeps trying). */
  readonly onError?: (err: unknown) => void;
  /** Called after a lost session is listening again: NOTIFYs sent meanwhile were missed. */
  readonly onReconnect?: () => void;
}

/**
 * Holds one dedicated Postgres session in `LISTEN <channel>` for each channel named. A pooled connection
 * cannot listen: LISTEN belongs to a session. When the session drops it is reopened every {@link RECONNECT_MS} until it
 * succeeds; callers keep a slow poll for the gap, so a lost NOTIFY delays work and never loses it.
 * Resolves once the first LISTEN is in place.
 */
export async function listenChannel(opts: ListenOptions): Promise<ChannelListener> {
  const config = pgConnectionConfig({
    ...opts.db,
    applicationName: opts.db.applicationName ?? 'agent-saga-listen',
  });
  const channels = typeof opts.channel === 'string' ? [opts.channel] : opts.channel;
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    const c = new pg.Client(config);
    c.on('notification', (msg) => {
      if (!stopped) opts.onNotify(msg.payload, msg.channel);
    });
    c.on('error', (err) => {
      opts.onError?.(err);
      drop(c);
    });
    c.on('end', () => drop(c));
    try {
      await c.connect();
      for (const channel of channels) await c.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
    } catch (err) {
      quiet(c);
      throw err;
    }
    if (stopped) quiet(c);
    else client = c;
  }

  function quiet(c: pg.Client): void {
    c.removeAllListeners();
    c.on('error', () => {});
    c.end().catch(() => {});
  }

  function drop(dead: pg.Client): void {
    if (stopped || client !== dead) return;
    client = undefined;
    quiet(dead);
    scheduleConnect();
  }

  function scheduleConnect(): void {
    if (stopped) return;
    retry = setTimeout(() => {
      connect().then(
        () => opts.onReconnect?.(),
        (err: unknown) => {
          opts.onError?.(err);
          scheduleConnect();
        },
      );
    }, RECONNECT_MS);
  }

  // The first LISTEN is retried too (Postgres restarting while the role starts), for as long as the role
  // waits for Postgres at start (`DbOptions.startWaitMs`, from `PG_START_WAIT_MS`).
  const giveUpAt = Date.now() + (opts.db.startWaitMs ?? 0);
  for (;;) {
    try {
      await connect();
      break;
    } catch (err) {
      if (Date.now() >= giveUpAt) throw err;
      opts.onError?.(err);
      await new Promise((r) => setTimeout(r, RECONNECT_MS));
    }
  }
  return {
    async stop() {
      stopped = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      if (c) {
        c.removeAllListeners();
        c.on('error', () => {});
        await c.end().catch(() => {});
      }
    },
  };
}
