import { createEndpoints } from '../create-endpoints';
import type { CliIO } from './io';
import { apiKeysOf, clockOf, duckdbOf, integerOf, parseOptions, SOURCE_OPTIONS, sourcesOf } from './parse-options';
import { HELP } from './help';
import { runServer } from './run-server';
import { UsageError } from './usage-error';

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
  'shutdown-grace': { type: 'string' },
} as const;

/** `log-endpoints serve`: the HTTP API over the given logs until SIGINT/SIGTERM. */
export async function serveCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions('serve', argv, OPTIONS);
  if (values.help) {
    io.stdout.write(HELP.serve!);
    return 0;
  }
  const sources = sourcesOf('serve', values);
  const apiKeys = apiKeysOf(values['api-key'], io.env);
  if (apiKeys.length === 0 && !values['no-auth']) {
    throw new UsageError('No API key: pass --api-key <key> or set LOG_ENDPOINTS_API_KEYS (or --no-auth to serve without keys).', 'serve');
  }
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
  const ep = await createEndpoints({ sources, now, limits, duckdb, ...(values['no-cache'] ? { cache: false as const } : {}) });
  return runServer(
    ep,
    { host, port, apiKeys, auth: values['no-auth'] ? false : undefined, basePath: values['base-path'], cors, shutdownGraceMs },
    io,
    ({ url }) => {
      const keys = values['no-auth'] ? 'no key needed' : `${apiKeys.length} key${apiKeys.length === 1 ? '' : 's'}`;
      const at = now ? `Every window is evaluated at ${now().toISOString()} (--now).\n` : '';
      io.stdout.write(`${at}Listening on ${url}${values['base-path'] ?? ''} (${keys})\n`);
    },
  );
}

/** `--shutdown-grace <seconds>`: 0 or more, fractions allowed. */
function secondsOf(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+(\.\d+)?$/.test(text) || Number(text) > 86_400) {
    throw new UsageError(`--shutdown-grace must be a number of seconds from 0 to 86400, not "${text}".`, 'serve');
  }
  return Number(text);
}
