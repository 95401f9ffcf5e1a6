import { createEndpoints } from '../api/create-endpoints';
import type { CliIO } from './io';
import { clockOf, duckdbOf, parseOptions, SOURCE_OPTIONS, TYPED_COLUMNS_OPTIONS } from './parse-options';
import { helpText } from './help';
import { HTTP_SERVER_OPTIONS, httpServerSettings, serveHttp } from './http-server-flags';
import { warnEmptySourceGlobs, warnMissingSources } from './warnings';
import { definedOnly } from './defined-only';
import { endpointSet } from '../definitions/registry';
import { commandConfig, endpointsOptionsOf } from './config-file';
import { combinedGlobs, combinedOptions } from './config-and-flags';
import { globFlagOptions, globsOfFlags, requireSomeGlobs } from './source-flags';
import { systemNow } from '../time/clock';
import { describeBudget, memoryBudget } from '../duckdb/memory-budget';
import { serverDrains } from './server-drains';

/** `log-endpoints serve`: the HTTP API over the given logs until SIGINT/SIGTERM. */
export async function serveCommand(argv: string[], io: CliIO): Promise<number> {
  // The --config first: its sources are what --source names and what the help lists.
  const { config, sources } = await commandConfig('serve', argv);
  const { values } = parseOptions('serve', argv, { ...SOURCE_OPTIONS, ...HTTP_SERVER_OPTIONS, ...TYPED_COLUMNS_OPTIONS, ...globFlagOptions(sources) });
  if (values.help) {
    io.stdout.write(helpText('serve', sources)!);
    return 0;
  }
  const settings = httpServerSettings('serve', values, io.env, config);
  const flagGlobs = globsOfFlags('serve', values, sources);
  const globs = combinedGlobs(flagGlobs, config.sources, sources);
  requireSomeGlobs('serve', globs, sources, settings.storage !== undefined);
  const options = combinedOptions('serve', { ...duckdbOf('serve', values), now: clockOf('serve', values.now), singleProject: values['single-project'], noCache: settings.noCache }, config);
  warnEmptySourceGlobs(io, values, sources);
  if (settings.storage === undefined) warnMissingSources(io, globs, sources, endpointSet(config.endpoints).list);
  // Log drains forward what ingest keeps: with a data dir only.
  const drains = serverDrains(settings.storage, io);
  const ep = await createEndpoints({
    ...endpointsOptionsOf(config),
    ...options,
    sources: globs,
    storage: settings.storage,
    limits: definedOnly(settings.limits),
    onWarning: (warning) => {
      io.stderr.write(`${systemNow().toISOString()} warning: ${warning.message}\n`);
      config.onWarning?.(warning);
    },
    ...drains.endpointsOptions,
  });
  const code = await serveHttp(ep, { ...settings, drains: await drains.open(ep) }, io, [
    `Memory budget ${describeBudget(memoryBudget(options.memoryLimit))}${config.duckdb?.memoryLimit ? `; queries' DuckDB: ${config.duckdb.memoryLimit} (the config's duckdb.memoryLimit)` : ''}.`,
    options.now ? `Every window is evaluated at ${options.now().toISOString()} (--now).` : null,
  ]);
  drains.close();
  return code;
}
