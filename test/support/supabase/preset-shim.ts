// TEMPORARY SHIM, TO DELETE AT MERGE: `supabasePreset` is not on main yet. When the implementation
// lands, delete this file and import `supabasePreset` from '../src/index' (and
// '../../src/index' in test/integration) in its users: test/studio-replay.test.ts and
// test/integration/studio-replay-clickhouse.test.ts.
import * as library from '../../../src/index';
import type { EndpointsOptions } from '../../../src/index';

/**
 * The library's `supabasePreset` when it exists. Until then an option `createEndpoints` refuses
 * by name, so every test that uses it fails saying what it waits for.
 */
export const supabasePreset: Partial<EndpointsOptions> =
  ((library as Record<string, unknown>).supabasePreset as Partial<EndpointsOptions> | undefined) ??
  ({ supabasePreset: 'not exported by src/index yet (the implementation this test waits for)' } as Partial<EndpointsOptions>);
