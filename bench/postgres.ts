import { spawnSync } from 'node:child_process';
import pg from 'pg';
import type { BenchCase } from './cases';
import { REFERENCE, SCALES, type Dataset } from './dataset';
import type { Samples } from './library';
import { findDefinition } from '../src/definitions/registry';
import { normalizeParams } from '../src/definitions/params';
import { planQuery } from '../src/definitions/plan-query';
import type { EngineParam } from '../src/engine/engine';
import { formatIsoMicros } from '../src/time/iso';
import { timeMs } from './stats';

/**
 * Logflare's Postgres storage: one table per source, the whole event in a JSONB `body`, a BRIN
 * index on `timestamp`. Each saved query is the same computation written over `body`.
 */
const TABLES = { edgeLogs: 'log_events_edge', functionEdgeLogs: 'log_events_fn' } as const;

const SQL: Record<BenchCase['endpoint'], string> = {
  'functions.invocation-stats': `
    SELECT date_trunc($unit, timestamp) AS timestamp,
           min(x) AS min_execution_time, max(x) AS max_execution_time, avg(x) AS avg_execution_time,
           percentile_disc(0.95) WITHIN GROUP (ORDER BY x) AS p95_execution_time,
           percentile_disc(0.99) WITHIN GROUP (ORDER BY x) AS p99_execution_time,
           count(*) AS count, count(*) FILTER (WHERE status >= 400) AS error_count
    FROM (SELECT timestamp, (body #>> '{metadata,execution_time_ms}')::float8 AS x,
                 (body #>> '{metadata,response,status_code}')::int AS status
          FROM log_events_fn
          WHERE body #>> '{metadata,project_ref}' = $project
            AND ($function_id::text IS NULL OR body #>> '{metadata,function_id}' = $function_id)
            AND timestamp >= $first AND timestamp < $end) t
    GROUP BY 1 ORDER BY 1 LIMIT 1000`,
  'logs.all': `
    SELECT id, timestamp, event_message, body -> 'metadata' AS metadata
    FROM log_events_edge
    WHERE body ->> 'project' = $project AND timestamp > $after AND ($until::timestamp IS NULL OR timestamp <= $until)
    ORDER BY timestamp DESC, id LIMIT $limit`,
  'usage.api-counts': `
    SELECT date_trunc($unit, timestamp) AS timestamp,
           count(*) FILTER (WHERE path ~ '/rest') AS total_rest_requests,
           count(*) FILTER (WHERE path ~ '/storage') AS total_storage_requests,
           count(*) FILTER (WHERE path ~ '/auth') AS total_auth_requests,
           count(*) FILTER (WHERE path ~ '/realtime') AS total_realtime_requests
    FROM (SELECT timestamp, body #>> '{metadata,request,path}' AS path
          FROM log_events_edge
          WHERE timestamp >= $start AND (body #>> '{metadata,request,url}') ~ $project) t
    GROUP BY 1 ORDER BY 1 LIMIT 1000`,
};

/** Named $params -> positional, with values from the library's own plan of the call. */
function positional(sql: string, params: Readonly<Record<string, EngineParam>>): { text: string; values: unknown[] } {
  const names: string[] = [];
  const text = sql.replace(/\$([a-z_]+)/g, (_, name: string) => {
    if (!names.includes(name)) names.push(name);
    return `$${names.indexOf(name) + 1}`;
  });
  const values = names.map((n) => {
    const v = params[n];
    if (v !== null && typeof v === 'object') return formatIsoMicros(v.timestamp).replace('Z', '');
    return v ?? null;
  });
  return { text, values };
}

let loaded = false;

/** Loads the NDJSON of the dataset into the Logflare layout (once per run), with psql's \copy. */
async function load(url: string, dataset: Dataset, log: (line: string) => void): Promise<void> {
  if (loaded) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    if (await holdsDataset(client, dataset)) {
      log('postgres: reusing the loaded tables');
      loaded = true;
      return;
    }
    log('postgres: loading the Logflare layout (log_events_*: id, body jsonb, event_message, timestamp + BRIN)');
    for (const [source, table] of Object.entries(TABLES) as Array<[keyof typeof TABLES, string]>) {
      await client.query(`DROP TABLE IF EXISTS ${table}; DROP TABLE IF EXISTS ${table}_raw;
        CREATE UNLOGGED TABLE ${table}_raw (line text);
        CREATE TABLE ${table} (id text, body jsonb, event_message text, timestamp timestamp)`);
      const file = dataset.ndjson[source];
      // CSV with control characters as quote and delimiter: every NDJSON line arrives as it is.
      const copy = spawnSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-c',
        `\\copy ${table}_raw(line) FROM '${file.replaceAll("'", "''")}' WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')`], { stdio: 'inherit' });
      if (copy.status !== 0) throw new Error(`psql \\copy into ${table}_raw failed`);
      await client.query(`
        INSERT INTO ${table} (id, body, event_message, timestamp)
        SELECT j ->> 'id', j, j ->> 'event_message',
               CASE WHEN jsonb_typeof(j -> 'timestamp') = 'number'
                    THEN to_timestamp((j ->> 'timestamp')::numeric / 1000000) AT TIME ZONE 'UTC'
                    ELSE (j ->> 'timestamp')::timestamptz AT TIME ZONE 'UTC' END
        FROM (SELECT line::jsonb AS j FROM ${table}_raw WHERE line <> '') r;
        DROP TABLE ${table}_raw;
        CREATE INDEX ON ${table} USING brin (timestamp)`);
      await client.query(`VACUUM ANALYZE ${table}`);
    }
    loaded = true;
  } finally {
    await client.end();
  }
}

/** Whether an earlier run already loaded this dataset (same row counts in both tables). */
async function holdsDataset(client: pg.Client, dataset: Dataset): Promise<boolean> {
  const { functionEvents, edgeEvents } = SCALES[dataset.scale];
  try {
    const { rows } = await client.query('SELECT (SELECT count(*) FROM log_events_fn) AS fn, (SELECT count(*) FROM log_events_edge) AS edge');
    // The generator adds a few events after `now`, so counts are compared loosely to the scale.
    return Math.abs(Number(rows[0].fn) - functionEvents) < functionEvents * 0.01 && Math.abs(Number(rows[0].edge) - edgeEvents) < edgeEvents * 0.01;
  } catch {
    return false;
  }
}

/** The same computation in Postgres over JSONB; warm = one connection, cold = a new connection per query. */
export async function measurePostgres(url: string, dataset: Dataset, c: BenchCase, runs: number, log: (line: string) => void): Promise<Samples> {
  await load(url, dataset, log);
  const definition = findDefinition(c.endpoint);
  const plan = planQuery(definition, normalizeParams(definition, c.params), REFERENCE);
  const query = positional(SQL[c.endpoint], plan.params);
  const cold: number[] = [];
  for (let i = 0; i < runs; i++) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query("SET TimeZone = 'UTC'");
    cold.push(await timeMs(() => client.query(query.text, query.values)));
    await client.end();
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("SET TimeZone = 'UTC'");
  const warm: number[] = [];
  try {
    await client.query(query.text, query.values);
    for (let i = 0; i < runs; i++) warm.push(await timeMs(() => client.query(query.text, query.values)));
  } finally {
    await client.end();
  }
  return { warm, cold };
}
