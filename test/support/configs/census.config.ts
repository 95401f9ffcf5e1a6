// A `--config` module with one more endpoint: how many gateway events are read, how many distinct
// ids, and how many ids are read more than once (exactly once: events === ids, doubled === 0).
import { defineEndpoint } from '../../../src/index';

export default {
  endpoints: [
    defineEndpoint({
      name: 'census.edge',
      sql: {
        duckdb: `SELECT count(*)::BIGINT AS events, count(DISTINCT id)::BIGINT AS ids,
                        (SELECT count(*) FROM (SELECT id FROM edge_logs GROUP BY id HAVING count(*) > 1))::BIGINT AS doubled
                 FROM edge_logs`,
      },
      columns: { events: 'integer', ids: 'integer', doubled: 'integer' },
    }),
  ],
};
