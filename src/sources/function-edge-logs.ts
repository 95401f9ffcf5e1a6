import { querySql } from '../sql/query-files';
import { defineSource } from './source-descriptor';

/** The edge-function invocation log (Logflare's `deno-relay-logs`): docs/semantics.md, "Log sources". */
export const functionEdgeLogs = defineSource({
  name: 'functionEdgeLogs',
  relation: 'function_edge_logs',
  description: 'Edge-function invocation log: one event per invocation.',
  logflare: { names: ['deno-relay-logs'], id: '25810149-e19d-4b24-a57a-0e886add2d74' },
  columns: {
    // The container Supabase's Vector names (`appname`): kept in every layout (docs/supabase.md).
    appname: 'text',
    project_ref: { type: 'text', path: '$.project_ref' },
    function_id: { type: 'text', path: '$.function_id' },
    execution_time_ms: { type: 'float', path: '$.execution_time_ms' },
    status_code: { type: 'integer', path: '$.response.status_code', duckdb: 'INTEGER' },
  },
  projectColumn: 'project_ref',
  // What Supabase Studio's filters and chart read on every row.
  typedFields: ['response.status_code'],
  // Small columns: 20k-row groups let a short window (invocation-stats 1hr) skip all but one
  // group of a project (3.7 ms instead of 6.7).
  parquet: { rowGroupRows: 20_000 },
  // Per hour, project and function: what functions.invocation-stats 1day and 7day read (the
  // counts, and the quantile summaries a value per row); per day, the quantile summaries 7day's
  // day buckets read (about 200 values a group where an hour's keep up to every value).
  rollups: {
    function_edge_logs_hourly: { sql: querySql('duckdb', 'function_edge_logs_hourly') },
    function_edge_logs_summary: { sql: querySql('duckdb', 'function_edge_logs_summary') },
    function_edge_logs_daily_summary: { sql: querySql('duckdb', 'function_edge_logs_daily_summary') },
  },
  // The command line's older names for it: --function-logs <glob>, clickhouse --function-table, --source functions.
  cli: { flag: 'function-logs', tableFlag: 'function-table', alias: 'functions' },
  looksLike: (e) => {
    const metadata = e.metadata as Record<string, unknown> | undefined;
    if (typeof metadata !== 'object' || metadata === null) return false;
    return 'project_ref' in metadata || 'function_id' in metadata || 'execution_time_ms' in metadata;
  },
});
