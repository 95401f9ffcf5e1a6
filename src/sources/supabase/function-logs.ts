import { defineSource } from '../source-descriptor';

/**
 * Edge functions' own output (self-hosted Vector's `deno-subhosting-events`):
 * `metadata.{function_id, execution_id, event_type, level, project_ref, ...}`. docs/supabase.md, "Sources".
 */
export const functionLogs = defineSource({
  name: 'functionLogs',
  relation: 'function_logs',
  description: 'Edge-function log: one event per line a function writes.',
  logflare: { names: ['deno-subhosting-events'], id: '2c8e2d56-cf71-4339-b42c-e9b643c09f46' },
  columns: { project_ref: { type: 'text', path: '$.project_ref' }, appname: 'text' },
  projectColumn: 'project_ref',
  // What Studio's severity filter and chart read on every row.
  typedFields: ['level'],
});
