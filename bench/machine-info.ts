import { cpus, totalmem } from 'node:os';
import { sql } from 'kysely';
import type { SagaDb } from '@agent-saga/core';

/** What the figures were measured on. */
export interface MachineInfo {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly postgres: string;
  /** Settings that decide what a commit costs. */
  readonly postgresSettings: Readonly<Record<string, string>>;
  readonly redis: string;
}

const PG_SETTINGS = [
  'synchronous_commit',
  'fsync',
  'wal_sync_method',
  'commit_delay',
  'shared_buffers',
  'max_connections',
] as const;

export async function machineInfo(db: SagaDb, redis: string): Promise<MachineInfo> {
  const version = await sql<{ v: string }>`SELECT current_setting('server_version') AS v`.execute(db);
  const settings = await sql<{ name: string; setting: string; unit: string | null }>`
    SELECT name, setting, unit FROM pg_settings WHERE name = ANY(${[...PG_SETTINGS]}::text[])`.execute(db);
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres: version.rows[0]?.v ?? 'unknown',
    postgresSettings: Object.fromEntries(
      settings.rows.map((s) => [s.name, s.unit ? `${s.setting} (${s.unit})` : s.setting]),
    ),
    redis,
  };
}
