import { querySql } from '../sql/query-files';
import { defineSource } from './source-descriptor';

/** The gateway request log (Logflare's `cloudflare.logs.prod`): docs/semantics.md, "Log sources". */
export const edgeLogs = defineSource({
  name: 'edgeLogs',
  relation: 'edge_logs',
  description: 'Gateway request log: one event per API request.',
  logflare: { names: ['cloudflare.logs.prod'], id: '49d2db0a-0317-43a6-9cd4-0b1425da96f0' },
  columns: {
    project: 'text',
    // Top-level fields Supabase's Vector adds: the container (`supabase-kong`) and, on nginx's
    // error lines, their severity. Declared so they are kept in every layout (docs/supabase.md).
    appname: 'text',
    severity: 'text',
    request_path: { type: 'text', path: '$.request.path' },
    request_url: { type: 'text', path: '$.request.url' },
    status_code: { type: 'integer', path: '$.response.status_code', duckdb: 'INTEGER' },
  },
  projectColumn: 'project',
  // What Supabase Studio reads on every row: its filters (status, method, product by path), its
  // chart (status), the Explorer's Top Paths, Slow Response Time and usage chart.
  typedFields: ['request.path', 'request.method', 'request.search', 'response.status_code', 'response.origin_time'],
  // The Explorer's Top Paths groups by the path and the query string: their counts per hour are kept
  // together (edge_logs_typed_pairs, typed-hourly.ts), read for a window's whole hours; a file whose
  // query strings vary per request keeps none (its rows are read).
  typedPairs: [['request.path', 'request.search']],
  // 8,192-row groups (ClickHouse's granule; was 20k, before that 100k): an older logs.all page
  // (which the heads cannot serve) decodes the id, event_message and metadata of the groups that
  // hold it. Measured on one day of the bench's default data, bare DuckDB, a page one day back:
  // first phase 4.5 -> 3.6 ms, second 15.4 -> 8.6 ms; through the library, the 12 page cases
  // (P1/P6, PRO/PAYG, 1h/1d/3d back) 0.32-0.84x the time. Costs, per day file: 2.4 % more bytes,
  // about 1 s more to write, a cold footer read 1-5 ms longer, and 12-38 % more CPU in
  // usage.api-counts' whole-day URL scan (each group tests its own dictionary of URLs). 5k groups
  // were no faster, 2k slower (a big file's many groups cost more to skip than they save).
  // request_url kept as a dictionary in each group (the URL search runs once per distinct URL).
  // logs.all's first page reads heads.
  // A bloom filter on each group's `id`: Studio opens a log by id with no time range, and random
  // ids' min and max span every group, so it read the two newest days' ids whole (11.7 MB a day of
  // the bench's week); with the filter DuckDB reads the group that may hold it. On the Studio
  // bench's week, bare DuckDB, the single log 113-150 -> 12 ms (docs/performance.md, round nine);
  // files 6.7 % larger, compaction's memory up to 10 MB more (ID_BLOOM_FILTER_MAX_ROWS).
  parquet: { rowGroupRows: 8192, dictionaryEntries: 100_000, heads: true, idBloomFilter: true },
  // What usage.api-counts reads for hour and day buckets: class counts per (hour, URL origin, URL),
  // per origin a trigram map of its URLs that rules out origins without the pattern's literal, and
  // class counts per (hour, URL origin) for the origins that hold a plain-text pattern themselves
  // (and every request without a pattern).
  rollups: {
    edge_logs_origin_hourly: { sql: querySql('duckdb', 'edge_logs_origin_hourly') },
    edge_logs_url_hourly: { sql: querySql('duckdb', 'edge_logs_url_hourly') },
    edge_logs_url_grams: {
      sql: querySql('duckdb', 'edge_logs_url_grams'),
      rest: querySql('duckdb', 'edge_logs_url_grams.rest'),
      // A stored map never changes: its origins that may hold the pattern's literal are kept per
      // literal and bound in its place, not tested again on every call (about 2 ms of 10).
      narrowedBy: { param: 'project_required', column: 'origin', sql: querySql('duckdb', 'edge_logs_url_grams.matches') },
    },
  },
  // The command line's older names for it: --edge-logs <glob>, clickhouse --edge-table, --source edge.
  cli: { flag: 'edge-logs', tableFlag: 'edge-table', alias: 'edge' },
  looksLike: (e) => {
    const request = (e.metadata as Record<string, unknown> | undefined)?.request;
    return typeof e.project === 'string' || (typeof request === 'object' && request !== null && 'url' in request);
  },
});
