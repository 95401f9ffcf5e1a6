// A `--config` module as a user writes one (test/cli-config.test.ts): createEndpoints options with
// an endpoint of their own and a source of their own. The logs folder comes from the test.
import { defineEndpoint, defineSource, p } from '../../../src/index';

const logs = process.env.LE_TEST_LOGS ?? 'logs';

const authLogs = defineSource({
  name: 'authLogs',
  relation: 'auth_logs',
  logflare: { names: ['gotrue.logs.prod'] },
  columns: { project: 'text', status: { type: 'integer', path: '$.status' } },
  projectColumn: 'project',
});

export default {
  sources: { edgeLogs: `${logs}/edge/*.ndjson`, authLogs: `${logs}/auth/*.ndjson` },
  sourceDefinitions: [authLogs],
  endpoints: [
    defineEndpoint({
      name: 'requests.by-path',
      params: { project: p.text(), min_status: p.integer().default(0) },
      sql: { duckdb: 'SELECT request_path AS path, count(*) AS requests FROM edge_logs WHERE project = $project AND status_code >= $min_status GROUP BY 1 ORDER BY 2 DESC, 1' },
      cache: { ttlSeconds: 60, warmingSeconds: 0 },
      columns: { path: 'text', requests: 'integer' },
    }),
    defineEndpoint({
      name: 'auth.statuses',
      params: { project: p.text() },
      sql: { duckdb: 'SELECT status, count(*) AS n FROM auth_logs WHERE project = $project GROUP BY 1 ORDER BY 1' },
      columns: { status: 'integer', n: 'integer' },
    }),
  ],
  apiKeys: ['config-key'],
};
