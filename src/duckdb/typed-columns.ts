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
 * `relation` (a SELECT with a `metadata` JSON column) with the source's typed columns computed
 * from it and added after its own: each field's `json_extract_string` and `json_extract` (one
 * parse of `metadata` for all the texts, one for all the values), and whether the text holds a
 * `[`. A source without typed fields gets the relation back as it is.
 *
 * @example
 * withTypedColumns(postgresLogs, 'SELECT * FROM events'); // 'SELECT * EXCLUDE (...), ... AS "text:metadata.parsed.error_severity", ...'
 */
export function withTypedColumns(source: SourceDescriptor, relation: string): string {
  const fields = typedFieldsOf(source);
  if (!fields.length) return relation;
  const paths = `[${fields.map((f) => jsonPathLiteral(f.keys)).join(', ')}]`;
  const items = fields.flatMap((f, i) => [`"__le_texts"[${i + 1}] AS ${columnName(f.text)}`, `"__le_values"[${i + 1}] AS ${columnName(f.json)}`]);
  return `SELECT * EXCLUDE ("__le_texts", "__le_values"), ${items.join(', ')}, contains(metadata, '[') AS ${columnName(ARRAYS_COLUMN)}
    FROM (SELECT *, json_extract_string(metadata, ${paths}) AS "__le_texts", json_extract(metadata, ${paths}) AS "__le_values" FROM (${relation}))`;
}

/**
 * The typed columns read as they are stored (a Parquet file that has them), in relation order;
 * `types` is the stored DuckDB type by column name (a type other than the relation's is cast).
 *
 * @example
 * storedTypedColumns(postgresLogs, types); // ['"text:metadata.parsed.error_severity"', ...]
 */
export function storedTypedColumns(source: SourceDescriptor, types: ReadonlyMap<string, string>): string[] {
  return typedColumnsOf(source).map(([name, type]) => {
    const column = columnName(name);
    return types.get(name)?.toUpperCase() === type ? column : `CAST(${column} AS ${type}) AS ${column}`;
  });
}

/**
 * Whether a data file written with these typed fields (its commit's record, `typedFields`) has
 * every column the source declares now: only then are they read as stored (a file of an older
 * declaration, or of none, gets them computed from its `metadata`).
 *
 * @example
 * hasTypedColumns(postgresLogs, ['parsed.error_severity', ...]); // true
 */
export function hasTypedColumns(source: SourceDescriptor, recorded: readonly string[] | undefined): boolean {
  const fields = typedFieldsOf(source);
  if (!fields.length || !recorded?.length) return false;
  const have = new Set(recorded);
  return fields.every((f) => have.has(f.path));
}
