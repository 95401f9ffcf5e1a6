import type { SourceDescriptor } from '../sources/source-descriptor';
import { columnName } from '../sql/column-name';
import { ARRAYS_COLUMN, typedColumnsOf, typedFieldsOf } from '../sources/typed-fields';

// What a source's typed columns hold (src/sources/typed-fields.ts), as SQL over its relation's
// `metadata` (JSON): the expressions a caller's translated BigQuery SQL reads a field by
// (src/bigquery/print-duckdb.ts), computed once per event instead of once per query. The
// translator prints the same paths with `jsonPathLiteral`, so a column holds what the expression
// would give on that event, whatever the field's type (NULL where it is missing).

/**
 * A JSON path of keys as a DuckDB string literal, each key quoted: the form the translator reads
 * fields by.
 *
 * @example
 * jsonPathLiteral(['parsed', 'error_severity']); // `'$."parsed"."error_severity"'`
 */
export function jsonPathLiteral(keys: readonly string[]): string {
  return `'${`$${keys.map((k) => `."${k}"`).join('')}`.replaceAll("'", "''")}'`;
}

/**
 * The typed columns a relation already holds as stored (a Parquet file's, by its commit's record):
 * the fields' paths, and whether it has the arrays flag (every file written with typed columns has).
 */
export interface StoredTyped {
  readonly paths: ReadonlySet<string>;
  readonly arrays: boolean;
}

/**
 * `relation` (a SELECT with a `metadata` JSON column) with the source's typed columns after its
 * own, in relation order: those `stored` names passed through as the relation holds them, the
 * others computed from `metadata` (each field's `json_extract` and `json_extract_string`, and
 * whether the text holds a `[`). One parse of `metadata` gives every field's value, and each text
 * is read from its value (the same text as from `metadata`, a test holds them equal): a second
 * parse of `metadata` for the texts took an event of 650,000 keys past the memory tables' share
 * of memory when they computed them at insert. A source without typed fields gets the relation
 * back as it is, and so does a relation that holds them all.
 *
 * @example
 * withTypedColumns(postgresLogs, 'SELECT * FROM events'); // 'SELECT * EXCLUDE (...), ... AS "text:metadata.parsed.error_severity", ...'
 */
export function withTypedColumns(source: SourceDescriptor, relation: string, stored: StoredTyped = { paths: new Set(), arrays: false }): string {
  const fields = typedFieldsOf(source);
  const missing = fields.filter((f) => !stored.paths.has(f.path));
  if (!fields.length || (!missing.length && stored.arrays)) return relation;
  const paths = `[${missing.map((f) => jsonPathLiteral(f.keys)).join(', ')}]`;
  const items = fields.flatMap((f) => {
    const i = missing.indexOf(f);
    return i < 0 ? [columnName(f.text), columnName(f.json)] : [`"__le_texts"[${i + 1}] AS ${columnName(f.text)}`, `"__le_values"[${i + 1}] AS ${columnName(f.json)}`];
  });
  const exclude = [
    ...fields.filter((f) => stored.paths.has(f.path)).flatMap((f) => [columnName(f.text), columnName(f.json)]),
    ...(stored.arrays ? [columnName(ARRAYS_COLUMN)] : []),
    ...(missing.length ? ['"__le_texts"', '"__le_values"'] : []),
  ];
  const arrays = stored.arrays ? columnName(ARRAYS_COLUMN) : `contains(metadata, '[') AS ${columnName(ARRAYS_COLUMN)}`;
  const inner = missing.length
    ? `SELECT *, list_transform("__le_values", v -> json_extract_string(v, '$')) AS "__le_texts" FROM (SELECT *, json_extract(metadata, ${paths}) AS "__le_values" FROM (${relation}))`
    : relation;
  return `SELECT * ${exclude.length ? `EXCLUDE (${exclude.join(', ')}), ` : ''}${[...items, arrays].join(', ')}
    FROM (${inner})`;
}

/**
 * The typed columns `stored` names, read as they are stored (a Parquet file that has them), in
 * relation order; `types` is the stored DuckDB type by column name (a type other than the
 * relation's is cast). With `arraysFree` (files whose flag is never true: arrays-free-files.ts)
 * the arrays flag is the constant false instead of its column.
 *
 * @example
 * storedTypedColumns(postgresLogs, types, storedTypedOf(postgresLogs, record)); // ['"text:metadata.parsed.error_severity"', ...]
 */
export function storedTypedColumns(source: SourceDescriptor, types: ReadonlyMap<string, string>, stored: StoredTyped, options: { arraysFree?: boolean } = {}): string[] {
  const names = storedTypedColumnNames(source, stored);
  return typedColumnsOf(source)
    .filter(([name]) => names.has(name))
    .map(([name, type]) => {
      const column = columnName(name);
      if (name === ARRAYS_COLUMN && options.arraysFree) return `false AS ${column}`;
      return types.get(name)?.toUpperCase() === type ? column : `CAST(${column} AS ${type}) AS ${column}`;
    });
}

/**
 * The names of the typed columns `stored` says a relation holds: each stored field's text and
 * JSON columns, and the arrays flag when it has any.
 *
 * @example
 * storedTypedColumnNames(postgresLogs, { paths: new Set(['parsed.error_severity']), arrays: true }); // Set { 'text:metadata.parsed.error_severity', 'json:metadata.parsed.error_severity', 'arrays:metadata' }
 */
export function storedTypedColumnNames(source: SourceDescriptor, stored: StoredTyped): ReadonlySet<string> {
  return new Set([
    ...typedFieldsOf(source)
      .filter((f) => stored.paths.has(f.path))
      .flatMap((f) => [f.text, f.json]),
    ...(stored.arrays ? [ARRAYS_COLUMN] : []),
  ]);
}

/**
 * Which of the source's typed columns a data file written with these typed fields (its commit's
 * record, `typedFields`) holds: the fields both name, and the arrays flag when it has any. The
 * others are computed from its `metadata` (a file of an older declaration or set of discovered
 * paths, or of none).
 *
 * @example
 * storedTypedOf(postgresLogs, ['parsed.error_severity']); // { paths: Set { 'parsed.error_severity' }, arrays: true }
 */
export function storedTypedOf(source: SourceDescriptor, recorded: readonly string[] | undefined): StoredTyped {
  const have = new Set(recorded ?? []);
  return { paths: new Set(typedFieldsOf(source).flatMap((f) => (have.has(f.path) ? [f.path] : []))), arrays: have.size > 0 };
}
