// One process, one definition of a source's stored rollup (as a deployment changes it between runs):
// `node --import tsx rollup-definition-child.ts <1|2> <compact|ask> <inputs glob> <dataset>`.
// Version 1 counts statuses >= 500 as errors, version 2 statuses >= 400, in the rollup and in the
// endpoint's base statement alike. Prints the endpoint's answer as JSON ({ via, rows }).
import { compactLogs, createEndpoints, defineEndpoint, defineSource, p } from '../../src/index';

const [version, action, inputs, dataset] = process.argv.slice(2) as [string, string, string, string];
const threshold = version === '1' ? 500 : 400;

const gateLogs = defineSource({
  name: 'definitionGateLogs',
  relation: 'definition_gate_logs',
  logflare: { names: ['definition.gate.logs.test'] },
  columns: { project: 'text', status: { type: 'integer', path: '$.status' } },
  projectColumn: 'project',
  looksLike: (event) => typeof event.project === 'string',
  rollups: {
    definition_gate_hourly: {
      sql: `SELECT date_trunc('hour', timestamp) AS hour, project, count(*) AS count,
                   count(*) FILTER (WHERE status >= ${threshold}) AS errors
            FROM definition_gate_logs GROUP BY ALL ORDER BY project, hour`,
    },
  },
});

const errors = defineEndpoint({
  name: 'definition-gate.errors',
  params: { project: p.text() },
  sql: {
    duckdb: `SELECT 'raw' AS via, date_trunc('hour', timestamp) AS hour, count(*) AS count, count(*) FILTER (WHERE status >= ${threshold}) AS errors
             FROM definition_gate_logs WHERE project = $project GROUP BY 2 ORDER BY 2`,
  },
  variants: {
    rollup: { duckdb: `SELECT 'rollup' AS via, hour, sum(count) AS count, sum(errors) AS errors FROM definition_gate_hourly WHERE project = $project GROUP BY 2 ORDER BY 2` },
  },
  variant: () => 'rollup',
  columns: { via: 'text', hour: 'timestamp', count: 'integer', errors: 'integer' },
});

const ep = await createEndpoints({ sources: { definitionGateLogs: dataset }, sourceDefinitions: [gateLogs], endpoints: [errors], now: () => new Date('2026-11-21T12:00:00Z'), cache: false });
try {
  if (action === 'compact') await compactLogs({ source: 'definitionGateLogs', sourceDefinitions: [gateLogs], inputs, outDir: dataset });
  const rows = (await ep.query('definition-gate.errors', { project: 'abc' })).result as Array<Record<string, unknown>>;
  const via = [...new Set(rows.map((r) => r.via))];
  process.stdout.write(`${JSON.stringify({ via: via.length === 1 ? via[0] : via, rows: rows.map(({ via: _via, ...rest }) => rest) })}\n`);
} finally {
  await ep.close();
}
