import { defineSource } from '../source-descriptor';

/**
 * Realtime's log (self-hosted Vector's `realtime.logs.prod`): no top-level `project`; Vector
 * moves it to `metadata.project` (and `metadata.external_id`), with `metadata.level`.
 * docs/supabase.md, "Sources".
 */
export const realtimeLogs = defineSource({
  name: 'realtimeLogs',
  relation: 'realtime_logs',
  description: 'Realtime server log: one event per line Realtime writes.',
  logflare: { names: ['realtime.logs.prod'], id: '4be593be-deee-4cfa-bae5-c51ed67dd1ce' },
  columns: { project: { type: 'text', path: '$.project' }, appname: 'text' },
  projectColumn: 'project',
});
