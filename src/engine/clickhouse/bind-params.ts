import { EngineError } from '../../errors';
import type { EngineParam } from '../engine';
import { integerType, sqlIdentifier, sqlInteger, tsvField } from './sql-text';

/** A `{name:Type}` placeholder of a query in queries/clickhouse/. */
export interface Placeholder {
  name: string;
  type: string;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*):\s*([A-Za-z0-9]+(?:\([A-Za-z0-9]+\))?)\s*\}/g;

/** The external table that carries text values to servers without query parameters. */
export const PARAMS_TABLE = 'le_params';

/**
 * A statement that cannot run with its values: a mistake of the endpoint's ClickHouse SQL or of
 * what its bind hook gives it (`query_failed`), with the reason (names and types, never values).
 */
function unusable(message: string): EngineError {
  return new EngineError('query_failed', message);
}

/** The placeholders of a query, each name once (a name used with two types is a mistake). */
export function placeholders(sql: string): Placeholder[] {
  const found = new Map<string, string>();
  for (const [, name, type] of sql.matchAll(PLACEHOLDER)) {
    const known = found.get(name!);
    if (known !== undefined && known !== type) throw unusable(`Query parameter ${name} is used as ${known} and as ${type}.`);
    found.set(name!, type!);
  }
  return [...found].map(([name, type]) => ({ name, type }));
}

/**
 * A query with its values bound, ready to send: `sql` has every integer written as a checked
 * literal, and text values are either `queryParams` (bound by the server) or one row of the
 * external table `le_params` (`externalData`), read by scalar subqueries. Text never enters
 * `sql`.
 */
export interface BoundQuery {
  sql: string;
  queryParams?: Record<string, string | null>;
  externalData?: { name: string; structure: string; tsv: string };
}

/**
 * Binds named values to a query's `{name:Type}` placeholders. Integers and timestamps (bigint
 * microseconds) become literals checked against their type (`sqlInteger`); `String` and
 * `Nullable(String)` values stay out of the SQL text: server-side query parameters where the
 * server has them, otherwise external data. Every placeholder needs a value; extra values are
 * ignored.
 */
export function bindParams(sql: string, params: Readonly<Record<string, EngineParam>>, queryParameters: boolean): BoundQuery {
  const text: Array<{ name: string; type: string; value: string | null }> = [];
  for (const { name, type } of placeholders(sql)) {
    if (params[name] === undefined) throw unusable(`No value for query parameter ${name}.`);
    const value = params[name]!;
    if (value === null && !type.startsWith('Nullable(')) throw unusable(`Query parameter ${name} (${type}) cannot be NULL.`);
    if (integerType(type) !== null) continue;
    if (type !== 'String' && type !== 'Nullable(String)') throw unusable(`Query parameter ${name} has the unsupported type ${type}.`);
    if (value !== null && typeof value !== 'string') throw unusable(`Query parameter ${name} (${type}) needs text.`);
    text.push({ name, type, value });
  }
  const bound = sql.replace(PLACEHOLDER, (whole, name: string, type: string) => {
    const value = params[name]!;
    if (integerType(type) !== null) {
      if (value === null) return 'NULL';
      if (typeof value === 'object') return sqlInteger(value.timestamp, type, name);
      if (typeof value === 'number') return sqlInteger(value, type, name);
      throw unusable(`Query parameter ${name} (${type}) needs a number.`);
    }
    // Text: left to the server as a parameter, or read from the external table.
    return queryParameters ? whole : `(SELECT ${sqlIdentifier(name, 'sql.clickhouse')} FROM ${PARAMS_TABLE})`;
  });
  if (text.length === 0) return { sql: bound };
  if (queryParameters) return { sql: bound, queryParams: Object.fromEntries(text.map((t) => [t.name, t.value])) };
  return {
    sql: bound,
    externalData: {
      name: PARAMS_TABLE,
      structure: text.map((t) => `${t.name} ${t.type}`).join(', '),
      tsv: `${text.map((t) => tsvField(t.value)).join('\t')}\n`,
    },
  };
}
