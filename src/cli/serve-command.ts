import { createEndpoints } from '../create-endpoints';
import type { CliIO } from './io';
import { apiKeysOf, clockOf, duckdbOf, ingestKeysOf, integerOf, parseOptions, SOURCE_OPTIONS, sourcesOf } from './parse-options';
import { HELP } from './help';
import { runServer } from './run-server';
import { UsageError } from './usage-error';
import { warnEmptyGlobs } from './warnings';

const OPTIONS = {
  ...SOURCE_OPTIONS,
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
  'data-dir': { type: 'string' },
  'ingest-key': { type: 'string', multiple: true },
  'wal-segment-bytes': { type: 'string' },
  'wal-segment-age-ms': { type: 'string' },
  'shutdown-grace': { type: 'string' },
} as const;

/** `log-endpoints serve`: the HTTP API over the given logs until SIGINT/SIGTERM. */
export async function serveCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions('serve', argv, OPTIONS);
  if (values.help) {
    io.stdout.write(HELP.serve!);
    return 0;
  }
  const dataDir = values['data-dir'];
  const sources = sourcesOf('serve', values, dataDir !== undefined);
  const apiKeys = apiKeysOf(values['api-key'], io.env);
  const ingestKeys = ingestKeysOf(values['ingest-key'], io.env);
  if (ingestKeys.length > 0 && dataDir === undefined) {
    throw new UsageError('Ingest keys need somewhere to keep events: add --data-dir <dir>.', 'serve');
  }
  if (apiKeys.length === 0 && ingestKeys.length === 0 && !values['no-auth']) {
    throw new UsageError('No API key: pass --api-key <key> or set LOG_ENDPOINTS_API_KEYS (or --no-auth to serve without keys).', 'serve');
  }
  const storage = dataDir === undefined ? undefined : {
    dataDir,
    maxSegmentBytes: optionalInteger('wal-segment-bytes', values['wal-segment-bytes']),
    maxSegmentAgeMs: optionalInteger('wal-segment-age-ms', values['wal-segment-age-ms']),
  };
  const port = integerOf('serve', 'port', values.port, 4000, 0, 65535);
  const host = values.host ?? '127.0.0.1';
  const now = clockOf('serve', values.now);
  const limits = {
    maxConcurrentQueries: integerOf('serve', 'max-concurrent-queries', values['max-concurrent-queries'], 4, 1),
    maxQueuedQueries: integerOf('serve', 'max-queued-queries', values['max-queued-queries'], 64, 0),
    queryTimeoutMs: integerOf('serve', 'query-timeout-ms', values['query-timeout-ms'], 30_000, 1),
  };
  const cors = values['cors-origin'] ? { origin: values['cors-origin'].includes('*') ? '*' : values['cors-origin'] } : undefined;
  const duckdb = duckdbOf('serve', values);
  const shutdownGraceMs = secondsOf(values['shutdown-grace'], 30) * 1000;
  warnEmptyGlobs(io, 'edge-logs', values['edge-logs']);
  warnEmptyGlobs(io, 'function-logs', values['function-logs']);
  if (dataDir === undefined) {
    for (const [flag, globs] of [['--edge-logs', sources.edgeLogs], ['--function-logs', sources.functionEdgeLogs]] as const) {
      if (globs.length === 0) io.stderr.write(`warning: no ${flag} given: ${flag === '--edge-logs' ? 'logs.all and usage.api-counts' : 'functions.invocation-stats'} will answer no rows\n`);
    }
  }
  const ep = await createEndpoints({
    sources, storage, now, limits, duckdb, ...(values['no-cache'] ? { cache: false as const } : {}),
    onWarning: (warning) => io.stderr.write(`${new Date().toISOString()} warning: ${warning.message}\n`),
  });
  for (const cut of ep.storage?.recovered ?? []) {
    io.stderr.write(`Recovered ${cut.path}: cut ${cut.cutBytes} bytes of a write that was never acknowledged (the process stopped mid-write).\n`);
  }
  return runServer(
    ep,
    {
      host, port, apiKeys, ingestKeys, auth: values['no-auth'] ? false : undefined, basePath: values['base-path'], cors,
      dashboard: values.dashboard, shutdownGraceMs,
    },
    io,
    ({ url }) => {
      const keys = values['no-auth'] ? 'no key needed' : `${apiKeys.length} key${apiKeys.length === 1 ? '' : 's'}`;
      const ingest = ingestKeys.length ? `, ${ingestKeys.length} ingest key${ingestKeys.length === 1 ? '' : 's'}` : '';
      const at = now ? `Every window is evaluated at ${now().toISOString()} (--now).\n` : '';
      io.stdout.write(`${at}Listening on ${url}${values['base-path'] ?? ''} (${keys}${ingest})\n`);
      if (values.dashboard) io.stdout.write(`Dashboard: ${url}${values['base-path'] ?? ''}/\n`);
      if (ep.storage) {
        io.stdout.write(`Ingest: POST ${url}${values['base-path'] ?? ''}/api/logs?source_name=cloudflare.logs.prod (or deno-relay-logs), kept in ${ep.storage.dataDir}\n`);
      }
    },
  );
}

function optionalInteger(name: string, text: string | undefined): number | undefined {
  return text === undefined ? undefined : integerOf('serve', name, text, 0, 1);
}

/** `--shutdown-grace <seconds>`: 0 or more, fractions allowed. */
function secondsOf(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+(\.\d+)?$/.test(text) || Number(text) > 86_400) {
    throw new UsageError(`--shutdown-grace must be a number of seconds from 0 to 86400, not "${text}".`, 'serve');
  }
  return Number(text);
}
