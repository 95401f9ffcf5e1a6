import { createEndpoints } from '../api/create-endpoints';
import { isUnreachable } from '../engine/clickhouse/classify-error';
import { clickhouseEngine } from '../engine/clickhouse/clickhouse-engine';
import { clickhouseLoader } from '../engine/clickhouse/clickhouse-loader';
import type { ClickHouseTarget } from '../engine/clickhouse/options';
import type { SourceSet } from '../sources/source-set';
import { commandConfig, endpointsOptionsOf, type ConfigFile } from './config-file';
import { combinedOptions } from './config-and-flags';
import { helpText } from './help';
import type { CliIO } from './io';
import { clockOf, duckdbOf, integerOf, parseOptions } from './parse-options';
import { pairsBySource, sourceFromCli, tableFlagOptions } from './source-flags';
import { progressBar } from './progress-bar';
import { HTTP_SERVER_OPTIONS, httpServerSettings, serveHttp } from './http-server-flags';
import { UsageError } from './usage-error';
import { systemNow } from '../time/clock';
import { serverDrains } from './server-drains';

/** Where the tables are: every subcommand takes these. */
const TARGET_OPTIONS = {
  url: { type: 'string', multiple: true },
  user: { type: 'string' },
  password: { type: 'string' },
  database: { type: 'string' },
  cluster: { type: 'string' },
  table: { type: 'string', multiple: true },
  config: { type: 'string' },
  // The Supabase preset's sources (read with the --config: config-file.ts), for every subcommand.
  supabase: { type: 'boolean' },
} as const;

const INIT_OPTIONS = { ...TARGET_OPTIONS, 'on-cluster': { type: 'boolean' } } as const;

const LOAD_OPTIONS = {
  ...TARGET_OPTIONS,
  source: { type: 'string' },
  input: { type: 'string', multiple: true },
  threads: { type: 'string' },
  'memory-limit': { type: 'string' },
} as const;

const SERVE_OPTIONS = {
  ...TARGET_OPTIONS,
  ...HTTP_SERVER_OPTIONS,
  now: { type: 'string' },
  'batch-rows': { type: 'string' },
} as const;

/**
 * `log-endpoints clickhouse init|load|serve`: create the tables, copy log files in, serve the
 * endpoints computed by ClickHouse.
 */
export async function clickhouseCommand(argv: string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) {
    io.stderr.write(helpText('clickhouse')!);
    return 2;
  }
  // The --config first: its sources are what --source and --table name, and what the help lists.
  const { config, sources } = await commandConfig('clickhouse', argv);
  if (sub === '--help' || sub === '-h' || sub === 'help') return help(io, sources);
  switch (sub) {
    case 'init':
      return init(rest, io, sources);
    case 'load':
      return load(rest, io, sources);
    case 'serve':
      return serve(rest, io, config, sources);
    default:
      throw new UsageError(`Unknown clickhouse command "${sub}". Commands: init, load, serve.`, 'clickhouse');
  }
}

async function init(argv: string[], io: CliIO, sources: SourceSet): Promise<number> {
  const { values } = parseOptions('clickhouse', argv, { ...INIT_OPTIONS, ...tableFlagOptions(sources) });
  if (values.help) return help(io, sources);
  const targets = targetsOf(values, io, sources);
  if (values['on-cluster'] && !values.cluster) throw new UsageError('--on-cluster needs --cluster <name>.', 'clickhouse');
  for (const target of values['on-cluster'] ? targets.slice(0, 1) : targets) {
    const loader = clickhouseLoader(target);
    try {
      await loader.init({ onCluster: values['on-cluster'] });
    } finally {
      await loader.close();
    }
    const what = target.cluster ? `local and Distributed tables (cluster ${target.cluster})` : 'tables';
    io.stdout.write(`Created the ${what} in database ${target.database} on ${values['on-cluster'] ? `every server of ${target.cluster}` : target.url}.\n`);
  }
  return 0;
}

async function load(argv: string[], io: CliIO, sources: SourceSet): Promise<number> {
  const { values } = parseOptions('clickhouse', argv, { ...LOAD_OPTIONS, ...tableFlagOptions(sources) });
  if (values.help) return help(io, sources);
  const [target, ...more] = targetsOf(values, io, sources);
  if (more.length) throw new UsageError('load writes through one server: give one --url.', 'clickhouse');
  const source = sourceFromCli('clickhouse', values.source, sources);
  if (!values.input?.length) throw new UsageError('Give the log files to load: --input <glob> (NDJSON or Parquet).', 'clickhouse');
  const loader = clickhouseLoader({ ...target!, duckdb: duckdbOf('clickhouse', values) });
  const bar = progressBar(io.stderr, 'Loading');
  try {
    const result = await loader.load(source.name, values.input, { onProgress: (p) => bar.update(p.filesDone, p.files) });
    bar.finish();
    // Not an error (a cron job may find nothing new), but likely a typo when run by hand.
    if (result.files.length === 0) io.stderr.write(`No file matched --input ${values.input.join(' ')}.\n`);
    io.stdout.write(
      `Loaded ${result.rows} events from ${result.files.length - result.failed} of ${result.files.length} files into ${target!.database}.${target!.tables?.[source.name] ?? source.clickhouse.table}.\n`,
    );
    if (result.skipped) io.stdout.write(`${result.skipped} lines were not events (broken JSON or no readable timestamp) and were skipped.\n`);
    for (const file of result.files) if (file.error) io.stderr.write(`could not read ${file.file}: ${file.error}\n`);
    return result.failed ? 1 : 0;
  } finally {
    bar.finish();
    await loader.close();
  }
}

async function serve(argv: string[], io: CliIO, config: ConfigFile, sources: SourceSet): Promise<number> {
  const { values } = parseOptions('clickhouse', argv, { ...SERVE_OPTIONS, ...tableFlagOptions(sources) });
  if (values.help) return help(io, sources);
  const [target, ...more] = targetsOf(values, io, sources);
  if (more.length) throw new UsageError('serve queries through one server: give one --url (a load balancer in front of the cluster, for instance).', 'clickhouse');
  if (values['data-dir'] === undefined && values['batch-rows'] !== undefined) {
    throw new UsageError('--batch-rows is for ingest: add --data-dir <dir>.', 'clickhouse');
  }
  const settings = httpServerSettings('clickhouse', values, io.env, config);
  // Ingest keeps events in the data dir and ships each closed segment into the same tables.
  const batchRows = values['batch-rows'] === undefined ? undefined : integerOf('clickhouse', 'batch-rows', values['batch-rows'], 0, 1);
  if (settings.storage?.clickhouse) throw new UsageError('clickhouse serve ships to its --url: leave storage.clickhouse out of the --config.', 'clickhouse');
  const storage = settings.storage && { ...settings.storage, clickhouse: { ...target!, batchRows } };
  const { duckdb: _duckdb, ...options } = combinedOptions('clickhouse', { now: clockOf('clickhouse', values.now), noCache: settings.noCache }, config);
  const engine = clickhouseEngine({ ...target!, ...settings.limits });
  const { sources: _globs, ...fromConfig } = endpointsOptionsOf(config);
  // Log drains forward what ingest keeps, as with serve.
  const drains = serverDrains(storage, io);
  const ep = await createEndpoints({
    ...fromConfig,
    ...options,
    sources: {},
    engine,
    storage,
    onWarning: (warning) => {
      io.stderr.write(`${systemNow().toISOString()} warning: ${warning.message}\n`);
      config.onWarning?.(warning);
    },
    ...drains.endpointsOptions,
  });
  const now = options.now;
  let away = false;
  try {
    await ep.ping();
  } catch (error) {
    // With a data dir, ingest is what must not stop: events wait in it until ClickHouse is back.
    if (!storage || !isUnreachable((error as Error)?.cause ?? error)) {
      await ep.close();
      throw error;
    }
    away = true;
  }
  const intro = [
    now ? `Every window is evaluated at ${now().toISOString()} (--now).` : null,
    `Serving ClickHouse ${target!.database} at ${target!.url}`,
    away ? `ClickHouse at ${target!.url} cannot be reached yet: queries answer 503 until it can; ingested events wait in ${storage!.dataDir} and are shipped once it is back.` : null,
  ];
  const code = await serveHttp(ep, { ...settings, drains: await drains.open(ep) }, io, intro, ' until shipped to ClickHouse');
  drains.close();
  return code;
}

function help(io: CliIO, sources: SourceSet): number {
  io.stdout.write(helpText('clickhouse', sources)!);
  return 0;
}

/**
 * One target per `--url`, with the command's sources and their tables (`--table <source>=<name>`,
 * the descriptors' own flags such as `--edge-table`); credentials also from CLICKHOUSE_USER /
 * CLICKHOUSE_PASSWORD.
 */
function targetsOf(
  values: { url?: string[]; user?: string; password?: string; database?: string; cluster?: string; table?: string[] } & Readonly<Record<string, unknown>>,
  io: CliIO,
  sources: SourceSet,
): Array<ClickHouseTarget & { url: string }> {
  if (!values.url?.length) throw new UsageError('Give the server: --url http://host:8123.', 'clickhouse');
  const tables: Record<string, string> = {};
  const given = [...pairsBySource('clickhouse', 'table', values.table, sources)];
  for (const d of sources.list) if (d.cli.tableFlag && typeof values[d.cli.tableFlag] === 'string') given.push([d.name, [values[d.cli.tableFlag] as string]]);
  for (const [name, names] of given) {
    for (const table of names) {
      if (tables[name] !== undefined && tables[name] !== table) throw new UsageError(`The table of ${name} is given twice: ${tables[name]} and ${table}.`, 'clickhouse');
      tables[name] = table;
    }
  }
  return values.url.map((url) => {
    if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url must be an http(s) URL such as http://127.0.0.1:8123, not "${url}".`, 'clickhouse');
    return {
      url,
      username: values.user ?? io.env.CLICKHOUSE_USER,
      password: values.password ?? io.env.CLICKHOUSE_PASSWORD,
      database: values.database ?? 'default',
      ...(values.cluster ? { cluster: values.cluster } : {}),
      tables,
      sourceDefinitions: sources.list,
    };
  });
}
