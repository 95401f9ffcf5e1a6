import { defineSource } from '../source-descriptor';

/**
 * GoTrue's log (self-hosted Vector's `gotrue.logs.prod`): Vector merges GoTrue's JSON line into
 * `metadata` (`level`, `msg`, `status`, `path`, `method`, `error`, `auth_event`, ...); lines that
 * are not JSON have none of those keys. docs/supabase.md, "Sources".
 */
export const authLogs = defineSource({
  name: 'authLogs',
  relation: 'auth_logs',
  description: 'Auth (GoTrue) log: one event per line GoTrue writes.',
  logflare: { names: ['gotrue.logs.prod'], id: 'eac67572-ca09-4e09-803c-31a4b3a514ac' },
  columns: { project: 'text', appname: 'text' },
  projectColumn: 'project',
  // What Studio's filters and chart read on every row: the level, the HTTP status (a number or a
  // text, as GoTrue wrote it), the path.
  typedFields: ['level', 'status', 'path'],
});
