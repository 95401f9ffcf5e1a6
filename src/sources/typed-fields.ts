import type { SourceDescriptor } from './source-descriptor';

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
    fields = Object.freeze((source.typedFields ?? []).map((path) => Object.freeze({ path, keys: Object.freeze(path.split('.')), text: `text:metadata.${path}`, json: `json:metadata.${path}` })));
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
