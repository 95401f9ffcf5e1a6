import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import type { BenchCase } from './cases';
import { SCALES, type Dataset } from './dataset';
import type { EngineParam } from '../src/engine/engine';
import { formatIsoMicros } from '../src/time/iso';
import { freePort } from './free-port';
import { planOf } from './peers/clickhouse-expert';
import type { AnswerRow, Peer } from './peers/peer';

/**
 * Logflare's Postgres storage: one table per source, the whole event in a JSONB `body`, a BRIN
 * index on `timestamp`. Each saved query is the same computation written over `body`.
 */
const TABLES = { edgeLogs: 'log_events_edge', functionEdgeLogs: 'log_events_fn' } as const;

/** Microseconds since the epoch of a `timestamp`, as text (pg's Date would drop the microseconds). */
const MICROS = (t: string) => `(extract(epoch FROM ${t}) * 1000000)::bigint`;

const SQL: Record<BenchCase['endpoint'], string> = {
  'functions.invocation-stats': `
    SELECT ${MICROS('date_trunc($unit, timestamp)')} AS micros,
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
    SELECT id, ${MICROS('timestamp')} AS micros, event_message, body -> 'metadata' AS metadata
    FROM log_events_edge
    WHERE body ->> 'project' = $project AND timestamp > $after AND ($until::timestamp IS NULL OR timestamp <= $until)
    ORDER BY timestamp DESC, id COLLATE "C" LIMIT $limit`,
  'usage.api-counts': `
    SELECT ${MICROS('date_trunc($unit, timestamp)')} AS micros,
           count(*) FILTER (WHERE path ~ '/rest') AS total_rest_requests,
           count(*) FILTER (WHERE path ~ '/storage') AS total_storage_requests,
           count(*) FILTER (WHERE path ~ '/auth') AS total_auth_requests,
           count(*) FILTER (WHERE path ~ '/realtime') AS total_realtime_requests
    FROM (SELECT timestamp, body #>> '{metadata,request,path}' AS path
          FROM log_events_edge
          WHERE timestamp >= $start AND (body #>> '{metadata,request,url}') ~ $project) t
    GROUP BY 1 ORDER BY 1 LIMIT 1000`,
};

/**
 * The event's `timestamp` (text of the JSON value) as a UTC `timestamp`, by the library's rule
 * (docs/semantics.md): a number, or numeric text, since the epoch in the unit its magnitude says
 * (seconds below 1e11, milliseconds below 1e14, microseconds below 1e17, else nanoseconds), floored
 * to microseconds; else ISO 8601 (UTC without an offset), digits past microseconds cut, not rounded.
 * The first rounds read every number as microseconds and cast numeric text as ISO, which failed
 * on the generator's `"1794663128169"` (milliseconds as a JSON string).
 */
const EVENT_TIMESTAMP = (s: string) => `
  CASE WHEN ${s} ~ '^-?[0-9]+(\\.[0-9]+)?$'
    THEN timestamp '1970-01-01' + floor(${s}::numeric * CASE
      WHEN abs(${s}::numeric) < 1e11 THEN 1000000 WHEN abs(${s}::numeric) < 1e14 THEN 1000
      WHEN abs(${s}::numeric) < 1e17 THEN 1 ELSE 0.001 END)::bigint * interval '1 microsecond'
    ELSE regexp_replace(${s}, '(\\.[0-9]{6})[0-9]+', '\\1')::timestamptz AT TIME ZONE 'UTC' END`;

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

/** Loads the NDJSON of the dataset into the Logflare layout (once per dataset), with psql's \copy. */
async function load(url: string, dataset: Dataset, log: (line: string) => void): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    if (await holdsDataset(client, dataset)) {
      log('postgres: reusing the loaded tables');
      return;
    }
    log('postgres: loading the Logflare layout (log_events_*: id, body jsonb, event_message, timestamp + BRIN)');
    await client.query("SET TimeZone = 'UTC'");
    for (const [source, table] of Object.entries(TABLES) as Array<[keyof typeof TABLES, string]>) {
      await client.query(`DROP TABLE IF EXISTS ${table}; DROP TABLE IF EXISTS ${table}_raw;
        CREATE UNLOGGED TABLE ${table}_raw (line text);
        CREATE TABLE ${table} (id text, body jsonb, event_message text, timestamp timestamp)`);
      const file = dataset.ndjson[source];
      // CSV with control characters as quote and delimiter: every NDJSON line arrives as it is.
      const copy = spawnSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-c', `\\copy ${table}_raw(line) FROM '${file.replaceAll("'", "''")}' WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')`], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      if (copy.status !== 0) throw new Error(`psql \\copy into ${table}_raw failed`);
      await client.query(`
        INSERT INTO ${table} (id, body, event_message, timestamp)
        SELECT j ->> 'id', j, j ->> 'event_message', ${EVENT_TIMESTAMP("(j ->> 'timestamp')")}
        FROM (SELECT line::jsonb AS j FROM ${table}_raw WHERE line <> '') r;
        DROP TABLE ${table}_raw;
        CREATE INDEX ON ${table} USING brin (timestamp)`);
      await client.query(`VACUUM ANALYZE ${table}`);
    }
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

/**
 * A Postgres program of this machine: on PATH, else in Debian's versioned folder
 * (`/usr/lib/postgresql/<version>/bin`, where the `postgresql` package puts initdb), newest first.
 */
function postgresBinary(name: string): string | null {
  const onPath = spawnSync('which', [name], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  return versions.map((v) => join(root, v, 'bin', name)).find((path) => existsSync(path)) ?? null;
}

/**
 * Why the bench cannot start a Postgres of its own here (null when it can): a run without one
 * skips the Postgres peers with this one line instead of failing.
 */
export function missingPostgres(): string | null {
  const missing = ['initdb', 'postgres', 'pg_ctl'].filter((name) => !postgresBinary(name));
  return missing.length ? `Postgres is not installed (${missing.join(', ')} not found): apt-get install -y postgresql adds it` : null;
}

/**
 * A Postgres of this machine for the bench, when no URL is given: its own cluster in `dir`
 * (`<dataset>/peers/postgres`; kept, so the tables load once), on a loopback port, run as the
 * `postgres` user (Postgres refuses root).
 */
export async function startLocalPostgres(dir: string, log: (line: string) => void): Promise<{ url: string; stop: () => Promise<void> }> {
  const asPostgres = (cmd: string, args: string[]) => (process.getuid?.() === 0 ? (['runuser', ['-u', 'postgres', '--', cmd, ...args]] as const) : ([cmd, args] as const));
  const missing = missingPostgres();
  if (missing) throw new Error(missing);
  const initdb = postgresBinary('initdb')!;
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    await mkdir(dir, { recursive: true });
    await chmod(dir, 0o700);
    if (process.getuid?.() === 0) {
      const { uid, gid } = pgUser();
      await chown(dir, uid, gid);
    }
    const [cmd, args] = asPostgres(initdb, ['-D', dir, '-U', 'bench', '--auth=trust', '--no-sync']);
    const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error('initdb failed');
  }
  const port = await freePort();
  const postgres = postgresBinary('postgres')!;
  const [cmd, args] = asPostgres(postgres, [
    '-D',
    dir,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'shared_buffers=2GB',
    '-c',
    'work_mem=256MB',
    '-c',
    'max_wal_size=8GB',
    '-c',
    'fsync=off',
  ]);
  const server = spawn(cmd, args, { stdio: 'ignore' });
  const url = `postgres://bench@127.0.0.1:${port}/postgres`;
  for (let i = 0; ; i++) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      break;
    } catch (error) {
      if (i > 300 || server.exitCode !== null) throw new Error(`postgres did not start: ${String(error)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  log(`postgres: local server on 127.0.0.1:${port} (${dir})`);
  // runuser does not pass signals on: pg_ctl stops the server itself.
  const stop = async () => {
    const pgCtl = postgresBinary('pg_ctl')!;
    const [c, a] = asPostgres(pgCtl, ['-D', dir, 'stop', '-m', 'fast']);
    spawnSync(c, a, { stdio: 'ignore' });
    if (server.exitCode === null) await new Promise((r) => server.once('exit', r));
  };
  return { url, stop };
}

function pgUser(): { uid: number; gid: number } {
  const out = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim();
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim();
  if (!out) throw new Error('there is no postgres user to run the server as');
  return { uid: Number(out), gid: Number(gid) };
}

/**
 * Postgres in Logflare's layout as a peer: the given server (`--postgres <url>`) or a local one.
 * Warm: one connection.
 */
export async function openPostgres(dataset: Dataset, url: string | undefined, log: (line: string) => void): Promise<Peer> {
  // This peer alone also takes a server of the caller's (the Studio section's starts its own).
  const missing = url ? null : missingPostgres();
  if (missing) throw new Error(`${missing}, or pass --postgres <url>`);
  const local = url ? null : await startLocalPostgres(join(dataset.dir, 'peers', 'postgres'), log);
  const target = url ?? local!.url;
  await load(target, dataset, log);
  const client = new pg.Client({ connectionString: target });
  await client.connect();
  await client.query("SET TimeZone = 'UTC'");
  const iso = (v: unknown) => formatIsoMicros(BigInt(String(v)));
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    name: 'postgres-logflare-layout',
    async run(c: BenchCase): Promise<AnswerRow[]> {
      const query = positional(SQL[c.endpoint], planOf(c));
      const { rows } = await client.query(query.text, query.values);
      return rows.map((r: Record<string, unknown>) => {
        const { micros, ...rest } = r;
        if (c.endpoint === 'logs.all') return { id: rest.id, timestamp: iso(micros), event_message: rest.event_message, metadata: rest.metadata };
        const out: AnswerRow = { timestamp: iso(micros) };
        for (const [k, v] of Object.entries(rest)) out[k] = num(v);
        return out;
      });
    },
    async close() {
      await client.end();
      await local?.stop();
    },
  };
}
