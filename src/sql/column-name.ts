/**
 * A column's name as SQL text: bare when it is a lower-case identifier (every declared column's),
 * else double-quoted (a typed column's, `text:metadata.request.path`: src/sources/typed-fields.ts).
 * DuckDB and ClickHouse alike read a double-quoted name.
 *
 * @example
 * columnName('project'); // 'project'
 * columnName('text:metadata.request.path'); // '"text:metadata.request.path"'
 */
export function columnName(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}
