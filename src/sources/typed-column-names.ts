/**
 * The names of a typed field's two columns (its text, its JSON value): src/sources/typed-fields.ts.
 * Names hold a `:` and a `.`, which no declared column's name may.
 *
 * @example
 * typedColumnNames('parsed.error_severity'); // { text: 'text:metadata.parsed.error_severity', json: 'json:metadata.parsed.error_severity' }
 */
export function typedColumnNames(path: string): { text: string; json: string } {
  return { text: `text:metadata.${path}`, json: `json:metadata.${path}` };
}
