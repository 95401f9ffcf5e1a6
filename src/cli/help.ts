/** Help of every command; `log-endpoints <command> --help` prints the command's. */
export const HELP: Record<string, string> = {
  main: `log-endpoints: saved analytical queries over your log files (Logflare's endpoint API without Logflare).

Usage: log-endpoints <command> [options]

Commands:
  serve        Serve the endpoints over HTTP
  query        Run one endpoint and print its rows
  demo-data    Write a realistic demo dataset relative to now
  demo         Write demo data and serve it (what \`npm start\` runs)
  compact      Rewrite NDJSON logs as day-partitioned, sorted Parquet (the fast layout)

Options:
  -h, --help     Help (also after a command: log-endpoints serve --help)
  -v, --version  Version

Exit codes: 0 success, 1 failure (engine, files, port), 2 wrong usage or invalid parameter.
`,
  serve: `Usage: log-endpoints serve --edge-logs <glob> --function-logs <glob> --api-key <key> [options]

Serves GET /api/endpoints/<name>, /api/endpoints/query/<uuid|name>, /api/endpoints,
/api/openapi.json and /health. Stops gracefully on SIGINT/SIGTERM: requests in flight are
answered (after --shutdown-grace, with 503 closed), then it exits 0.

Options:
  --edge-logs <glob>             Gateway logs (NDJSON or Parquet); repeatable
  --function-logs <glob>         Edge-function logs; repeatable
  --api-key <key>                Accepted key (X-API-KEY or Authorization: Bearer); repeatable.
                                 Also from LOG_ENDPOINTS_API_KEYS (comma separated)
  --no-auth                      Serve without any key (explicit; refused otherwise)
  --port <n>                     Port (default 4000; 0 = any free port)
  --host <addr>                  Address to bind (default 127.0.0.1)
  --base-path <path>             Serve every route under this prefix, e.g. /logs
  --cors-origin <origin>         Allow browsers from this origin ('*' for any); repeatable
  --now <iso>                    Evaluate every relative window at this instant (replay an incident)
  --no-cache                     Do not cache results
  --max-concurrent-queries <n>   Engine queries at once (default 4)
  --max-queued-queries <n>       Queries waiting before 503 overloaded (default 64)
  --query-timeout-ms <n>         Time limit per query before 504 timeout (default 30000)
  --shutdown-grace <s>           Seconds requests in flight get to finish on SIGTERM (default 30)
  --threads <n>                  DuckDB worker threads (default: the number of cores;
                                 with --memory-limit, one per 128 MiB of it)
  --memory-limit <size>          DuckDB memory limit, e.g. 256MB (default: 80% of RAM)
  -h, --help                     This help
`,
  query: `Usage: log-endpoints query <name|uuid> --param k=v ... [--format table|json|csv|ndjson|arrow] [options]

Runs one endpoint over the given logs and prints its rows.

Options:
  -p, --param <k=v>          A parameter (repeatable), e.g. --param project=abc --param interval=1day
  -f, --format <format>      table (default), json ({"result": [...]}), csv, ndjson, arrow (IPC stream;
                             redirect it to a file)
  --edge-logs <glob>         Gateway logs (NDJSON or Parquet); repeatable
  --function-logs <glob>     Edge-function logs; repeatable
  --now <iso>                Evaluate the relative window at this instant
  --threads <n>              DuckDB worker threads (default: the number of cores;
                             with --memory-limit, one per 128 MiB of it)
  --memory-limit <size>      DuckDB memory limit, e.g. 256MB
  -h, --help                 This help

Endpoints: functions.invocation-stats (project, interval, function_id?),
           logs.all (project, project_tier, iso_timestamp_start?, iso_timestamp_end?),
           usage.api-counts (project, interval)
`,
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
  compact: `Usage: log-endpoints compact --source edge|functions --input <glob> --out <dir> [--delete-source]

Rewrites newline-delimited JSON logs as Parquet: zstd, row groups of 100k rows, sorted by project
then timestamp (newest first), one folder per UTC day (<out>/date=YYYY-MM-DD/part-*.parquet). Writes to a temporary
folder, counts the rows back, then renames the files into place; running it again over the same
inputs changes nothing. Ctrl+C leaves the inputs untouched.

Options:
  --source <edge|functions>  Which log the files hold
  --input <glob>             NDJSON files to compact; repeatable
  --out <dir>                Folder of the Parquet dataset; point the source at <dir>/**/*.parquet
  --delete-source            Delete the inputs after the check (never when lines were skipped)
  --threads <n>              DuckDB worker threads
  --memory-limit <size>      DuckDB memory limit, e.g. 1GB (sorting spills to disk past it)
  -h, --help                 This help
`,
  demo: `Usage: log-endpoints demo [--port <n>] [--host <addr>] [--out <dir>] [--events <n>] [--api-key <key>]

Writes a demo dataset relative to now (see demo-data), serves it and prints a key and three
curl commands to try. What \`npm start\` runs. Stops on SIGINT/SIGTERM.

Options:
  --port <n>         Port (default 4000)
  --host <addr>      Address to bind (default 127.0.0.1)
  --out <dir>        Folder for the data (default .demo-data)
  --events <n>       Gateway events (default 20000)
  --api-key <key>    The key to accept (default: a new random key, printed)
  --now <iso>        Pretend it is this instant (data and windows); default: now
  -h, --help         This help
`,
};
