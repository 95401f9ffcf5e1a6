import type { SourceDescriptor } from './source-descriptor';
import { typedColumnNames } from './typed-column-names';

/**
 * The columns a source's typed fields (its descriptor's `typedFields`) are kept in, beside the
 * whole `metadata`: per field its text and its JSON, and one flag per event saying whether its
 * `metadata` text holds a `[` (where an unnest may have elements to multiply rows by). Their names
 * hold a `:` and a `.`, which no declared column's name may (a lower-case SQL identifier), so
 * they never collide with a user's column. What each holds is one SQL expression over `metadata`
 * (src/duckdb/typed-columns.ts), the one a caller's translated BigQuery SQL would otherwise
 * compute on every row (docs/definitions.md, "Typed fields").
 */

/** One typed field of a source: its path inside `metadata`, and the names of its two columns. */
export interface TypedField {
  /** Dotted, from `metadata` (`parsed.error_severity`). */
  readonly path: string;
  /** Its keys (`['parsed', 'error_severity']`). */
  readonly keys: readonly string[];
  /** The column of its text (`json_extract_string`): a string's text, any other value's JSON. */
  readonly text: string;
  /** The column of its JSON value (`json_extract`). */
  readonly json: string;
}

/**
 * The column flagging events whose `metadata` text holds a `[`.
 *
 * @example
 * ARRAYS_COLUMN; // 'arrays:metadata'
 */
export const ARRAYS_COLUMN = 'arrays:metadata';

const known = new WeakMap<SourceDescriptor, readonly TypedField[]>();

/**
 * A source's typed fields with their column names, in declaration order.
 *
 * @example
 * typedFieldsOf(postgresLogs)[0]; // { path: 'parsed.error_severity', keys: [...], text: 'text:metadata.parsed.error_severity', json: 'json:metadata.parsed.error_severity' }
 */
export function typedFieldsOf(source: SourceDescriptor): readonly TypedField[] {
  let fields = known.get(source);
  if (!fields) {
    fields = Object.freeze((source.typedFields ?? []).map((path) => Object.freeze({ path, keys: Object.freeze(path.split('.')), ...typedColumnNames(path) })));
    known.set(source, fields);
  }
  return fields;
}

/**
 * The names and DuckDB types of a source's typed columns, in relation order (after its declared
 * columns): each field's text and JSON, then the arrays flag; none for a source without typed fields.
 *
 * @example
 * typedColumnsOf(postgresLogs).at(-1); // ['arrays:metadata', 'BOOLEAN']
 */
export function typedColumnsOf(source: SourceDescriptor): ReadonlyArray<[name: string, type: string]> {
  const fields = typedFieldsOf(source);
  if (!fields.length) return [];
  return [
    ...fields.flatMap(
      (f): Array<[string, string]> => [
        [f.text, 'VARCHAR'],
        [f.json, 'JSON'],
      ],
    ),
    [ARRAYS_COLUMN, 'BOOLEAN'],
  ];
}

/**
 * How many typed fields a source gets beyond those it declares, at most: discovered by compaction
 * (a path present in most events of a run with one type: src/duckdb/discover-paths.ts), kept in
 * the dataset's log (`typedPaths`) and never dropped. Each is two more columns in every file.
 */
export const DISCOVERED_PATHS_LIMIT = 16;

/** A path that may be a typed field: dotted names (what `defineSource` takes in `typedFields`). */
export const TYPED_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

const widened = new WeakMap<SourceDescriptor, Map<string, SourceDescriptor>>();
/** Each widened descriptor's source as declared. */
const declaredOf = new WeakMap<SourceDescriptor, SourceDescriptor>();

/**
 * The source as it declares itself: the descriptor `withTypedPaths` widened, or the source itself.
 *
 * @example
 * declaredSourceOf(withTypedPaths(postgresLogs, ['parsed.sql_state_code'])); // postgresLogs
 */
export function declaredSourceOf(source: SourceDescriptor): SourceDescriptor {
  return declaredOf.get(source) ?? source;
}

/**
 * The source with more typed fields after the ones it declares: those it was widened by already,
 * then `paths` (a dataset's `typedPaths`), the declared ones among them and any that is not a
 * dotted path left out, at most `DISCOVERED_PATHS_LIMIT` of them in their order. The same source
 * and paths give the same descriptor (its typed fields are known once); no path to add gives the
 * source as declared.
 *
 * @example
 * withTypedPaths(postgresLogs, ['parsed.user_name', 'parsed.sql_state_code']).typedFields; // [...declared, 'parsed.sql_state_code']
 */
export function withTypedPaths(source: SourceDescriptor, paths: readonly string[]): SourceDescriptor {
  const base = declaredSourceOf(source);
  const declared = new Set(base.typedFields);
  const more = [...new Set([...source.typedFields, ...paths])].filter((p) => !declared.has(p) && TYPED_PATH.test(p)).slice(0, DISCOVERED_PATHS_LIMIT);
  if (!more.length) return base;
  let known = widened.get(base);
  if (!known) widened.set(base, (known = new Map()));
  const key = more.join('\n');
  let wide = known.get(key);
  if (!wide) {
    wide = Object.freeze({ ...base, typedFields: Object.freeze([...base.typedFields, ...more]) });
    known.set(key, wide);
    declaredOf.set(wide, base);
  }
  return wide;
}
