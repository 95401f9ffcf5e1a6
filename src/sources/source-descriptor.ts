import { InvalidOptionError } from '../errors';
import type { ColumnType } from '../sql/column-types';
import { uuidFromName } from '../util/uuid-from-name';
import { typedHourlyName, typedHourlySql, typedPairName, typedPairsName, typedPairsSql } from './typed-hourly';

/**
 * A log source's name: the two built-ins (docs/semantics.md, "Log sources") or one declared with
 * `defineSource`.
 */
export type SourceName = 'edgeLogs' | 'functionEdgeLogs' | (string & {});

/** A column of a source's relation, as data. */
export interface SourceColumn {
  readonly name: string;
  readonly type: ColumnType;
  /** Where NDJSON events hold it: a top-level field (null), or a JSONPath inside `metadata`. */
  readonly path: string | null;
  /** The DuckDB type of the relation's column (and of the compacted Parquet column). */
  readonly duckdb: string;
  /** The ClickHouse type of the table's column. */
  readonly clickhouse: string;
}

/**
 * One log source, declared once: its names, the relation its SQL reads, its typed columns and
 * how NDJSON events map to them, its Parquet layout and its ClickHouse table. Everything else
 * (relations, ingest names, compaction order, table DDL, option and flag names) is derived.
 */
export interface SourceDescriptor<N extends string = string> {
  /** The key of `sources` in options (`edgeLogs`). */
  readonly name: N;
  /** The relation endpoints' SQL reads (`edge_logs`): Logflare's table name. */
  readonly relation: string;
  readonly description: string;
  /** Logflare source names ingest accepts for it, and its fixed UUID (`?source=<uuid>`). */
  readonly logflare: { readonly names: readonly string[]; readonly id: string };
  /** Columns in relation order: id, timestamp, event_message, metadata and the derived ones. */
  readonly columns: readonly SourceColumn[];
  /** The project column: first key of the Parquet sort and of the ClickHouse table. */
  readonly projectColumn: string;
  /** Field paths its events carry inside `metadata` besides its columns' (`parsed.error_severity`): BigQuery bare names resolve through them. */
  readonly fields: readonly string[];
  /**
   * Field paths inside `metadata` that queries read on every row (filters, charts, groups), dotted
   * (`parsed.error_severity`): kept as typed columns of their own beside the whole `metadata`
   * (typed-fields.ts; docs/definitions.md, "Typed fields").
   */
  readonly typedFields: readonly string[];
  /**
   * Pairs of its typed fields whose counts per hour are kept together (the rollup
   * `<relation>_typed_pairs`, typed-hourly.ts): what a count grouped by those two fields reads for
   * whole hours.
   */
  readonly typedPairs: ReadonlyArray<readonly [string, string]>;
  /**
   * Rows per Parquet row group, dictionary entries per column chunk (when raised), whether each
   * compacted file gets a head (its newest rows per project: what a newest-first endpoint reads),
   * whether each row group's `id` gets a bloom filter (`idBloomFilter`: a log opened by id
   * reads the one group that holds it; docs/ingest.md, "Layout, compaction and retention"), and
   * the data files' codec when not zstd (`compression`: see `ParquetCompression`).
   */
  readonly parquet: {
    readonly rowGroupRows: number;
    readonly dictionaryEntries?: number;
    readonly heads?: boolean;
    readonly idBloomFilter?: boolean;
    readonly compression?: ParquetCompression;
  };
  /** The ClickHouse table (default: the relation name). */
  readonly clickhouse: { readonly table: string };
  /** Whether an event looks like this source (compaction refuses a glob of another log). */
  looksLike?(event: Record<string, unknown>): boolean;
  /**
   * Rollups by relation name: DuckDB SQL over `relation` grouped by a time bucket (and keys) whose
   * columns are mergeable partial aggregates; endpoints' SQL reads them by name and re-aggregates
   * (docs/definitions.md, "Rollups").
   */
  readonly rollups: Readonly<Record<string, SourceRollup>>;
  /** Names the command line also takes for it, besides its name and relation (see `SourceCliNames`). */
  readonly cli: SourceCliNames;
}

/**
 * Names the command line takes for a source besides the generic forms (`--source <name>=<glob>`,
 * `--source <name>`, `--table <name>=<table>`: docs/cli.md): `flag` gives its globs
 * (`--edge-logs <glob>`), `tableFlag` its ClickHouse table (`--edge-table <name>`), `alias` is one
 * more name for `--source` (`--source edge`). The built-ins keep their older flags this way.
 */
export interface SourceCliNames {
  readonly flag?: string;
  readonly tableFlag?: string;
  readonly alias?: string;
}

/** A rollup of a source: a SELECT over the source's relation, with no parameters. */
export interface SourceRollup {
  readonly sql: string;
  /**
   * Its SELECT over the events that have no stored rollup (an uncompacted tail), computed on every
   * query: by default `sql`. A cheaper one must leave the endpoints' answers unchanged (the trigram
   * maps' rest: each URL, no map, tested by the endpoint itself). The rollup's relation has the
   * columns of both, whatever is stored.
   */
  readonly rest?: string;
  /**
   * Its stored rows narrowed to those one text keeps, which an engine may keep per stored file
   * version and text and bind in the file's place: every statement reading the rollup tests its
   * rows only against the text bound as `$<param>`, and reads a row holding only `column` (every
   * other column NULL) as one that may hold the text. `sql` is a SELECT over one stored file's rows
   * (the relation named as the rollup) binding `$text`, giving the `column` values of the rows that
   * may hold it. Needs `rest`, which gives the relation its other columns. The trigram maps: each
   * call of usage.api-counts tested every origin's 8 KiB map (docs/performance.md, round thirteen,
   * "The candidate origins kept per stored map").
   */
  readonly narrowedBy?: { readonly param: string; readonly column: string; readonly sql: string };
}

/** A column as declared in `defineSource`: a type, or a type with a path inside `metadata`. */
export type SourceColumnDeclaration = ColumnType | { readonly type: ColumnType; readonly path?: string; readonly duckdb?: string };

/** What `defineSource` takes. */
export interface SourceConfig<N extends string = string> {
  name: N;
  relation: string;
  description?: string;
  /** Logflare source names for ingest (`gotrue.logs.prod`) and, optionally, a fixed UUID (default: derived from the first name). */
  logflare?: { names: readonly string[]; id?: string };
  /**
   * The columns beyond the four every event has (`id`, `timestamp`, `event_message`, `metadata`):
   * top-level fields, or `{ type, path: '$.request.path' }` read from `metadata`.
   */
  columns: Record<string, SourceColumnDeclaration>;
  /** The column naming the project (sort and table key). */
  projectColumn: string;
  /**
   * Field paths its events carry inside `metadata` beyond its columns' paths, dotted
   * (`parsed.error_severity`): a caller's BigQuery SQL may name them bare through an unnest alias
   * (docs/sandboxing.md, "BigQuery dialect").
   */
  fields?: readonly string[];
  /**
   * Field paths inside `metadata` that queries read on every row, dotted (`request.path`):
   * compaction and the memory tables keep each as a column of its own beside `metadata`, and a
   * caller's BigQuery SQL reads the column instead of parsing `metadata` (docs/definitions.md,
   * "Typed fields"). Answers are the same with or without.
   */
  typedFields?: readonly string[];
  /**
   * Pairs of `typedFields` a caller groups by together (`[['request.path', 'request.search']]`):
   * a stored rollup keeps each pair's counts per hour (docs/definitions.md, "Typed fields"), read
   * by a count grouped by the two for a window's whole hours; a file whose pairs take too many
   * rows keeps none, and is read as rows.
   */
  typedPairs?: ReadonlyArray<readonly [string, string]>;
  parquet?: { rowGroupRows?: number; dictionaryEntries?: number; heads?: boolean; idBloomFilter?: boolean; compression?: ParquetCompression };
  clickhouse?: { table?: string };
  looksLike?: (event: Record<string, unknown>) => boolean;
  /** Rollups by relation name (`{ auth_logs_hourly: { sql } }`): docs/definitions.md, "Rollups". */
  rollups?: Record<string, SourceRollup>;
  /** More command-line names for it (`{ flag: 'auth-logs', alias: 'auth' }`); the generic forms always work. */
  cli?: SourceCliNames;
}

/**
 * The largest row groups `parquet.idBloomFilter` may have. DuckDB writes a Parquet bloom filter
 * only for a column chunk it wrote with a dictionary, and its writer holds every string column's
 * dictionary up to one size for the whole COPY (parquet-layout.ts, `stringDictionaryBytes`): a
 * row group's ids of 8,192 rows take 320 KiB in it, which took the write of an 8 MiB gateway
 * segment with 14 typed fields from 62 to 72 MB of DuckDB, within compaction's 80MB; groups of
 * 20,000 rows would need 800 KiB a column (1 MB ran out of memory: docs/performance.md, "Footprint").
 *
 * @example
 * defineSource({ ...config, parquet: { rowGroupRows: 8192, idBloomFilter: true } }); // accepted; 20_000 rows are refused
 */
export const ID_BLOOM_FILTER_MAX_ROWS = 8192;

/**
 * The codec of a source's compacted data files (every column: DuckDB's COPY takes one for the
 * whole file). `zstd` (the default) makes the smallest files; `lz4` (written as Parquet's
 * LZ4_RAW) decodes faster: zstd's decoding was about a third of the CPU of a scan of a week's
 * narrow columns (the first step of Studio's 7-day chart). On the Studio bench's week, the
 * gateway's files in lz4 took Studio's 7-day chart from 124-126 to 100-101 ms of CPU and the
 * 7-day Top Paths from 148 to 116-117, for data files 1.60 times the bytes (233 -> 374 MB) and
 * compaction 1.2 times less CPU (docs/performance.md, "The Studio bench on round ten's build, and
 * the gateway's files in LZ4"). No built-in declares it.
 * Files already written keep theirs; a merge writes the declared one.
 *
 * @example
 * defineSource({ ...config, parquet: { rowGroupRows: 8192, compression: 'lz4' } });
 */
export type ParquetCompression = (typeof PARQUET_COMPRESSIONS)[number];

const PARQUET_COMPRESSIONS = ['zstd', 'lz4'] as const;

const DUCKDB_TYPES: Record<ColumnType, string> = {
  text: 'VARCHAR',
  timestamp: 'TIMESTAMP',
  json: 'JSON',
  float: 'DOUBLE',
  integer: 'BIGINT',
  boolean: 'BOOLEAN',
};

const CLICKHOUSE_TYPES: Record<string, string> = {
  VARCHAR: 'Nullable(String)',
  JSON: 'Nullable(String)',
  DOUBLE: 'Nullable(Float64)',
  BIGINT: 'Nullable(Int64)',
  INTEGER: 'Nullable(Int32)',
  BOOLEAN: 'Nullable(UInt8)',
  TIMESTAMP: 'Int64',
};

/** The fields every event has, in relation order. */
const CORE: Record<string, ColumnType> = { id: 'text', timestamp: 'timestamp', event_message: 'text', metadata: 'json' };

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** A command-line flag or `--source` name (without the dashes). */
const CLI_NAME = /^[a-z][a-z0-9-]{0,40}$/;

/**
 * Declares a log source: give it files (`sources: { <name>: 'logs/*.ndjson' }`) or ingest into
 * it by one of its Logflare names, and endpoints' SQL reads it as `relation`.
 *
 * @example
 * const authLogs = defineSource({
 *   name: 'authLogs', relation: 'auth_logs', logflare: { names: ['gotrue.logs.prod'] },
 *   columns: { project: 'text', level: { type: 'text', path: '$.level' }, status: { type: 'integer', path: '$.status' } },
 *   projectColumn: 'project',
 * });
 */
export function defineSource<const N extends string>(config: SourceConfig<N>): SourceDescriptor<N> {
  const name = typeof config?.name === 'string' ? config.name : '';
  const fail = (problem: string): never => {
    throw new InvalidOptionError(`sourceDefinitions["${name}"]`, `Source "${name}" cannot work: ${problem}.`);
  };
  if (!/^[A-Za-z][A-Za-z0-9]{0,62}$/.test(name)) {
    throw new InvalidOptionError('sourceDefinitions', `A source name must be letters and digits (it is an option key), not ${JSON.stringify(config?.name)}.`);
  }
  if (typeof config.relation !== 'string' || !IDENTIFIER.test(config.relation)) fail('relation must be a lower-case SQL identifier');
  const columns: SourceColumn[] = [];
  const declared = { ...CORE, ...(config.columns ?? {}) } as Record<string, SourceColumnDeclaration>;
  for (const [column, d] of Object.entries(declared)) {
    if (!IDENTIFIER.test(column)) fail(`column name ${JSON.stringify(column)} must be a lower-case SQL identifier`);
    const spec = typeof d === 'string' ? { type: d } : d;
    if (!spec || !(spec.type in DUCKDB_TYPES)) fail(`column "${column}" has no type among ${Object.keys(DUCKDB_TYPES).join(', ')}`);
    if (column in CORE && (spec.type !== CORE[column] || ('path' in spec && spec.path))) fail(`column "${column}" is every event's own ${CORE[column]} field`);
    const path = 'path' in spec && spec.path !== undefined ? spec.path : null;
    if (path !== null && !/^\$(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(path)) fail(`column "${column}" path must be a JSONPath such as $.request.path`);
    const duckdb = ('duckdb' in spec && spec.duckdb) || DUCKDB_TYPES[spec.type];
    columns.push(Object.freeze({ name: column, type: spec.type, path, duckdb, clickhouse: CLICKHOUSE_TYPES[duckdb] ?? 'Nullable(String)' }));
  }
  const project = columns.find((c) => c.name === config.projectColumn);
  if (!project || project.type !== 'text') fail('projectColumn must name one of its text columns');
  const names = config.logflare?.names ?? [];
  if (!Array.isArray(names) || names.some((n) => typeof n !== 'string' || n === '')) fail('logflare.names must be a list of non-empty names');
  const id = (config.logflare?.id ?? uuidFromName(`source:${names[0] ?? name}`)).toLowerCase();
  const rollups: Record<string, SourceRollup> = {};
  for (const [rollup, r] of Object.entries(config.rollups ?? {})) {
    if (!IDENTIFIER.test(rollup) || rollup === config.relation) fail(`rollup name ${JSON.stringify(rollup)} must be a lower-case SQL identifier other than its relation`);
    for (const text of [r?.sql, ...(r?.rest === undefined ? [] : [r.rest])]) {
      if (typeof text !== 'string' || !new RegExp(`\\b${config.relation}\\b`).test(text)) fail(`rollup "${rollup}" must be a SELECT over ${config.relation}`);
    }
    const narrowed = r.narrowedBy;
    if (
      narrowed !== undefined &&
      (r.rest === undefined ||
        !IDENTIFIER.test(narrowed.param) ||
        !IDENTIFIER.test(narrowed.column) ||
        typeof narrowed.sql !== 'string' ||
        !new RegExp(`\\b${rollup}\\b`).test(narrowed.sql) ||
        !/\$text\b/.test(narrowed.sql))
    )
      fail(`rollup "${rollup}" narrowedBy needs its rest, a parameter and column name, and a SELECT over ${rollup} binding $text`);
    rollups[rollup] = Object.freeze({ sql: r.sql, ...(r.rest === undefined ? {} : { rest: r.rest }), ...(narrowed === undefined ? {} : { narrowedBy: Object.freeze({ ...narrowed }) }) });
  }
  const cli = config.cli ?? {};
  for (const key of ['flag', 'tableFlag', 'alias'] as const) {
    if (cli[key] !== undefined && !(typeof cli[key] === 'string' && CLI_NAME.test(cli[key]))) fail(`cli.${key} must be lower-case letters, digits and "-" (a command-line name)`);
  }
  const fields = config.fields ?? [];
  if (!Array.isArray(fields) || fields.some((f) => typeof f !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(f)))
    fail('fields must be dotted paths such as parsed.error_severity');
  const typedFields = config.typedFields ?? [];
  if (!Array.isArray(typedFields) || typedFields.some((f) => typeof f !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(f)))
    fail('typedFields must be dotted paths such as parsed.error_severity');
  if (new Set(typedFields).size !== typedFields.length) fail('typedFields names a path twice');
  const typedPairs = config.typedPairs ?? [];
  if (!Array.isArray(typedPairs) || typedPairs.some((p) => !Array.isArray(p) || p.length !== 2 || p[0] === p[1] || !p.every((f) => typedFields.includes(f))))
    fail('typedPairs must be pairs of two different typedFields');
  if (new Set(typedPairs.map((p) => typedPairName(p))).size !== typedPairs.length) fail('typedPairs names a pair twice');
  // The hour counts of its declared typed fields (typed-hourly.ts), a stored rollup like any other.
  if (typedFields.length) {
    const hourly = typedHourlyName(config.relation);
    if (hourly in rollups) fail(`rollup name "${hourly}" is the one its typed fields' hour counts take`);
    rollups[hourly] = Object.freeze({ sql: typedHourlySql(config.relation, config.projectColumn, typedFields) });
  }
  // The counts of its declared pairs (typed-hourly.ts), another: the hour counts' definition stays.
  if (typedPairs.length) {
    const pairs = typedPairsName(config.relation);
    if (pairs in rollups) fail(`rollup name "${pairs}" is the one its typed pairs' counts take`);
    rollups[pairs] = Object.freeze({ sql: typedPairsSql(config.relation, config.projectColumn, typedPairs) });
  }
  const rowGroupRows = config.parquet?.rowGroupRows ?? 100_000;
  if (!Number.isInteger(rowGroupRows) || rowGroupRows < 1000) fail('parquet.rowGroupRows must be a whole number of at least 1000');
  const compression = config.parquet?.compression;
  if (compression !== undefined && !(PARQUET_COMPRESSIONS as readonly string[]).includes(compression))
    fail(`parquet.compression must be one of ${PARQUET_COMPRESSIONS.join(', ')}, not ${String(compression)}`);
  if (config.parquet?.idBloomFilter && rowGroupRows > ID_BLOOM_FILTER_MAX_ROWS) {
    fail(`parquet.idBloomFilter needs row groups of at most ${ID_BLOOM_FILTER_MAX_ROWS} rows (every string column's dictionary is sized to hold a row group's ids), not ${rowGroupRows}`);
  }
  return Object.freeze({
    name: name as N,
    relation: config.relation,
    description: config.description ?? '',
    logflare: Object.freeze({ names: Object.freeze([...names]), id }),
    columns: Object.freeze(columns),
    projectColumn: config.projectColumn,
    fields: Object.freeze([...fields]),
    typedFields: Object.freeze([...typedFields]),
    typedPairs: Object.freeze(typedPairs.map((p) => Object.freeze([p[0], p[1]] as const))),
    parquet: Object.freeze({
      rowGroupRows,
      ...(config.parquet?.dictionaryEntries ? { dictionaryEntries: config.parquet.dictionaryEntries } : {}),
      ...(config.parquet?.heads ? { heads: true } : {}),
      ...(config.parquet?.idBloomFilter ? { idBloomFilter: true } : {}),
      // Only when not the default: a descriptor without it is the one it was before.
      ...(compression !== undefined && compression !== 'zstd' ? { compression } : {}),
    }),
    clickhouse: Object.freeze({ table: config.clickhouse?.table ?? config.relation }),
    ...(config.looksLike ? { looksLike: config.looksLike } : {}),
    rollups: Object.freeze(rollups),
    cli: Object.freeze({ ...(cli.flag ? { flag: cli.flag } : {}), ...(cli.tableFlag ? { tableFlag: cli.tableFlag } : {}), ...(cli.alias ? { alias: cli.alias } : {}) }),
  });
}
