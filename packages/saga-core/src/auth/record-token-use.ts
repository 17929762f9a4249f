import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';

/**
 * Why 60 s: `tokens list` answers "is this token still in use?", a question about days, not seconds;
 * once a minute per token keeps `last used` true to the minute at no cost to the hot path.
 */
export const TOKEN_USE_RESOLUTION_S = 60;

/**
 * Records that a token was used: a compare-and-set that writes only when the stored time is older than
 * {@link TOKEN_USE_RESOLUTION_S}, so many processes touching the same token write once a minute between
 * them. Returns whether it wrote. Callers run it off the request's path (the auth hook does not await it).
 */
export async function recordTokenUse(db: SagaDb, tokenId: string): Promise<boolean> {
  const r = await db
    .updateTable('api_tokens')
    .set({ last_used_at: sql<Date>`now()` })
    .where('id', '=', tokenId)
    .where((eb) =>
      eb.or([
        eb('last_used_at', 'is', null),
        eb('last_used_at', '<', sql<Date>`now() - make_interval(secs => ${TOKEN_USE_RESOLUTION_S})`),
      ]),
    )
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}
