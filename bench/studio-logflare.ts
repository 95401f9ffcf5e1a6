import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { SUPABASE_SOURCES } from '../src/sources/supabase/supabase-sources';
import { LOG_TABLES, type LogTable } from '../test/support/supabase/vector-sources';
import { startLocalPostgres } from './postgres';
import type { StudioData } from './studio-data';

/**
 * Self-hosted Logflare on Postgres (its default backend), for the Studio cases: its layout and
 * what its translator makes of Studio's SQL.
 *
 * Layout (lib/logflare/backends/adaptor/postgres_adaptor/repo/migrations.ex, pg_repo.ex): one table
 * `log_events_<source token>` per source, `id TEXT PRIMARY KEY, body JSONB, event_message TEXT,
 * timestamp TIMESTAMP` and a BRIN index on `timestamp`; `body` is the whole event, its `timestamp`
 * an integer of unix microseconds.
 *
 * Queries: Logflare runs Studio's SQL as the final SELECT of its `logs.all` endpoint
 * (priv/supabase/endpoints/logs.all.sql: one CTE per source) and translates the whole to Postgres
 * with `translate_bq_to_pg` (lib/logflare/sql/dialect_translation.ex). Its rules, as its tests
 * (test/logflare/sql_test.exs) state them, and what they make of logs.all's CTE:
 * - a table's name in backticks becomes the source's `log_events_<token>` table;
 * - every field of a source table is read from `body`: `t.id` -> `(t.body -> 'id')`
 *   ("CTE aliases are not converted to json query"), in a comparison `->>`;
 * - `t.timestamp` outside the projection is `to_timestamp((t.body ->> 'timestamp')::bigint / 1000000.0)
 *   AT TIME ZONE 'UTC'` ("unix microsecond timestamp handling"): never the `timestamp` column, so
 *   the BRIN index is never used and every row's body is read;
 * - `cross join unnest(...)` is dropped and a field of an unnest alias becomes a JSON path:
 *   `m.project` -> `(body #>> '{metadata,project}')` ("CTE cross join UNNESTs with filter reference");
 * - `@param` becomes `$n::text` in the order of appearance ("parameters are translated").
 * CTEs the final SELECT does not read are left out here: Postgres does not evaluate them either.
 */

/** Logflare's table of a feed: `log_events_` and the source's token with `_` for `-`. */
export function logflareTable(table: LogTable): string {
  const source = SUPABASE_SOURCES.find((s) => s.relation === table);
  if (!source) throw new Error(`no Supabase source reads ${table}`);
  return `log_events_${source.logflare.id.replaceAll('-', '_')}`;
}

/** Where logs.all.sql filters on the project: the top-level field, or the one under metadata. */
const PROJECT_FIELD: Record<LogTable, string> = {
  edge_logs: "(t.body ->> 'project')",
  postgres_logs: "(t.body ->> 'project')",
  auth_logs: "(t.body ->> 'project')",
  postgrest_logs: "(t.body ->> 'project')",
  pgbouncer_logs: "(t.body ->> 'project')",
  realtime_logs: "(body #>> '{metadata,project}')",
  storage_logs: "(body #>> '{metadata,project}')",
  function_edge_logs: "(body #>> '{metadata,project_ref}')",
  function_logs: "(body #>> '{metadata,project_ref}')",
};

/** `t.timestamp` of a source table in a CTE's WHERE or ORDER BY. */
const BODY_TIME = "(to_timestamp((t.body ->> 'timestamp')::bigint / 1000000.0) AT TIME ZONE 'UTC')";

/** logs.all's CTE of a table, translated: `$1` the project, `$2`..`$5` the two bounds, each twice. */
export function logflareCte(table: LogTable): string {
  return `${table} AS (
  SELECT (t.body -> 'timestamp') AS timestamp, (t.body -> 'id') AS id, (t.body -> 'event_message') AS event_message, (t.body -> 'metadata') AS metadata
  FROM "${logflareTable(table)}" AS t
  WHERE ${PROJECT_FIELD[table]} = $1::text
    AND CASE WHEN COALESCE($2::text, '') = '' THEN true ELSE CAST(${BODY_TIME} AS timestamp) > CAST($3::text AS timestamp) END
    AND CASE WHEN COALESCE($4::text, '') = '' THEN true ELSE CAST(${BODY_TIME} AS timestamp) <= CAST($5::text AS timestamp) END
  ORDER BY CAST(${BODY_TIME} AS timestamp) DESC
)`;
}

/** Microseconds since the epoch of an ISO `timestamp` of Vector (digits past microseconds cut, as ours). */
const ISO_TO_UTC = (s: string) => `(regexp_replace(${s}, '(\\.[0-9]{6})[0-9]+', '\\1')::timestamptz AT TIME ZONE 'UTC')`;

async function loaded(client: pg.Client, data: StudioData): Promise<boolean> {
  try {
    for (const table of LOG_TABLES) {
      const { rows } = await client.query(`SELECT count(*) AS n FROM "${logflareTable(table)}"`);
      if (Number(rows[0].n) !== data.counts[table]) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** Loads the week into Logflare's layout (once: kept in the cluster's directory), with psql's \copy. */
async function load(url: string, data: StudioData, log: (line: string) => void): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    if (await loaded(client, data)) return log('postgres: reusing the loaded Logflare tables');
    await client.query("SET TimeZone = 'UTC'");
    for (const table of LOG_TABLES) {
      const name = logflareTable(table);
      const started = Date.now();
      await client.query(`DROP TABLE IF EXISTS "${name}"; DROP TABLE IF EXISTS raw_lines;
        CREATE UNLOGGED TABLE raw_lines (line text);
        CREATE TABLE "${name}" (id TEXT PRIMARY KEY, body JSONB, event_message TEXT, timestamp TIMESTAMP)`);
      // CSV with control characters as quote and delimiter: every NDJSON line arrives as it is.
      const copy = spawnSync(
        'psql',
        [url, '-v', 'ON_ERROR_STOP=1', '-c', `\\copy raw_lines(line) FROM '${data.files[table].replaceAll("'", "''")}' WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')`],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );
      if (copy.status !== 0) throw new Error(`psql \\copy of ${table} failed`);
      // Logflare's body: the event with its id and its timestamp in unix microseconds (pg_repo.ex).
      await client.query(`
        INSERT INTO "${name}" (id, body, event_message, timestamp)
        SELECT j ->> 'id', j || jsonb_build_object('timestamp', (extract(epoch FROM ts) * 1000000)::bigint), j ->> 'event_message', ts
        FROM (SELECT j, ${ISO_TO_UTC("(j ->> 'timestamp')")} AS ts FROM (SELECT line::jsonb AS j FROM raw_lines WHERE line <> '') r) s;
        DROP TABLE raw_lines;
        CREATE INDEX ON "${name}" USING brin (timestamp)`);
      await client.query(`VACUUM ANALYZE "${name}"`);
      log(`postgres: ${table} -> ${name}, ${data.counts[table].toLocaleString('en')} rows in ${Math.round((Date.now() - started) / 1000)} s`);
    }
  } finally {
    await client.end();
  }
}

export interface LogflarePostgres {
  run(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>>;
  explain(sql: string, params: unknown[]): Promise<string>;
  close(): Promise<void>;
}

/** A local Postgres (`<data>/postgres`) holding the week in Logflare's layout, one connection. */
export async function openLogflarePostgres(data: StudioData, log: (line: string) => void): Promise<LogflarePostgres> {
  const server = await startLocalPostgres(join(data.dir, 'postgres'), log);
  try {
    await load(server.url, data, log);
  } catch (error) {
    await server.stop();
    throw error;
  }
  // A `timestamp` (a chart's bucket) as unix microseconds, as logs.all answers it; pg would make a local Date.
  const micros = (text: string) => Date.parse(`${text.replace(' ', 'T')}Z`) * 1000;
  const types = { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === 1114 ? micros : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser };
  const client = new pg.Client({ connectionString: server.url, types });
  await client.connect();
  await client.query("SET TimeZone = 'UTC'");
  return {
    async run(sql, params) {
      return (await client.query(sql, params)).rows as Array<Record<string, unknown>>;
    },
    async explain(sql, params) {
      const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
      return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    },
    async close() {
      await client.end();
      await server.stop();
    },
  };
}
