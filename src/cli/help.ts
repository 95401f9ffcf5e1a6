import { BUILT_IN_SOURCE_SET } from '../sources/built-ins';
import type { SourceSet } from '../sources/source-set';
import { sourcesHelp } from './source-flags';

/**
 * Help of a command (`main`: the list of commands) for the command's sources: what `--source`
 * takes and the flags the descriptors add are listed from the set, a `--config`'s sources
 * included. Undefined for an unknown command.
 */
export function helpText(command: string, sources: SourceSet = BUILT_IN_SOURCE_SET): string | undefined {
  const help = HELP[command];
  if (help === undefined) return undefined;
  const ingestNames = sources.list.flatMap((d) => d.logflare.names).join('|');
  return help
    .replaceAll('{{ingest-names}}', ingestNames)
    .replace('{{sources:globs}}', sourcesHelp(sources, 'globs'))
    .replace('{{sources:names}}', sourcesHelp(sources, 'names'))
    .replace('{{sources:tables}}', sourcesHelp(sources, 'tables'))
    .replace(/\{\{typed-columns:(\d+)\}\}/, (_, width: string) => typedColumnsHelp(Number(width)));
}

/** The help line of `--no-typed-columns` (parse-options.ts), its text starting at column `width` past the indent. */
function typedColumnsHelp(width: number): string {
  return `${'--no-typed-columns'.padEnd(width)}Compact into Parquet with metadata alone, no typed columns
${' '.repeat(width + 2)}(smaller files, slower queries on the typed fields, the same answers)`;
}

/** The help texts, with the parts the sources give as `{{...}}`. */
const HELP: Record<string, string> = {
  main: `log-endpoints: saved analytical queries over your log files (Logflare's endpoint API without Logflare).

Usage: log-endpoints <command> [options]

Commands:
  serve        Serve the endpoints over HTTP
  query        Run one endpoint and print its rows
  demo-data    Write a realistic demo dataset relative to now
  demo         Write demo data and serve it (what \`npm start\` runs)
  compact      Rewrite NDJSON logs as day-partitioned, sorted Parquet (the fast layout)
  clickhouse   Create ClickHouse tables, load logs into them, serve the endpoints from them
  ingest       Load NDJSON files into a data dir (or a running server), as if sent over HTTP
  check        Verify a data dir (write-ahead log, commit logs, data files); --repair restores

Options:
  -h, --help     Help (also after a command: log-endpoints serve --help)
  -v, --version  Version

Exit codes: 0 success, 1 failure (engine, files, port), 2 wrong usage or invalid parameter.
`,
  serve: `Usage: log-endpoints serve --source <source>=<glob>... --api-key <key> [options]
       log-endpoints serve --data-dir <dir> --api-key <key> [--ingest-key <key>] [options]
       log-endpoints serve --supabase --data-dir <dir> [options]

Serves GET /api/endpoints/<name>, /api/endpoints/query/<uuid|name>, /api/endpoints, /api/catalog,
/api/openapi.json and /health (and with --dashboard the page at / and /dashboard). With --data-dir
it also takes events on Logflare's ingest routes (POST /api/logs, /logs, /api/events
?source_name={{ingest-names}})
and OTLP/HTTP logs (POST /v1/logs), keeps them durably in the data dir, compacts them in the
background and serves them. Stops gracefully on SIGINT/SIGTERM: requests in flight are answered
(after --shutdown-grace, with 503 closed), accepted events written, then it exits 0.

Options:
  --config <module>              An ES module whose default export holds createEndpoints options
                                 (sources, your endpoints and sources, storage, cache, ...) and
                                 apiKeys; combined with the flags: lists add up, a value set in
                                 both places must agree (docs/cli.md)
  --supabase                     Stand in for Logflare in self-hosted Supabase: Vector's nine
                                 sources, one project, logs.all's sql in BigQuery's dialect and
                                 Logflare's wire format; keys from LOGFLARE_PRIVATE_ACCESS_TOKEN
                                 (queries) and LOGFLARE_PUBLIC_ACCESS_TOKEN (ingest) unless
                                 --api-key / --ingest-key give them (docs/supabase.md)
  --single-project               Every event belongs to one project: the project parameter is
                                 accepted and ignored (self-hosted Supabase: Studio sends default)
  --source <source>=<glob>       Logs of a source (NDJSON or Parquet), named as below; repeatable
                                 (optional with --data-dir)
  --data-dir <dir>               Managed storage: keep ingested events here (one server per dir)
  --ingest-key <key>             A key that may only ingest; repeatable. Also from
                                 LOG_ENDPOINTS_INGEST_KEYS (comma separated)
  --otlp-default-source <name>   Where OTLP log records go when neither the request nor their
                                 service.name names a source (default: refused)
  --wal-segment-bytes <n>        Close a WAL segment at this size (default 8388608)
  --wal-segment-age-ms <n>       ... or this long after its first event (default 60000)
  {{typed-columns:31}}
  --api-key <key>                Accepted key (X-API-KEY or Authorization: Bearer); repeatable.
                                 Also from LOG_ENDPOINTS_API_KEYS (comma separated)
  --no-auth                      Serve without any key (explicit; refused otherwise)
  --port <n>                     Port (default 4000; 0 = any free port)
  --host <addr>                  Address to bind (default 127.0.0.1)
  --base-path <path>             Serve every route under this prefix, e.g. /logs
  --cors-origin <origin>         Allow browsers from this origin ('*' for any); repeatable
  --dashboard                    Serve the dashboard page at / and /dashboard (it asks for a key)
  --open-metrics                 GET /metrics (Prometheus) without a key
  --now <iso>                    Evaluate every relative window at this instant (replay an incident)
  --no-cache                     Do not cache results
  --max-concurrent-queries <n>   Engine queries at once (default 4)
  --max-queued-queries <n>       Queries waiting before 503 overloaded (default 64)
  --query-timeout-ms <n>         Time limit per query before 504 timeout (default 30000)
  --shutdown-grace <s>           Seconds requests in flight get to finish on SIGTERM (default 30)
  --threads <n>                  DuckDB worker threads (default: one per 128 MiB of the
                                 queries' share of the budget, at most the cores)
  --memory-limit <size>          The process's memory budget, e.g. 1GB (default 512MiB, or 75% of
                                 the container's limit when smaller); DuckDB spills past its share
  -h, --help                     This help

{{sources:globs}}`,
  query: `Usage: log-endpoints query <name|uuid> --param k=v ... [--format table|json|csv|ndjson|arrow] [options]

Runs one endpoint over the given logs and prints its rows.

Options:
  -p, --param <k=v>          A parameter (repeatable), e.g. --param project=abc --param interval=1day
  -f, --format <format>      table (default), json ({"result": [...]}), csv, ndjson, arrow (IPC stream;
                             redirect it to a file)
  --config <module>          createEndpoints options from an ES module (your endpoints and sources)
  --single-project           The project parameter is accepted and ignored
  --source <source>=<glob>   Logs of a source (NDJSON or Parquet), named as below; repeatable
  --now <iso>                Evaluate the relative window at this instant
  --threads <n>              DuckDB worker threads (default: one per 128 MiB of the
                             queries' share of the budget, at most the cores)
  --memory-limit <size>      The process's memory budget, e.g. 1GB (default 512MiB)
  -h, --help                 This help

Endpoints: functions.invocation-stats (project, interval, function_id?),
           logs.all (project, project_tier?, iso_timestamp_start?, iso_timestamp_end?),
           usage.api-counts (project, interval), and those of --config

{{sources:globs}}`,
  'demo-data': `Usage: log-endpoints demo-data [--out <dir>] [--events <n>] [options]

Writes realistic gateway and edge-function logs spread over the last days before now
(deterministic for a seed and --now), with a progress bar on stderr.

Options:
  --out <dir>        Folder to write to (default .demo-data)
  --events <n>       Gateway events (default 20000); edge-function invocations are half as many
  --days <n>         Days of logs before now (default 7)
  --projects <n>     Number of projects (default 20)
  --seed <n>         Seed (default 1)
  --now <iso>        The instant the logs lead up to (default: now)
  --parquet          Write Parquet copies too
  -h, --help         This help
`,
  compact: `Usage: log-endpoints compact --source <source> --input <glob> --out <dir> [--delete-source]

Rewrites newline-delimited JSON logs as Parquet (zstd, sorted by project then newest first, one
folder per UTC day: <out>/date=YYYY-MM-DD/) in a dataset with a commit log (<out>/_compact/), so
that every event is in it exactly once: each run compacts only what is new (new files, lines
appended since, a file rewritten), a rotated file is recognised by its content, a killed run is
completed by the next one, and one run at a time holds the dataset. Serve the NDJSON glob and <out>
together: each event is read once, from one or the other.

Options:
  --source <source>          Which log the files hold (named as below)
  --config <module>          Your sources (sourceDefinitions of an ES module, as for serve)
  --input <glob>             NDJSON files to compact; repeatable
  --out <dir>                Folder of the dataset; point the source at <dir> (with the NDJSON glob if you like)
  --delete-source            Delete each input once all its events are committed (never one holding
                             lines that are not events: they exist nowhere else)
  {{typed-columns:27}}
  --threads <n>              DuckDB worker threads
  --memory-limit <size>      DuckDB memory limit, e.g. 1GB (sorting spills to disk past it)
  -h, --help                 This help

{{sources:names}}`,
  check: `Usage: log-endpoints check --data-dir <dir> [--repair] [--config <file>] [--supabase]

Verifies a managed data dir (every source it keeps, yours too): each write-ahead segment readable
and ending with a commit marker, each dataset's commit log intact (checksums, no missing commit),
every committed data file, head and stored rollup holding the bytes its commit recorded (CRC-32),
and the data files no commit names. Prints each problem.

With --repair (no server may run on the data dir: it takes its lock) it restores what can be
restored and says what it did: files of lost commits go back into the log when their provenance
verifies; a damaged data file is written again from its inputs when they still verify, a damaged
head or stored rollup from its data file; what cannot be moves to <dataset>/_quarantine/ and leaves
the log; remaining damage of the log is acknowledged, so queries stop reporting it. Writing again
needs the source's declaration: the built-ins, and yours with --config (--supabase for its sources).

Options:
  --data-dir <dir>   The data dir (of serve --data-dir, ingest --data-dir)
  --repair           Restore what can be restored
  --config <file>    Your sources' declarations (the same file serve reads)
  --supabase         The Supabase sources' declarations

Exit codes: 0 nothing wrong (any more), 1 problems found (or remaining after --repair, or the data
dir in use by another process), 2 wrong usage. See docs/damaged-data.md.
`,
  ingest: `Usage: log-endpoints ingest <file.ndjson...> --source <source> --data-dir <dir> [--batch-size <n>]
       log-endpoints ingest <file.ndjson...> --source <source> --url <server> --api-key <key>

Loads events (one JSON object per line; .gz files are decompressed) through the same path as
POST /api/logs: each event checked and normalised, batches written durably. Lines that are not
JSON objects and events the checks refuse are skipped and reported (file:line). A progress bar
goes to stderr. A data dir used by a running server is refused: send through the server instead
with --url.

Options:
  --source <source>          The source (named as below) or one of its Logflare names, in any
                             letter case ({{ingest-names}}); with --url, also a name
                             only the server knows
  --config <module>          Your sources (sourceDefinitions of an ES module, as for serve)
  --data-dir <dir>           Managed storage to load into (no process may be using it)
  {{typed-columns:27}}
  --url <server>             A running serve --data-dir, e.g. http://127.0.0.1:4000 (with its base path)
  --api-key <key>            Its key (an ingest key is enough); also LOG_ENDPOINTS_INGEST_KEYS
  --batch-size <n>           Events per batch (default 1000)
  -h, --help                 This help

{{sources:names}}`,
  demo: `Usage: log-endpoints demo [--port <n>] [--host <addr>] [--out <dir>] [--events <n>] [--api-key <key>]

Writes a demo dataset relative to now (see demo-data), serves it with the dashboard and prints
the dashboard's URL, a key and three curl commands to try. What \`npm start\` runs. Stops on
SIGINT/SIGTERM.

Options:
  --port <n>         Port (default 4000)
  --host <addr>      Address to bind (default 127.0.0.1)
  --out <dir>        Folder for the data (default .demo-data)
  --events <n>       Gateway events (default 20000)
  --api-key <key>    The key to accept (default: a new random key, printed)
  --now <iso>        Pretend it is this instant (data and windows); default: now
  --no-dashboard     Do not serve the dashboard page
  -h, --help         This help
`,
  clickhouse: `Usage: log-endpoints clickhouse init|load|serve --url <http://host:8123> [options]

The same endpoints computed by ClickHouse, for logs that outgrow one machine.

  init    Create the database and tables (IF NOT EXISTS): MergeTree tables partitioned by day,
          ordered by project then time; with --cluster, <table>_local on the server and a
          Distributed table <table> over the cluster. Repeat --url for every server, or use
          --on-cluster (needs ZooKeeper/Keeper).
  load    Copy NDJSON or Parquet logs into a table (read exactly as the DuckDB engine reads
          them; inserted with insert_distributed_sync=1 on a cluster). Not idempotent.
  serve   Serve the HTTP API (as \`log-endpoints serve\`) with ClickHouse as the engine. With
          --data-dir it also takes events on the ingest routes, keeps them durably in the data
          dir and ships each closed segment into the tables (exactly once), then deletes it.

Options (all commands):
  --url <url>                    ClickHouse HTTP interface (init: repeatable, one per server)
  --user <name>                  User (or CLICKHOUSE_USER; default: default)
  --password <secret>            Password (or CLICKHOUSE_PASSWORD)
  --database <name>              Database (default: default)
  --cluster <name>               Cluster of the servers' remote_servers (Distributed tables)
  --table <source>=<name>        A source's table (default: its relation, e.g. edge_logs); repeatable
  --config <module>              Your sources (sourceDefinitions; for serve also your endpoints,
                                 keys and options, combined with the flags as for serve)
  --supabase                     Self-hosted Supabase's nine sources (and for serve, the rest of
                                 serve --supabase: docs/supabase.md)
init:
  --on-cluster                   Run the DDL once with ON CLUSTER instead of on each --url
load:
  --source <source>              Which log the files hold (named as below)
  --input <glob>                 NDJSON or Parquet files; repeatable
  --threads <n>, --memory-limit <size>   DuckDB settings for reading the files
serve:
  --api-key <key>, --no-auth, --port <n>, --host <addr>, --base-path <path>, --cors-origin <o>,
  --dashboard, --now <iso>, --no-cache, --max-concurrent-queries <n>, --max-queued-queries <n>,
  --query-timeout-ms <n>, --shutdown-grace <s>
                                 As for \`log-endpoints serve\`
  --data-dir <dir>, --ingest-key <key>, --wal-segment-bytes <n>
                                 Ingest, as for \`log-endpoints serve\`
  --wal-segment-age-ms <n>       Ship a segment this long after its first event (default 1000)
  --batch-rows <n>               Rows per INSERT when shipping (default 100000)
  -h, --help                     This help

{{sources:tables}}`,
};
