import type { ColumnType } from '../sql/column-types';
import type { BodyIR, Expr, FromIR, Kind, QueryIR, SelectIR, TimeUnit, UnnestAlias } from './ir';
import { jsonKeys, UNNEST_COLUMN } from './ir';
import { kindOf } from './kinds';
import { refuse } from './refuse';
import { flatPathsColumn, flatValuesColumn, jsonKeyPath } from '../util/json-flat-paths';
import { SqlPrinter, UNIT_MICROS } from './print-sql';
import { jsonValueOfText } from './print-clickhouse-json';
import { formatTime, regex, str } from './clickhouse-18-text';

/** Table name -> the FROM item ClickHouse reads it by: a subquery over the source's table, bound to the request. */
export type ClickHouseTables = Readonly<Record<string, string>>;

const q = (name: string) => `\`${name.replace(/[\\`]/g, (c) => `\\${c}`)}\``;
const paths = (rel: string, column: string) => `${q(rel)}.${q(flatPathsColumn(column))}`;
const values = (rel: string, column: string) => `${q(rel)}.${q(flatValuesColumn(column))}`;

/** The flattened path of a field's keys, as text SQL: after its unnest alias's prefix when it has one. */
function pathAt(e: Extract<Expr, { t: 'field' }>, keys: readonly string[]): string {
  if (!e.unnest) return str(jsonKeyPath(keys));
  const prefix = `tupleElement(${q(e.rel)}.${q(UNNEST_COLUMN)}, ${slotIndex(e.unnest)})`;
  return keys.length > 0 ? `concat(${prefix}, ${str(jsonKeyPath(keys))})` : prefix;
}

/** The JSON text at a flattened path of a field's column ('' when missing). */
function lookup(e: Extract<Expr, { t: 'field' }>, path: string): string {
  return `arrayElement(${values(e.rel, e.column)}, indexOf(${paths(e.rel, e.column)}, ${path}))`;
}

/** The JSON text of a field's keys ('' when missing); no keys under an alias of the column itself is the column. */
function rawAt(e: Extract<Expr, { t: 'field' }>, keys: readonly string[]): string {
  const where = pathAt(e, keys);
  if (keys.length > 0) return lookup(e, where);
  if (!e.unnest) return `ifNull(${q(e.rel)}.${q(e.column)}, '')`;
  return `if(${where} = '', ifNull(${q(e.rel)}.${q(e.column)}, ''), ${lookup(e, where)})`;
}

/** Refuses what ClickHouse cannot run as DuckDB does. */
function unsupported(what: string): never {
  return refuse('construct', `${what} is not supported by the ClickHouse engine.`);
}

/**
 * The translated query as ClickHouse SQL (18.16 and later), printed from the same tree as the
 * DuckDB text the sandbox checked, with only constructs that map one to one: timestamps are
 * microseconds in an Int64, JSON fields are read from each JSON column's flattened paths and
 * values (`_metadata_paths`, `_metadata_values`, written by the loader), unnests are `arrayJoin`s
 * over the same combinations as on DuckDB. What both engines spell alike is printed by the
 * shared printer (print-sql.ts); this one overrides only the rest. Each SELECT's values get
 * internal names and are named outside it, since ClickHouse's aliases are seen everywhere in a
 * query (an alias `timestamp` would replace the column in WHERE). Anything else is an
 * `InvalidSqlError` (never a 500).
 *
 * @example
 * printClickHouse(query, { edge_logs: '(SELECT * FROM logs.edge_logs WHERE project = {project:String})' });
 */
export function printClickHouse(query: QueryIR, tables: ClickHouseTables): string {
  return new ClickHousePrinter(tables, new Map()).query(query);
}

/** ClickHouse's words for the shared printer (print-sql.ts): what 18.16 spells, stores or answers otherwise than DuckDB. */
class ClickHousePrinter extends SqlPrinter {
  protected override readonly names: Readonly<Record<string, string>> = {
    starts_with: 'startsWith',
    ends_with: 'endsWith',
    strpos: 'positionUTF8',
    lower: 'lowerUTF8',
    upper: 'upperUTF8',
    trim: 'trimBoth',
    ltrim: 'trimLeft',
    rtrim: 'trimRight',
    length: 'lengthUTF8',
    replace: 'replaceAll',
    ln: 'log',
  };
  /** The SELECT items of the query being printed (ORDER BY reads JSON values through them). */
  private items: SelectIR['items'] = [];

  constructor(
    private readonly tables: ClickHouseTables,
    private readonly ctes: ReadonlyMap<string, string>,
  ) {
    super();
  }

  query(query: QueryIR): string {
    let printer: ClickHousePrinter = this;
    for (const cte of query.ctes) printer = new ClickHousePrinter(this.tables, new Map([...printer.ctes, [cte.name, `(${printer.query(cte.query)})`]]));
    return printer.body(query);
  }

  private body(query: QueryIR): string {
    const names = uniqueNames(query.columns.map((c) => c.name));
    if (query.body.t === 'setop') return this.setOperation(query, query.body, names);
    const select = query.body;
    const outer = this.items;
    this.items = select.items;
    try {
      return this.select(query, select, names);
    } finally {
      this.items = outer;
    }
  }

  private select(query: QueryIR, select: SelectIR, names: string[]): string {
    const order = query.orderBy.map((o, i) => ({ ...o, ref: o.e.t === 'pos' ? `__c${o.e.index}` : `__o${i + 1}` }));
    const extra = order.filter((o) => o.e.t !== 'pos');
    if (select.distinct && extra.length > 0) unsupported('ORDER BY an expression that is not selected, with DISTINCT,');
    const items = [...select.items.map((item, i) => `${this.output(item.e)} AS __c${i + 1}`), ...extra.map((o) => `${this.expr(o.e)} AS ${o.ref}`)];
    const orderBy = order.length ? ` ORDER BY ${order.map((o) => `${o.ref} ${this.direction(o)}`).join(', ')}` : '';
    const limit = query.limit === null ? '' : ` LIMIT ${query.offset === null ? '' : `${query.offset}, `}${query.limit}`;
    if (query.limit === null && query.offset !== null) unsupported('OFFSET without LIMIT');
    const inner = `SELECT ${select.distinct ? 'DISTINCT ' : ''}${items.join(', ')}${this.clauses(select)}${orderBy}${limit}`;
    return `SELECT ${names.map((n, i) => `__c${i + 1} AS ${q(n)}`).join(', ')} FROM (${inner})${orderBy}`;
  }

  private setOperation(query: QueryIR, b: Extract<BodyIR, { t: 'setop' }>, names: string[]): string {
    if (b.op !== 'union') unsupported(`${b.op.toUpperCase()}`);
    const union = `SELECT ${b.all ? '' : 'DISTINCT '}* FROM (${this.query(b.left)} UNION ALL ${this.query(b.right)})`;
    const orderBy = query.orderBy.map((o) => `${q(names[(o.e as { index: number }).index - 1]!)} ${this.direction(o)}`);
    const limit = query.limit === null ? '' : ` LIMIT ${query.offset === null ? '' : `${query.offset}, `}${query.limit}`;
    return `SELECT ${names.map((n, i) => `${q(b.left.columns[i]!.name)} AS ${q(n)}`).join(', ')} FROM (${union})${orderBy.length ? ` ORDER BY ${orderBy.join(', ')}` : ''}${limit}`;
  }

  protected override from(f: FromIR): string {
    return f.t === 'join' ? unsupported('A JOIN of two tables or subqueries') : super.from(f);
  }

  protected range(f: Exclude<FromIR, { t: 'join' }>): string {
    const source = f.t === 'subquery' ? `(${this.query(f.query)})` : (this.ctes.get(f.name) ?? this.tables[f.name] ?? unsupported(`The table ${f.name}`));
    if (f.unnests.length === 0) return `${source} AS ${q(f.alias)}`;
    const columns = [...new Set(f.unnests.map((u) => u.column))];
    const bound = columns.map((c) => `position(ifNull(${q(c)}, ''), '[') = 0`).join(' AND ');
    const prefixes = `tuple(${f.unnests.map((u) => str(jsonKeyPath(u.path))).join(', ')})`;
    return (
      `(SELECT *, ${prefixes} AS ${q(UNNEST_COLUMN)} FROM ${source} AS ${q(f.alias)} WHERE ${bound}` +
      ` UNION ALL SELECT *, arrayJoin(${combinations(f.unnests)}) AS ${q(UNNEST_COLUMN)} FROM ${source} AS ${q(f.alias)} WHERE NOT (${bound})) AS ${q(f.alias)}`
    );
  }

  protected override subquery(query: QueryIR): string {
    if (correlated(query)) unsupported('A correlated subquery');
    return this.query(query);
  }

  /** A JSON field as its JSON text, a JSON null (or a missing field) as NULL. */
  protected jsonField(e: Extract<Expr, { t: 'field' }>): string {
    return `nullIf(nullIf(${this.fieldJson(e)}, ''), 'null')`;
  }

  /** A JSON value as selected (ORDER BY of a grouped query reads the selected value, not the rows'). */
  private selected(e: Expr): string {
    const key = JSON.stringify(e);
    const index = this.items.findIndex((item) => JSON.stringify(item.e) === key);
    return index < 0 ? (e.t === 'field' ? this.fieldJson(e) : unsupported('Reading a JSON value that is not a field')) : `__c${index + 1}`;
  }

  /** The JSON text of a field ('' when missing); with a subscript, of the rest of its path in the element (ir.ts, `Element`). */
  private fieldJson(e: Extract<Expr, { t: 'field' }>): string {
    if (!e.element) return rawAt(e, e.path);
    const { at, k, safe } = e.element;
    const record = rawAt(e, e.path.slice(0, at));
    const where = pathAt(e, e.path.slice(0, at));
    const rest = jsonKeyPath(e.path.slice(at));
    const single = k > 0 ? "''" : rest === '' ? record : lookup(e, `concat(${where}, ${str(rest)})`);
    const value = `if(startsWith(${record}, '['), ${lookup(e, `concat(${where}, ${str(`[${k}]${rest}`)})`)}, ${single})`;
    if (safe) return value;
    // Out of bounds fails the query, as BigQuery's OFFSET does (and DuckDB's printing).
    const out = `(startsWith(${record}, '[') AND indexOf(${paths(e.rel, e.column)}, concat(${where}, ${str(`[${k}]`)})) = 0)${k === 0 ? '' : ` OR (${record} NOT IN ('', 'null') AND NOT startsWith(${record}, '['))`}`;
    return `if(throwIf(${out}) = 0, ${value}, '')`;
  }

  protected jsonText(e: Expr): string {
    const json = e.t === 'field' ? this.fieldJson(e) : e.t === 'call' && e.fn === 'json_value' ? this.selected(e.args[0]!) : unsupported('Reading a JSON value that is not a field');
    return bind('__j', json, `if(startsWith(__j, '"'), visitParamExtractString(concat('{"v":', __j, '}'), 'v'), nullIf(nullIf(__j, ''), 'null'))`);
  }

  protected jsonIsString(e: Extract<Expr, { t: 'field' }>): string {
    return `startsWith(${this.fieldJson(e)}, '"')`;
  }

  protected quote(name: string): string {
    return q(name);
  }

  protected string(text: string): string {
    return str(text);
  }

  protected literal(kind: 'integer' | 'float' | 'boolean', value: string | boolean): string {
    if (kind === 'boolean') return value ? '1' : '0';
    return kind === 'float' ? `toFloat64(${str(String(value))})` : `toInt64(${value})`;
  }

  /** Timestamps are microseconds in an Int64. */
  protected micros(timestamp: string): string {
    return timestamp;
  }

  protected fromMicros(micros: string): string {
    return `(${micros})`;
  }

  /** Bound as a literal of microseconds (bind-params.ts), as the endpoints' own statements read it. */
  protected now(): string {
    return '{now:Int64}';
  }

  protected floorDiv(value: string, by: bigint): string {
    return `intDiv(${value} - (((${value} % ${by}) + ${by}) % ${by}), ${by})`;
  }

  protected truncDiv(value: string, by: bigint): string {
    return `intDiv(${value}, ${by})`;
  }

  protected convert(value: string, from: Kind, to: ColumnType, safe: boolean): string {
    // A NULL of no type yet stays one (the text functions below refuse a Nothing).
    if (from === 'null') return 'NULL';
    switch (to) {
      case 'text':
        return `toString(${value})`;
      case 'float':
        if (from === 'float') return value;
        if (from === 'integer' || from === 'boolean') return `toFloat64(${value})`;
        // Text read as a number: NULL when it is none for SAFE_CAST, the query's error for CAST (as DuckDB's).
        return safe ? `toFloat64OrNull(${value})` : bind('__v', value, 'plus(toFloat64OrNull(__v), throwIf(isNotNull(__v) AND isNull(toFloat64OrNull(__v))))');
      case 'integer':
        return `toInt64(${value})`;
      case 'boolean':
        if (from === 'integer') return `(${value} != 0)`;
        if (from === 'boolean') return value;
        return bind('__b', `lower(${value})`, `multiIf(__b = 'true', 1, __b = 'false', 0, ${safe ? 'NULL' : "throwIf(isNotNull(__b) AND __b NOT IN ('true', 'false')) * NULL"})`);
      default:
        return unsupported(`CAST to ${String(to).toUpperCase()}`);
    }
  }

  /**
   * Spelled out: ClickHouse documents banker's rounding (2.5 to 2) for its round() of floats, BigQuery
   * rounds half away from zero. From the fraction, which `x - trunc(x)` gives exactly (floor(x + 0.5)
   * would round x + 0.5 first: 0.49999999999999994 to 1, 2^52 + 1 to 2^52 + 2).
   */
  protected override round(value: string): string {
    return bind('__n', value, 'if(abs(__n - trunc(__n)) >= 0.5, trunc(__n) + if(__n < 0, -1, 1), trunc(__n))');
  }

  // Three-valued logic spelled out: 18.16's OR reads NULL as false (NULL OR false is false, not NULL).
  protected override and(a: string, b: string): string {
    return and(a, b);
  }

  protected override or(a: string, b: string): string {
    return kleene('greatest', a, b);
  }

  /** A number as Float64 where floats and integers meet (18.16 finds no common type for Int64 and Float64). */
  protected override float(e: Expr): string {
    return kindOf(e) === 'integer' ? `toFloat64(${this.expr(e)})` : this.expr(e);
  }

  // ClickHouse's LIKE escapes with a backslash, as BigQuery's.
  protected like(not: boolean, value: string, pattern: string): string {
    return `${not ? 'notLike' : 'like'}(${value}, ${pattern})`;
  }

  protected matches(text: string, pattern: Expr, printed: string): string {
    return `match(${text}, ${regex(pattern, printed)})`;
  }

  protected extractGroup(text: string, pattern: Expr, printed: string): string {
    return `extract(${text}, ${regex(pattern, printed)})`;
  }

  override expr(e: Expr): string {
    return e.t === 'pos' ? unsupported('A position outside ORDER BY') : super.expr(e);
  }

  /** NULL IN (...) is NULL (ClickHouse says 0). */
  protected override in(e: Extract<Expr, { t: 'in' }>): string {
    const float = kindOf(e.arg) === 'float' || e.list.some((x) => kindOf(x) === 'float');
    const list = e.list.map((x) => (float ? this.float(x) : this.expr(x)));
    return bind('__x', this.expr(e.arg), `if(isNull(__x), NULL, ${float ? 'toFloat64(__x)' : '__x'} ${e.not ? 'NOT IN' : 'IN'} (${list.join(', ')}))`);
  }

  protected override exists(): string {
    return unsupported('EXISTS');
  }

  protected override between(e: Extract<Expr, { t: 'between' }>): string {
    const inside = bind('__x', this.expr(e.arg), and(`(__x >= ${this.expr(e.lo)})`, `(__x <= ${this.expr(e.hi)})`));
    return e.not ? `(NOT ${inside})` : inside;
  }

  protected override aggregate(e: Extract<Expr, { t: 'agg' }>): string {
    if (e.arg === null) return 'count()';
    const arg = this.expr(e.arg);
    // BigQuery's aggregates of no value are NULL (ClickHouse's are 0 for non-Nullable values).
    const orNull = (sql: string) => `if(count(${arg}) = 0, NULL, ${sql})`;
    switch (e.fn) {
      case 'count':
        return e.distinct ? `uniqExact(${arg})` : `count(${arg})`;
      case 'approx_count_distinct':
        return `uniqExact(${arg})`;
      case 'countif':
        return `countIf(ifNull(${arg}, 0))`;
      case 'logical_and':
        return orNull(`min(${arg})`);
      case 'logical_or':
        return orNull(`max(${arg})`);
      case 'any_value':
        return orNull(`any(${arg})`);
      case 'sum':
        return orNull(e.distinct ? `sumDistinct(${arg})` : `sum(${arg})`);
      case 'avg':
        return e.distinct ? unsupported('AVG(DISTINCT ...)') : orNull(`avg(${arg})`);
      // The sorted values at 1-based position max(1, ceil(k * count / n)), as DuckDB's quantile_disc (print-sql.ts).
      case 'quantile':
        return orNull(`arrayElement(arraySort(groupArray(${arg})), toUInt64(greatest(1, intDiv(count(${arg}) * ${e.at!.k} + ${e.at!.n - 1}, ${e.at!.n}))))`);
      // Each of the n + 1 by the same rule, written as a JSON array (numbers as toString writes them, which JSON reads alike).
      case 'quantiles': {
        const n = e.every!.length - 1;
        const each = `toString(assumeNotNull(arrayElement(__s, toUInt64(greatest(1, intDiv(length(__s) * __k + ${n - 1}, ${n}))))))`;
        return bind('__s', `arraySort(groupArray(${arg}))`, `if(empty(__s), NULL, concat('[', arrayStringConcat(arrayMap(__k -> ${each}, range(${n + 1})), ','), ']'))`);
      }
      default:
        return orNull(`${e.fn}(${arg})`);
    }
  }

  protected override call(fn: string, a: string[], args: Expr[]): string {
    const ts = (x: string) => `toDateTime(intDiv(${x} - (((${x} % 1000000) + 1000000) % 1000000), 1000000), 'UTC')`;
    const textArg = (i: number) => String((args[i] as { value: string }).value);
    switch (fn) {
      case 'regexp_replace':
        return `replaceRegexpAll(${a[0]}, ${regex(args[1]!, a[1]!)}, ${a[2]})`;
      case 'strpos':
      case 'length':
        return `toInt64(${super.call(fn, a, args)})`;
      case 'substr':
        if (args[1]!.t !== 'lit' || !/^[1-9][0-9]*$/.test(String(args[1]!.value))) return unsupported('SUBSTR from a position that is not a positive number');
        return `substringUTF8(${a[0]}, toUInt64(${a[1]})${a[2] === undefined ? '' : `, toUInt64(greatest(${a[2]}, 0))`})`;
      // Two at a time: 18.16's greatest and least take two arguments (NULL when either is, as BigQuery's).
      case 'greatest':
      case 'least':
        return a.reduce((x, y) => `${fn}(${x}, ${y})`);
      case 'timestamp_trunc': {
        // As Int64: 18.16 types 3600000000 as UInt32, and `x % u + u` then wraps past 2^32.
        const u = `toInt64(${UNIT_MICROS[textArg(1) as TimeUnit]})`;
        return `(${a[0]} - (((${a[0]} % ${u}) + ${u}) % ${u}))`;
      }
      case 'format_timestamp':
        return bind('__f', ts(a[1]!), formatTime('__f', textArg(0).replace(/%Z/g, 'UTC').replace(/%z/g, '+0000')));
      case 'extract':
        return extractPart(textArg(0), ts(a[1]!));
      case 'json_value_text':
        return jsonValueOfText(a[0]!, jsonKeys(textArg(1)), { str, bind });
      case 'json_query_text':
        return unsupported('JSON_QUERY of a STRING');
      default:
        return super.call(fn, a, args);
    }
  }
}

/** AND with SQL's three values (false wins over NULL). */
function and(a: string, b: string): string {
  return kleene('least', a, b);
}

/**
 * AND (least) and OR (greatest) of SQL's three values, each operand written once (a nesting of
 * them would otherwise grow the text exponentially): false, NULL, true as 0, 1, 2.
 */
function kleene(fn: 'least' | 'greatest', a: string, b: string): string {
  const three = (x: string) => `ifNull(toUInt8(${x}) * 2, 1)`;
  return `[toNullable(toUInt8(0)), NULL, toNullable(toUInt8(1))][${fn}(${three(a)}, ${three(b)}) + 1]`;
}

/** `body` with `value` bound to `name` once (a lambda over a one-element array), so the value's text is not repeated. */
function bind(name: string, value: string, body: string): string {
  return `arrayMap(${name} -> ${body}, [${value}])[1]`;
}

/** An unnest alias's position in its range's tuple of combinations (1-based). */
function slotIndex(alias: UnnestAlias): number {
  return Number(alias.slot.slice(1));
}

/** Every combination of the aliases' prefixes in the flattened paths (as DuckDB's combinations). */
function combinations(aliases: readonly UnnestAlias[]): string {
  const variable = (a: UnnestAlias) => `__${a.slot}`;
  const lookup = (p: string, col: string) => `if(${p} = '', ifNull(${q(col)}, ''), arrayElement(${q(flatValuesColumn(col))}, indexOf(${q(flatPathsColumn(col))}, ${p})))`;
  const elements = (a: UnnestAlias) => {
    const prefix = a.parent ? `concat(${variable(a.parent)}, ${str(jsonKeyPath(a.path.slice(a.parent.path.length)))})` : str(jsonKeyPath(a.path));
    const items = `arrayFilter(p -> startsWith(p, concat(${prefix}, '[')) AND match(substring(p, length(${prefix}) + 2), '^[0-9]+\\\\]$'), ${q(flatPathsColumn(a.column))})`;
    return `if(startsWith(${lookup(prefix, a.column)}, '['), if(empty(${items}), ['\\0'], ${items}), [${prefix}])`;
  };
  let inner = `tuple(${aliases.map(variable).join(', ')})`;
  for (const a of [...aliases].reverse()) inner = `arrayMap(${variable(a)} -> ${inner}, ${elements(a)})`;
  for (let i = 1; i < aliases.length; i++) inner = `arrayReduce('groupArrayArray', ${inner})`;
  return inner;
}

function extractPart(part: string, dateTime: string): string {
  switch (part) {
    case 'second':
      return `toInt64(toSecond(${dateTime}))`;
    case 'minute':
      return `toInt64(toMinute(${dateTime}))`;
    case 'hour':
      return `toInt64(toHour(${dateTime}))`;
    case 'day':
      return `toInt64(toDayOfMonth(${dateTime}))`;
    case 'month':
      return `toInt64(toMonth(${dateTime}))`;
    case 'year':
      return `toInt64(toYear(${dateTime}))`;
    case 'dayofweek':
      return `toInt64(toDayOfWeek(${dateTime}) % 7 + 1)`;
    case 'dayofyear':
      return `toInt64(toDayOfYear(${dateTime}))`;
    default:
      return unsupported(`EXTRACT(${part.toUpperCase()}) of a timestamp`);
  }
}

/** Output names made unique as the sandbox names them (`a`, `a_1`). */
function uniqueNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  return names.map((name) => {
    let out = name;
    for (let i = 1; seen.has(out.toLowerCase()); i++) out = `${name}_${i}`;
    seen.add(out.toLowerCase());
    return out;
  });
}

/** Whether a subquery reads a range of an enclosing query (ClickHouse runs no correlated subqueries). */
function correlated(query: QueryIR): boolean {
  const defined = new Set<string>();
  const used = new Set<string>();
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) return value.forEach(walk);
    const node = value as Record<string, unknown>;
    if ((node.t === 'table' || node.t === 'subquery') && typeof node.alias === 'string') defined.add(node.alias);
    if ((node.t === 'col' || node.t === 'field') && typeof node.rel === 'string') used.add(node.rel);
    for (const [key, child] of Object.entries(node)) if (key !== 'unnest' && key !== 'parent') walk(child);
  };
  walk(query);
  return [...used].some((rel) => !defined.has(rel));
}
