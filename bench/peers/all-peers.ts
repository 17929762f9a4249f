import { bullmqDrainPeer } from './bullmq-drain.js';
import { dbosPeer } from './dbos.js';
import { graphileWorkerPeer } from './graphile-worker.js';
import type { Peer, PeerContext } from './peer.js';
import { pgBossPeer } from './pg-boss.js';
import { restatePeer } from './restate.js';

/** Every peer by its BENCH_PEERS name, in the order they run (the bare BullMQ + INSERT baseline runs before them). */
export const PEERS: Readonly<Record<string, (ctx: PeerContext) => Peer>> = {
  'dbos-inprocess': (ctx) => dbosPeer(ctx, 'in-process'),
  'dbos-queue': (ctx) => dbosPeer(ctx, 'queue'),
  restate: (ctx) => restatePeer(ctx),
  'graphile-worker': (ctx) => graphileWorkerPeer(ctx, false),
  'graphile-worker-batched': (ctx) => graphileWorkerPeer(ctx, true),
  'pg-boss': (ctx) => pgBossPeer(ctx),
  'bullmq-redis-drain': (ctx) => bullmqDrainPeer(ctx, 'redis'),
  'bullmq-postgres-drain': (ctx) => bullmqDrainPeer(ctx, 'postgres'),
};

/**
 * The names BENCH_PEERS selects (`all`, `none`, or a comma-separated list of names); an unknown name throws
 * naming it. The bench calls this before it starts anything, so a typo fails at once, not after the
 * agent-saga phases.
 */
export function selectedPeerNames(spec: string): string[] {
  if (spec === 'none') return [];
  const names = spec === 'all' ? Object.keys(PEERS) : spec.split(',').map((s) => s.trim());
  const unknown = names.find((n) => !PEERS[n]);
  if (unknown !== undefined)
    throw new Error(`BENCH_PEERS: unknown peer ${unknown} (known: ${Object.keys(PEERS).join(', ')})`);
  return names;
}

/** The peers BENCH_PEERS selects (see {@link selectedPeerNames}). */
export function selectPeers(spec: string, ctx: PeerContext): Peer[] {
  return selectedPeerNames(spec).map((n) => PEERS[n]!(ctx));
}
