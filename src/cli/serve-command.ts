import { createEndpoints } from '../create-endpoints';
import type { CliIO } from './io';
import { clockOf, duckdbOf, parseOptions, SOURCE_OPTIONS, sourcesOf } from './parse-options';
import { HELP } from './help';
import { HTTP_SERVER_OPTIONS, httpServerSettings, serveHttp } from './http-server-flags';
import { warnEmptyGlobs } from './warnings';

const OPTIONS = { ...SOURCE_OPTIONS, ...HTTP_SERVER_OPTIONS } as const;

/** `log-endpoints serve`: the HTTP API over the given logs until SIGINT/SIGTERM. */
export async function serveCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions('serve', argv, OPTIONS);
  if (values.help) {
    io.stdout.write(HELP.serve!);
    return 0;
  }
  const settings = httpServerSettings('serve', values, io.env);
  const sources = sourcesOf('serve', values, settings.storage !== undefined);
  const now = clockOf('serve', values.now);
  const duckdb = duckdbOf('serve', values);
  warnEmptyGlobs(io, 'edge-logs', values['edge-logs']);
  warnEmptyGlobs(io, 'function-logs', values['function-logs']);
  if (settings.storage === undefined) {
    for (const [flag, globs] of [['--edge-logs', sources.edgeLogs], ['--function-logs', sources.functionEdgeLogs]] as const) {
      if (globs.length === 0) io.stderr.write(`warning: no ${flag} given: ${flag === '--edge-logs' ? 'logs.all and usage.api-counts' : 'functions.invocation-stats'} will answer no rows\n`);
    }
  }
  const ep = await createEndpoints({
    sources, storage: settings.storage, now, limits: settings.limits, duckdb, ...(settings.noCache ? { cache: false as const } : {}),
    onWarning: (warning) => io.stderr.write(`${new Date().toISOString()} warning: ${warning.message}\n`),
  });
  return serveHttp(ep, settings, io, [now ? `Every window is evaluated at ${now().toISOString()} (--now).` : null]);
}
