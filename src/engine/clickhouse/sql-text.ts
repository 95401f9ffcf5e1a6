import { EngineError, InvalidOptionError } from '../../errors';
import { InternalError } from '../../util/internal-error';

/**
 * Everything of ours that becomes ClickHouse SQL text passes through here: names from the
 * configuration (database, tables, cluster) and integers. Request parameters that are text never
 * do: they travel as query parameters or as external data (see bind-params.ts).
 */

/** Names of databases, tables and clusters we create or read: letters, digits and `_`. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Cluster names come from the server's `remote_servers` XML: dots and dashes are common there. */
const CLUSTER = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/**
 * A database, table or column name, back-quoted. Only plain names are accepted, so quoting is a
 * formality; a name with anything else is a configuration mistake, reported as such
 * (`InvalidOptionError` naming `option`, the option the name came from).
 */
export function sqlIdentifier(name: string, option: string): string {
  if (!NAME.test(name)) {
    throw new InvalidOptionError(option, `"${name}" is not a usable ClickHouse name: use letters, digits and _ (not starting with a digit), at most 128.`);
  }
  return `\`${name}\``;
}

/** `database`.`table`, the table's name from the option `tableOption` (`tables.<source>`). */
export function sqlTableName(database: string, table: string, tableOption: string): string {
  return `${sqlIdentifier(database, 'database')}.${sqlIdentifier(table, tableOption)}`;
}

/** A cluster name (the option `cluster`) as the string literal `Distributed(...)` and `ON CLUSTER` take. */
export function sqlClusterName(cluster: string): string {
  if (!CLUSTER.test(cluster)) {
    throw new InvalidOptionError('cluster', `"${cluster}" is not a usable ClickHouse cluster name: use letters, digits, _, . and -.`);
  }
  return `'${cluster}'`;
}

/** Integer ranges of the placeholder types our queries use. */
const RANGES: Record<string, readonly [bigint, bigint]> = {
  UInt8: [0n, 255n],
  UInt16: [0n, 65_535n],
  UInt32: [0n, 4_294_967_295n],
  UInt64: [0n, 18_446_744_073_709_551_615n],
  Int8: [-128n, 127n],
  Int16: [-32_768n, 32_767n],
  Int32: [-2_147_483_648n, 2_147_483_647n],
  Int64: [-9_223_372_036_854_775_808n, 9_223_372_036_854_775_807n],
};

/** Whether a placeholder type is an integer type (possibly Nullable) this module can write. */
export function integerType(type: string): string | null {
  const bare = type.replace(/^Nullable\((.*)\)$/, '$1');
  return bare in RANGES ? bare : null;
}

/**
 * An integer as SQL text: the value is checked to be a whole number inside the type's range and
 * written from its own digits, so nothing but `-` and digits can come out. Signed values are
 * typed through `toInt64(...)` and the like, as a query parameter would be; unsigned ones stay
 * bare literals, which ClickHouse 18 requires in LIMIT.
 */
export function sqlInteger(value: number | bigint, type: string, name = 'a value'): string {
  const bareType = integerType(type);
  // Only integer placeholders are written this way (bindParams asks integerType first).
  if (bareType === null) throw new InternalError('invariant', `${type} is not an integer type.`);
  // The statement cannot run with this value: its endpoint binds something its type cannot hold.
  const unusable = (why: string) => new EngineError('query_failed', `Query parameter ${name} (${type}): ${why}.`);
  if (typeof value !== 'number' && typeof value !== 'bigint') throw unusable(`${String(value)} is not a number`);
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw unusable(`${value} is not a whole number`);
  const n = BigInt(value);
  const [min, max] = RANGES[bareType]!;
  if (n < min || n > max) throw unusable(`${n} is outside the range of ${bareType}`);
  const digits = n.toString();
  return bareType.startsWith('U') ? digits : `to${bareType}(${digits})`;
}

/**
 * A value as one field of TabSeparated data (external tables), escaped the way ClickHouse reads
 * TSV: backslash, tab, newline, carriage return, NUL, backspace and form feed become escape
 * sequences; `\N` is NULL. Nothing of it is ever parsed as SQL.
 */
export function tsvField(value: string | null): string {
  if (value === null) return '\\N';
  return value.replace(/[\\\t\n\r\0\b\f]/g, (c) => TSV_ESCAPES[c]!);
}

const TSV_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\0': '\\0',
  '\b': '\\b',
  '\f': '\\f',
};
