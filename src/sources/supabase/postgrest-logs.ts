import { defineSource } from '../source-descriptor';

/** PostgREST's log (self-hosted Vector's `postgREST.logs.prod`): `metadata.host`. docs/supabase.md, "Sources". */
export const postgrestLogs = defineSource({
  name: 'postgrestLogs',
  relation: 'postgrest_logs',
  description: 'PostgREST log: one event per line PostgREST writes.',
  logflare: { names: ['postgREST.logs.prod'], id: '7ef7a0c9-f3bb-41f6-a4f6-e07eb7bccce8' },
  columns: { project: 'text', appname: 'text' },
  projectColumn: 'project',
});
