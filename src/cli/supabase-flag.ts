import { supabasePreset } from '../api/supabase-preset';
import type { EndpointsOptions } from '../api/public-types';
import { UsageError } from './usage-error';

/** Whether a command line asks for the Supabase preset (`--supabase`), read before its other flags. */
export function asksSupabase(argv: readonly string[]): boolean {
  return argv.includes('--supabase');
}

/**
 * A `--config` with `--supabase` on top (docs/supabase.md): its sources and sandboxable endpoints
 * add to the config's, like every list (docs/cli.md, "--config and flags"); one project, no tier
 * window, the BigQuery dialect and Logflare's wire format are set, and a config that sets them otherwise is a
 * usage error naming both.
 *
 * @example
 * withSupabase('serve', {}).sqlDialect; // 'bigquery'
 */
export function withSupabase<C extends EndpointsOptions>(command: string, config: C): C {
  const set = <K extends 'singleProject' | 'tierWindow' | 'sqlDialect' | 'wireFormat'>(key: K): EndpointsOptions[K] => {
    const value = supabasePreset[key] as EndpointsOptions[K];
    if (config[key] !== undefined && config[key] !== value) {
      throw new UsageError(`--supabase sets ${key} to ${JSON.stringify(value)}, and the config's ${key} is ${JSON.stringify(config[key])}: leave it out of the config.`, command);
    }
    return value;
  };
  return {
    ...config,
    sourceDefinitions: [...supabasePreset.sourceDefinitions, ...(config.sourceDefinitions ?? [])],
    sandboxable: [...new Set([...supabasePreset.sandboxable, ...(config.sandboxable ?? [])])],
    singleProject: set('singleProject'),
    tierWindow: set('tierWindow'),
    sqlDialect: set('sqlDialect'),
    wireFormat: set('wireFormat'),
  };
}

/**
 * The keys Supabase's docker-compose already gives its `analytics` service, from the environment
 * when no flag gives keys of that kind: `LOGFLARE_PRIVATE_ACCESS_TOKEN` queries (what Studio
 * sends), `LOGFLARE_PUBLIC_ACCESS_TOKEN` only ingests (what Vector sends).
 */
export function supabaseKeys(env: NodeJS.ProcessEnv, flags: { apiKeys: readonly string[]; ingestKeys: readonly string[] }): { apiKeys: string[]; ingestKeys: string[] } {
  const token = (name: string) => (env[name] ?? '').trim();
  const query = token('LOGFLARE_PRIVATE_ACCESS_TOKEN');
  const ingest = token('LOGFLARE_PUBLIC_ACCESS_TOKEN');
  return {
    apiKeys: flags.apiKeys.length || !query ? [...flags.apiKeys] : [query],
    ingestKeys: flags.ingestKeys.length || !ingest ? [...flags.ingestKeys] : [ingest],
  };
}
