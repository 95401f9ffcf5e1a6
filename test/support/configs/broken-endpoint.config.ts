// A `--config` module whose endpoint cannot work: its SQL uses a parameter it does not declare.
import { defineEndpoint, p } from '../../../src/index';

export default {
  sources: {},
  endpoints: [
    defineEndpoint({
      name: 'broken.one',
      params: { project: p.text() },
      sql: { duckdb: 'SELECT count(*) AS n FROM edge_logs WHERE project = $project AND id = $id' },
      columns: { n: 'integer' },
    }),
  ],
};
