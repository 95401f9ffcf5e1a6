import { createEndpoints } from '../api/create-endpoints';
import type { CliIO } from './io';
import { clockOf, duckdbOf, parseOptions, SOURCE_OPTIONS, sourcesOf } from './parse-options';
import { HELP } from './help';
import { HTTP_SERVER_OPTIONS, httpServerSettings, serveHttp } from './http-server-flags';
import { warnEmptyGlobs } from './warnings';
import { endpointsOptionsOf, loadConfig } from './config-file';
import { definedOnly } from './defined-only';
import { systemNow } from '../time/clock';

const OPTIONS = { ...SOURCE_OPTIONS, ...HTTP_SERVER_OPTIONS } as const;

/** `log-endpoints serve`: the HTTP API over the given logs until SIGINT/SIGTERM. */
export async function serveCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions('serve', argv, OPTIONS);
  if (values.help) {
    io.stdout.write(HELP.serve!);
    return 0;
  }
  const config = await loadConfig('serve', values.config);
  const settings = httpServerSettings('serve', values, io.env, config);
  const storage = settings.storage ?? config.storage;
  const sources = sourcesOf('serve', values, storage !== undefined, config.sources);
  const now = clockOf('serve', values.now) ?? config.now;
  const duckdb = { ...config.duckdb, ...definedOnly(duckdbOf('serve', values)) };
  warnEmptyGlobs(io, 'edge-logs', values['edge-logs']);
  warnEmptyGlobs(io, 'function-logs', values['function-logs']);
  if (storage === undefined) {
    for (const [flag, globs] of [['--edge-logs', sources.edgeLogs!], ['--function-logs', sources.functionEdgeLogs!]] as const) {
      if (globs.length === 0) io.stderr.write(`warning: no ${flag} given: ${flag === '--edge-logs' ? 'logs.all and usage.api-counts' : 'functions.invocation-stats'} will answer no rows\n`);
    }
  }
  const ep = await createEndpoints({
    ...endpointsOptionsOf(config),
    sources, storage, now, limits: { ...config.limits, ...settings.limits }, duckdb,
    ...(settings.noCache ? { cache: false as const } : {}),
    ...(values['single-project'] ? { singleProject: true } : {}),
    onWarning: (warning) => {
      io.stderr.write(`${systemNow().toISOString()} warning: ${warning.message}\n`);
      config.onWarning?.(warning);
    },
  });
  return serveHttp(ep, settings, io, [now ? `Every window is evaluated at ${now().toISOString()} (--now).` : null]);
}
