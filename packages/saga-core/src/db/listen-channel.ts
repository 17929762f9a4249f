import { pgConnectionConfig, type DbOptions } from './connect.js';
import { openDedicatedSession } from './dedicated-session.js';

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
 * Holds one dedicated Postgres session (`openDedicatedSession`) in `LISTEN <channel>` for each channel
 * named. A pooled connection cannot listen: LISTEN belongs to a session. A lost session is reopened and
 * listens again; callers keep a slow poll for the gap, so a lost NOTIFY delays work and never loses it.
 * Resolves once the first LISTEN is in place (retried for as long as the role waits for Postgres at start,
 * `DbOptions.startWaitMs`).
 */
export async function listenChannel(opts: ListenOptions): Promise<ChannelListener> {
  const channels = typeof opts.channel === 'string' ? [opts.channel] : opts.channel;
  const session = await openDedicatedSession({
    config: pgConnectionConfig({
      ...opts.db,
      applicationName: opts.db.applicationName ?? 'agent-saga-listen',
    }),
    async setUp(c) {
      for (const channel of channels) await c.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
    },
    onNotification: (msg) => opts.onNotify(msg.payload, msg.channel),
    ...(opts.onError ? { onError: opts.onError } : {}),
    ...(opts.onReconnect ? { onReconnect: opts.onReconnect } : {}),
    startWaitMs: opts.db.startWaitMs ?? 0,
  });
  return { stop: () => session.stop() };
}
