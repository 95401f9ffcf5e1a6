import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EndpointsOptions } from '../api/create-endpoints';
import type { SourceSet } from '../sources/source-set';
import { configPathOf, sourceSetOf } from './source-flags';
import { UsageError } from './usage-error';
import { asksSupabase, withSupabase } from './supabase-flag';

/**
 * What a `--config` module's default export holds: `createEndpoints` options (sources, your
 * endpoints and sources, cache, singleProject...) and, for `serve`, the keys it accepts.
 *
 * @example
 * // log-endpoints.config.mjs
 * import { defineEndpoint, p } from 'log-endpoints';
 * export default { sources: { edgeLogs: 'logs/edge/*.ndjson' }, endpoints: [defineEndpoint({ ... })], apiKeys: ['secret'] };
 */
export interface ConfigFile extends EndpointsOptions {
  /** Query keys, besides `--api-key` and `LOG_ENDPOINTS_API_KEYS`. */
  apiKeys?: string[];
  /** Ingest-only keys, besides `--ingest-key` and `LOG_ENDPOINTS_INGEST_KEYS`. */
  ingestKeys?: string[];
}

/** Loads `--config <file>` (an ES module; relative to the working directory); `{}` without one. */
export async function loadConfig(command: string, path: string | undefined, cwd = process.cwd()): Promise<ConfigFile> {
  if (path === undefined) return {};
  const file = resolve(cwd, path);
  if (!existsSync(file)) throw new UsageError(`--config ${path}: no such file.`, command);
  let module: { default?: unknown };
  try {
    module = await import(pathToFileURL(file).href);
  } catch (error) {
    // A definition that cannot work throws while the module loads: say which file, keep its message.
    const message = (error as Error)?.message ?? String(error);
    throw new UsageError(`--config ${path} failed to load: ${message}`, command);
  }
  const config = await module.default;
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new UsageError(`--config ${path} must export default an object of createEndpoints options (sources, endpoints, ...).`, command);
  }
  const { apiKeys, ingestKeys } = config as ConfigFile;
  for (const [name, keys] of [
    ['apiKeys', apiKeys],
    ['ingestKeys', ingestKeys],
  ] as const) {
    if (keys !== undefined && (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string' && k !== ''))) {
      throw new UsageError(`--config ${path}: ${name} must be a list of non-empty keys.`, command);
    }
  }
  return config as ConfigFile;
}

/**
 * A command's `--config` and the sources it declares (with the built-ins), read before the
 * command's own options: those name its sources. With `--help` a config that does not load only
 * leaves its sources out of the help.
 */
export async function commandConfig(command: string, argv: readonly string[], cwd = process.cwd()): Promise<{ config: ConfigFile; sources: SourceSet }> {
  const path = configPathOf(argv);
  let config: ConfigFile;
  try {
    config = await loadConfig(command, path, cwd);
  } catch (error) {
    if (!argv.includes('--help') && !argv.includes('-h')) throw error;
    config = {};
  }
  // The Supabase preset is a layer of options on top of the config: its sources are named below.
  if (asksSupabase(argv)) config = withSupabase(command, config);
  return { config, sources: sourceSetOf(config) };
}

/** The config's createEndpoints options (without the server's keys). */
export function endpointsOptionsOf(config: ConfigFile): EndpointsOptions {
  const { apiKeys: _apiKeys, ingestKeys: _ingestKeys, ...options } = config;
  return options;
}
