import { SUPABASE_SOURCES } from '../sources/supabase/supabase-sources';
import type { EndpointsOptions } from './public-types';

/**
 * Options that make an instance answer self-hosted Supabase as Logflare does (docs/supabase.md):
 * the sources of every feed Vector ships, one project (Studio sends `project=default`), no tier
 * window (Studio sends no `project_tier`: the Explorer's ranges are answered whole), `logs.all`
 * sandboxable in the BigQuery dialect (what Studio's Logs pages send) over a table per source,
 * and answers in Logflare's wire format. Spread it into the options; any key can be overridden.
 * `log-endpoints serve --supabase` is the same.
 *
 * @example
 * const ep = await createEndpoints({ ...supabasePreset, storage: { dataDir: '/data' } });
 */
export const supabasePreset = Object.freeze({
  sourceDefinitions: SUPABASE_SOURCES,
  singleProject: true,
  tierWindow: false,
  sandboxable: ['logs.all'],
  sqlDialect: 'bigquery',
  wireFormat: 'logflare',
} as const satisfies EndpointsOptions);
