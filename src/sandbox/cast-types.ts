/**
 * The types a caller may cast to (check-parse-tree.ts refuses any other), each with the size of its
 * values for the size check (check-sizes.ts): `fixed` at most 16 bytes whatever the value was read
 * from (a number, a time, a boolean, a UUID), `grows` with what it is read from (text, lists, ...).
 *
 * @example
 * CAST_TYPES.BIGINT; // 'fixed'
 */
export const CAST_TYPES: Readonly<Record<string, 'fixed' | 'grows'>> = {
  BOOLEAN: 'fixed',
  TINYINT: 'fixed',
  SMALLINT: 'fixed',
  INTEGER: 'fixed',
  BIGINT: 'fixed',
  HUGEINT: 'fixed',
  UTINYINT: 'fixed',
  USMALLINT: 'fixed',
  UINTEGER: 'fixed',
  UBIGINT: 'fixed',
  UHUGEINT: 'fixed',
  FLOAT: 'fixed',
  DOUBLE: 'fixed',
  DECIMAL: 'fixed',
  VARCHAR: 'grows',
  BLOB: 'grows',
  DATE: 'fixed',
  TIME: 'fixed',
  'TIME WITH TIME ZONE': 'fixed',
  TIMESTAMP: 'fixed',
  'TIMESTAMP WITH TIME ZONE': 'fixed',
  TIMESTAMP_S: 'fixed',
  TIMESTAMP_MS: 'fixed',
  TIMESTAMP_NS: 'fixed',
  INTERVAL: 'fixed',
  UUID: 'fixed',
  LIST: 'grows',
  STRUCT: 'grows',
  MAP: 'grows',
  ARRAY: 'grows',
  UNION: 'grows',
  UNBOUND: 'grows',
};
