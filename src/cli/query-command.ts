import { createEndpoints } from '../api/create-endpoints';
import { arrowToIpcStream } from '../rows/to-arrow';
import { rowsToCsv } from '../rows/to-csv';
import { rowsToNdjson } from '../rows/to-ndjson';
import { formatTable } from './format-table';
import { helpText } from './help';
import type { CliIO } from './io';
import { clockOf, duckdbOf, parseOptions, SOURCE_OPTIONS } from './parse-options';
import { UsageError } from './usage-error';
import { commandConfig, endpointsOptionsOf } from './config-file';
import { combinedGlobs, combinedOptions } from './config-and-flags';
import { globFlagOptions, globsOfFlags, requireSomeGlobs } from './source-flags';
import { warnEmptySourceGlobs, warnMissingSources } from './warnings';
import { endpointSet } from '../definitions/registry';
import { stringifyExactJson } from '../util/exact-json';

const FORMATS = ['table', 'json', 'csv', 'ndjson', 'arrow'] as const;
type Format = (typeof FORMATS)[number];

const OPTIONS = {
  ...SOURCE_OPTIONS,
  param: { type: 'string', short: 'p', multiple: true },
  format: { type: 'string', short: 'f' },
} as const;

/** `log-endpoints query <name|uuid>`: one endpoint's rows on stdout. */
export async function queryCommand(argv: string[], io: CliIO): Promise<number> {
  const { config, sources } = await commandConfig('query', argv);
  const { values, positionals } = parseOptions('query', argv, { ...OPTIONS, ...globFlagOptions(sources) }, 1);
  if (values.help) {
    io.stdout.write(helpText('query', sources)!);
    return 0;
  }
  const nameOrId = positionals[0];
  if (!nameOrId) throw new UsageError('Name the endpoint: log-endpoints query <name|uuid> --param k=v ...', 'query');
  const format = (values.format ?? 'table') as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, not "${values.format}".`, 'query');
  if (format === 'arrow' && io.stdout.isTTY) throw new UsageError('--format arrow writes binary: redirect it to a file (> rows.arrow).', 'query');
  const params = paramsOf(values.param ?? []);
  const globs = combinedGlobs(globsOfFlags('query', values, sources), config.sources, sources);
  requireSomeGlobs('query', globs, sources, false);
  const options = combinedOptions('query', { ...duckdbOf('query', values), now: clockOf('query', values.now), singleProject: values['single-project'] }, config);
  warnEmptySourceGlobs(io, values, sources);
  // No cache for a one-off query: nothing to reuse, and no warming timers to wait for.
  const ep = await createEndpoints({
    ...endpointsOptionsOf(config),
    ...options,
    sources: globs,
    cache: false,
    onWarning: (warning) => io.stderr.write(`warning: ${warning.message}\n`),
  });
  // The endpoint asked for, when it is known: an unknown one is told by the query itself.
  const asked = endpointSet(config.endpoints).list.filter((d) => d.name === nameOrId || d.id === nameOrId.toLowerCase());
  warnMissingSources(io, globs, sources, asked);
  try {
    if (format === 'arrow') {
      io.stdout.write(arrowToIpcStream((await ep.query(nameOrId, params, { format: 'arrow' })).table));
      return 0;
    }
    const answer = await ep.query(nameOrId, params);
    const columns = ep.definitions.find((d) => d.name === answer.endpoint.name)!.columns;
    if (format === 'table') io.stdout.write(formatTable(columns, answer.result));
    if (format === 'json') io.stdout.write(`${stringifyExactJson({ result: answer.result }, 2)}\n`);
    if (format === 'csv') io.stdout.write(rowsToCsv(columns, answer.result));
    if (format === 'ndjson') io.stdout.write(rowsToNdjson(columns, answer.result));
    return 0;
  } finally {
    await ep.close();
  }
}

/** `k=v` pairs; the value may contain `=`, an empty value means "not given". */
function paramsOf(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--param takes name=value, not "${pair}".`, 'query');
    const name = pair.slice(0, eq);
    if (name in out) throw new UsageError(`Parameter "${name}" is given more than once.`, 'query');
    out[name] = pair.slice(eq + 1);
  }
  return out;
}
