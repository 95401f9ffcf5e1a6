import { supabasePreset } from '../src/index';
import type { LogTable } from '../test/support/supabase/vector-sources';

/**
 * The nested fields of chdb's Studio SQL (bench/studio-cases.ts) and the MATERIALIZED columns chdb
 * is given for them (bench/studio-chdb.ts): a field the Supabase preset's descriptor of its table
 * declares typed (`typedFields`: what Studio's filters, charts and groups read on every row) is
 * read from a column of its own, as a ClickHouse user lays out the fields their queries read;
 * any other from `metadata`'s JSON text with `JSONExtract`. The list is the descriptors'.
 */

/** A MATERIALIZED column of a chdb table: its name, its type and the read of `metadata` it stores. */
export interface ChdbColumn {
  readonly table: LogTable;
  readonly column: string;
  readonly type: string;
  readonly expression: string;
}

/** The paths the Supabase descriptor of `table` declares typed. */
function typedPaths(table: LogTable): readonly string[] {
  const source = supabasePreset.sourceDefinitions.find((d) => d.relation === table);
  if (!source) throw new Error(`bench/studio-chdb-fields.ts: the Supabase preset has no source of ${table}`);
  return source.typedFields;
}

/**
 * `path` of `table`'s `metadata` as chdb's SQL reads it, as `type` (`Nullable(String)`): its
 * column where the descriptor declares it typed, else the JSON; and the column read (null: none).
 *
 * @example
 * chdbField('postgres_logs', 'parsed.error_severity', 'Nullable(String)').sql; // 'metadata_parsed_error_severity'
 * chdbField('postgres_logs', 'parsed.detail', 'Nullable(String)').sql; // "JSONExtract(metadata, 'parsed', 'detail', 'Nullable(String)')"
 */
export function chdbField(table: LogTable, path: string, type: string): { sql: string; column: ChdbColumn | null } {
  const expression = `JSONExtract(metadata, ${path
    .split('.')
    .map((key) => `'${key}'`)
    .join(', ')}, '${type}')`;
  if (!typedPaths(table).includes(path)) return { sql: expression, column: null };
  // Prefixed: a typed path never takes the name of a top-level column (id, project, ...).
  const column = `metadata_${path.replaceAll('.', '_')}`;
  return { sql: column, column: { table, column, type, expression } };
}

/** The columns `queries` read, each once; a column read as two types is refused (it has one). */
export function chdbColumnsOf(queries: ReadonlyArray<{ columns: readonly ChdbColumn[] }>): ChdbColumn[] {
  const byName = new Map<string, ChdbColumn>();
  for (const c of queries.flatMap((q) => q.columns)) {
    const key = `${c.table}.${c.column}`;
    const seen = byName.get(key);
    if (seen && seen.type !== c.type) throw new Error(`bench/studio-chdb-fields.ts: ${key} is read as ${seen.type} and as ${c.type}`);
    byName.set(key, c);
  }
  return [...byName.values()];
}
