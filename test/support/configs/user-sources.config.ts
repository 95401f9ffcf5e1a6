// A `--config` module that only declares a source and an endpoint of its own (test/cli-config.test.ts):
// the logs come from the command line (`--source auth_logs=<glob>`), compact and ingest take it too.
import { defineEndpoint, defineSource, p } from '../../../src/index';

// No looksLike: compact takes any event for it.
const authLogs = defineSource({
  name: 'authLogs',
  relation: 'auth_logs',
  description: 'GoTrue log.',
  logflare: { names: ['gotrue.logs.prod'] },
  columns: { project: 'text', status: { type: 'integer', path: '$.status' } },
  projectColumn: 'project',
});

export default {
  sourceDefinitions: [authLogs],
  endpoints: [
    defineEndpoint({
      name: 'auth.statuses',
      params: { project: p.text() },
      sql: { duckdb: 'SELECT status, count(*) AS n FROM auth_logs WHERE project = $project GROUP BY 1 ORDER BY 1' },
      columns: { status: 'integer', n: 'integer' },
    }),
  ],
};
