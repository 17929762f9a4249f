import pg from 'pg';

/** Drops a peer's schema (and everything in it) on a connection of its own. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: 'agent-saga-bench' });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema.replaceAll('"', '""')}" CASCADE`);
  } finally {
    await client.end();
  }
}
