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
    request_path: { type: 'text', path: '$.request.path' },
    request_url: { type: 'text', path: '$.request.url' },
    status_code: { type: 'integer', path: '$.response.status_code', duckdb: 'INTEGER' },
  },
  projectColumn: 'project',
  // 20k-row groups (was 100k): an older logs.all page (which the heads cannot serve) decodes the
  // metadata of the groups that hold it, measured on one day of the bench's default data: 84 -> 20
  // ms of CPU, its first phase 8.7 -> 3.1 ms, for 3-9 % more CPU in usage.api-counts' URL scan and
  // 7 % more bytes (10k: 14 ms, usage 10-30 % more). request_url kept as a dictionary in each
  // group (the URL search runs once per distinct URL). logs.all's first page reads heads.
  parquet: { rowGroupRows: 20_000, dictionaryEntries: 100_000, heads: true },
  // What usage.api-counts reads for hour and day buckets: class counts per (hour, URL origin, URL),
  // and per origin a trigram map of its URLs that rules out origins without the pattern's literal.
  rollups: {
    edge_logs_url_hourly: { sql: querySql('duckdb', 'edge_logs_url_hourly') },
    edge_logs_url_grams: { sql: querySql('duckdb', 'edge_logs_url_grams') },
  },
  looksLike: (e) => {
    const request = (e.metadata as Record<string, unknown> | undefined)?.request;
    return typeof e.project === 'string' || (typeof request === 'object' && request !== null && 'url' in request);
  },
});
