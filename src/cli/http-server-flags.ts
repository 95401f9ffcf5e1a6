import type { Endpoints } from '../api/create-endpoints';
import type { StorageOptions } from '../managed/storage-options';
import type { ConfigFile } from './config-file';
import { agreed, combinedStorage } from './config-and-flags';
import type { CliIO } from './io';
import { apiKeysOf, ingestKeysOf, integerOf } from './parse-options';
import { runServer } from './run-server';
import { UsageError } from './usage-error';
import { supabaseKeys } from './supabase-flag';
import type { Drains } from '../drains/open-drains';

/**
 * The flags of every command that serves the HTTP API (`serve`, `clickhouse serve`): one list and
 * one reading of them, so both servers take the same options and say the same things.
 */
export const HTTP_SERVER_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'api-key': { type: 'string', multiple: true },
  'no-auth': { type: 'boolean' },
  'base-path': { type: 'string' },
  'cors-origin': { type: 'string', multiple: true },
  'no-cache': { type: 'boolean' },
  'max-concurrent-queries': { type: 'string' },
  'max-queued-queries': { type: 'string' },
  'query-timeout-ms': { type: 'string' },
  dashboard: { type: 'boolean' },
  'open-metrics': { type: 'boolean' },
  'data-dir': { type: 'string' },
  'ingest-key': { type: 'string', multiple: true },
  'otlp-default-source': { type: 'string' },
  'wal-segment-bytes': { type: 'string' },
  'wal-segment-age-ms': { type: 'string' },
  'shutdown-grace': { type: 'string' },
  // Read with the --config (config-file.ts): the preset's sources are named by the other flags.
  supabase: { type: 'boolean' },
} as const;

/** The parsed values of those flags (what `parseOptions` gives for them), and `serve`'s `--no-typed-columns`. */
interface Values {
  port?: string;
  host?: string;
  'api-key'?: string[];
  'no-auth'?: boolean;
  'base-path'?: string;
  'cors-origin'?: string[];
  'no-cache'?: boolean;
  'max-concurrent-queries'?: string;
  'max-queued-queries'?: string;
  'query-timeout-ms'?: string;
  dashboard?: boolean;
  'open-metrics'?: boolean;
  'data-dir'?: string;
  'ingest-key'?: string[];
  'otlp-default-source'?: string;
  'wal-segment-bytes'?: string;
  'wal-segment-age-ms'?: string;
  'no-typed-columns'?: boolean;
  'shutdown-grace'?: string;
  supabase?: boolean;
}

/** What the HTTP server flags ask for, checked. */
export interface HttpServerSettings {
  command: string;
  host: string;
  port: number;
  apiKeys: string[];
  ingestKeys: string[];
  noAuth: boolean;
  basePath: string | undefined;
  cors: { origin: string | string[] } | undefined;
  dashboard: boolean;
  /** `/metrics` without a key (`--open-metrics`). */
  openMetrics: boolean;
  /** Where OTLP log records naming no source go (`--otlp-default-source`). */
  otlpDefaultSource: string | undefined;
  shutdownGraceMs: number;
  noCache: boolean;
  /** The limits the flags and the config set (the library's defaults for the others). */
  limits: { maxConcurrentQueries?: number; maxQueuedQueries?: number; queryTimeoutMs?: number };
  /** Managed storage (`--data-dir` and the config's `storage`, combined), when asked for. */
  storage: StorageOptions | undefined;
  /** Log drains, served on Studio's routes (`serve` opens them with a data dir). */
  drains?: Drains;
}

/**
 * Reads and checks the HTTP server flags, combined with a `--config`'s keys, `storage` and
 * `limits` by the one rule (config-and-flags.ts); a wrong one is a UsageError naming it.
 */
export function httpServerSettings(command: string, values: Values, env: CliIO['env'], config: Pick<ConfigFile, 'apiKeys' | 'ingestKeys' | 'storage' | 'limits'> = {}): HttpServerSettings {
  const flagKeys = {
    apiKeys: [...new Set([...apiKeysOf(values['api-key'], env), ...(config.apiKeys ?? [])])],
    ingestKeys: [...new Set([...ingestKeysOf(values['ingest-key'], env), ...(config.ingestKeys ?? [])])],
  };
  // Supabase's two tokens, from the environment its docker-compose already sets.
  const { apiKeys, ingestKeys } = values.supabase ? supabaseKeys(env, flagKeys) : flagKeys;
  if (values.supabase && values['data-dir'] === undefined && config.storage === undefined) {
    throw new UsageError('--supabase keeps the events Vector sends: add --data-dir <dir> (or storage in the --config).', command);
  }
  if (values['data-dir'] === undefined && config.storage === undefined && ingestKeys.length > 0) {
    throw new UsageError('Ingest keys need somewhere to keep events: add --data-dir <dir> (or storage in the --config).', command);
  }
  if (apiKeys.length === 0 && ingestKeys.length === 0 && !values['no-auth']) {
    const supabase = values.supabase ? ' (with --supabase, LOGFLARE_PRIVATE_ACCESS_TOKEN and LOGFLARE_PUBLIC_ACCESS_TOKEN)' : '';
    throw new UsageError(`No API key: pass --api-key <key> or set LOG_ENDPOINTS_API_KEYS${supabase} (or --no-auth to serve without keys).`, command);
  }
  const limit = (flag: 'max-concurrent-queries' | 'max-queued-queries' | 'query-timeout-ms', option: 'maxConcurrentQueries' | 'maxQueuedQueries' | 'queryTimeoutMs', min: number) =>
    agreed(command, flag, values[flag] === undefined ? undefined : integerOf(command, flag, values[flag], 0, min), `limits.${option}`, config.limits?.[option]);
  const origins = values['cors-origin'];
  const settings: HttpServerSettings = {
    command,
    host: values.host ?? '127.0.0.1',
    port: integerOf(command, 'port', values.port, 4000, 0, 65535),
    apiKeys,
    ingestKeys,
    noAuth: values['no-auth'] === true,
    basePath: values['base-path'],
    cors: origins ? { origin: origins.includes('*') ? '*' : origins } : undefined,
    dashboard: values.dashboard === true,
    openMetrics: values['open-metrics'] === true,
    otlpDefaultSource: values['otlp-default-source'],
    shutdownGraceMs: secondsOf(command, values['shutdown-grace'], 30) * 1000,
    noCache: values['no-cache'] === true,
    limits: {
      maxConcurrentQueries: limit('max-concurrent-queries', 'maxConcurrentQueries', 1),
      maxQueuedQueries: limit('max-queued-queries', 'maxQueuedQueries', 0),
      queryTimeoutMs: limit('query-timeout-ms', 'queryTimeoutMs', 1),
    },
    storage: undefined,
  };
  // Last: every other flag is checked before the data dir is created.
  settings.storage = combinedStorage(command, values, config.storage);
  return settings;
}

/**
 * Serves `ep` as the settings say until a shutdown signal, and prints where: `intro` lines first
 * (what is served), then the address, the dashboard and the ingest route when they are on.
 */
export function serveHttp(ep: Endpoints, settings: HttpServerSettings, io: CliIO, intro: (string | null)[], ingestNote = ''): Promise<number> {
  // Damaged bytes set aside are told as warnings (onWarning) when they are found.
  for (const cut of ep.storage?.recovered ?? []) {
    if (cut.cutBytes > 0) io.stderr.write(`Recovered ${cut.path}: cut ${cut.cutBytes} bytes of a write that was never acknowledged (the process stopped mid-write).\n`);
  }
  const { apiKeys, ingestKeys, noAuth } = settings;
  const base = settings.basePath ?? '';
  return runServer(
    ep,
    {
      host: settings.host,
      port: settings.port,
      apiKeys,
      ingestKeys,
      auth: noAuth ? false : undefined,
      basePath: settings.basePath,
      cors: settings.cors,
      dashboard: settings.dashboard,
      openMetrics: settings.openMetrics,
      otlpDefaultSource: settings.otlpDefaultSource,
      shutdownGraceMs: settings.shutdownGraceMs,
      ...(settings.drains ? { drains: settings.drains } : {}),
    },
    io,
    ({ url }) => {
      const keys = noAuth ? 'no key needed' : `${apiKeys.length} key${apiKeys.length === 1 ? '' : 's'}`;
      const ingest = ingestKeys.length ? `, ${ingestKeys.length} ingest key${ingestKeys.length === 1 ? '' : 's'}` : '';
      for (const line of intro) if (line !== null) io.stdout.write(`${line}\n`);
      io.stdout.write(`Listening on ${url}${base} (${keys}${ingest})\n`);
      if (settings.dashboard) io.stdout.write(`Dashboard: ${url}${base}/\n`);
      if (ep.storage) {
        const [first, ...more] = ep.storage.sources.filter((n) => n.id !== null).map((n) => n.name);
        const others = more.length ? ` (or ${more.join(', ')})` : '';
        io.stdout.write(`Ingest: POST ${url}${base}/api/logs?source_name=${first ?? '<source>'}${others}, kept in ${ep.storage.dataDir}${ingestNote}\n`);
      }
    },
  );
}

/** `--shutdown-grace <seconds>`: 0 or more, fractions allowed. */
function secondsOf(command: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+(\.\d+)?$/.test(text) || Number(text) > 86_400) {
    throw new UsageError(`--shutdown-grace must be a number of seconds from 0 to 86400, not "${text}".`, command);
  }
  return Number(text);
}
