import { defineSource } from '../source-descriptor';

/** PgBouncer's log (self-hosted Vector's `pgbouncer.logs.prod`): `metadata.host`. docs/supabase.md, "Sources". */
export const pgbouncerLogs = defineSource({
  name: 'pgbouncerLogs',
  relation: 'pgbouncer_logs',
  description: 'PgBouncer connection pooler log: one event per line PgBouncer writes.',
  logflare: { names: ['pgbouncer.logs.prod'], id: '06dd12bd-7d8a-4ef1-965b-8bac619fa5b7' },
  columns: { project: 'text', appname: 'text' },
  projectColumn: 'project',
});
