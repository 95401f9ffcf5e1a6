import { defineSource } from '../source-descriptor';

/**
 * Storage's log (self-hosted Vector's `storage.logs.prod.2`): no top-level `project`; Vector
 * moves it to `metadata.project` (and `metadata.tenantId`), with `metadata.level`, `reqId` and
 * `context[]{host, pid}` (an array). docs/supabase.md, "Sources".
 */
export const storageLogs = defineSource({
  name: 'storageLogs',
  relation: 'storage_logs',
  description: 'Storage API log: one event per line the storage server writes.',
  logflare: { names: ['storage.logs.prod.2'], id: '5be243aa-4bf0-4641-a351-aeaac8373ef0' },
  columns: { project: { type: 'text', path: '$.project' }, appname: 'text' },
  projectColumn: 'project',
});
