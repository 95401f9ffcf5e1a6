import { defineSource } from '../source-descriptor';

/**
 * Postgres's log (self-hosted Vector's `postgres.logs`): `metadata.host` and
 * `metadata.parsed.{error_severity, user_name, database_name, query, application_name, detail, hint, ...}`.
 * docs/supabase.md, "Sources".
 */
export const postgresLogs = defineSource({
  name: 'postgresLogs',
  relation: 'postgres_logs',
  description: 'Postgres log: one event per line the database writes.',
  logflare: { names: ['postgres.logs'], id: '5332b17f-bd9b-4642-9e23-f7bbef9d3aa5' },
  columns: { project: 'text', appname: 'text' },
  projectColumn: 'project',
  // What Vector parses from each line (not \`parsed.timestamp\`: a bare \`timestamp\` is the event's).
  fields: ['host', ...['application_name', 'database_name', 'detail', 'error_severity', 'hint', 'query', 'user_name'].map((f) => `parsed.${f}`)],
  // What Studio reads on every row: the severity (the page's filter, its chart, the Explorer's
  // Errors), the user (Commits By User, Error Count by User) and the application (the Cron page).
  typedFields: ['parsed.error_severity', 'parsed.user_name', 'parsed.application_name'],
  // The Explorer's Error Count by User groups by the user and the severity: their counts per hour
  // are kept together (postgres_logs_typed_pairs, typed-hourly.ts).
  typedPairs: [['parsed.user_name', 'parsed.error_severity']],
  // 32,768-row groups (the default is 100,000): Studio's list (the newest 100 of the last hour)
  // decoded the day's newest 100,000-row group, every column, for the 15,000 rows of its hour.
  // Measured on the Studio bench's week (2.5 M events), in process, CPU per call: the list 56-67 ->
  // 28-38 ms; the 7-day chart and Error Count by User 5-10 % more, the 24-hour chart 10-25 % (more
  // groups to read); files the same size. 8,192 rows (the gateway's) took the list to 20-26 ms but
  // the 7-day kinds 1.2-1.5x higher.
  // Heads (each project's newest 100 rows of a file, newest-heads.ts): Studio's list reads them
  // instead of the newest day's 32,768-row group of every column (a caller's newest rows,
  // duckdb-engine.ts). On the Studio bench's week, alternated: 5.8-6.0 ms p50 while ingesting
  // against 24.7-32.3 (0.68-1.02 of chdb's speed against 0.12-0.15); compacting the week's 2.5 M
  // events 23.1 against 23.6 s of CPU (docs/performance.md, "The lists read from the heads").
  parquet: { rowGroupRows: 32_768, heads: true },
});
