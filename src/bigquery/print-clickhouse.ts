import type { BodyIR, Expr, FromIR, QueryIR, SelectIR, TimeUnit, UnnestAlias } from './ir';
import { UNNEST_COLUMN } from './ir';
import { kindOf } from './kinds';
import { refuse } from './refuse';
import { flatPathsColumn, flatValuesColumn, jsonKeyPath } from '../util/json-flat-paths';
import { capturingGroups } from './print-duckdb';

/** Table name -> the FROM item ClickHouse reads it by: a subquery over the source's table, bound to the request. */
export type ClickHouseTables = Readonly<Record<string, string>>;

const q = (name: string) => `\`${name.replace(/[\\`]/g, (c) => `\\${c}`)}\``;
/**
 * A string literal. A `{` starts a literal of its own: the engine binds `{name:Type}` placeholders
 * by their text (as external data on 18.x), so none may appear inside a caller's string.
 */
const str = (text: string): string => {
  const literal = (t: string) => `'${t.replace(/[\\']/g, (c) => `\\${c}`)}'`;
  if (!text.includes('{')) return literal(text);
  return `concat(${text
    .split('{')
    .map((part, i) => (i === 0 ? literal(part) : `'{', ${literal(part)}`))
    .join(', ')})`;
};
const UNIT_MICROS: Record<TimeUnit, bigint> = {
  microsecond: 1n,
  millisecond: 1000n,
  second: 1_000_000n,
  minute: 60_000_000n,
  hour: 3_600_000_000n,
  day: 86_400_000_000n,
};
const paths = (rel: string, column: string) => `${q(rel)}.${q(flatPathsColumn(column))}`;
const values = (rel: string, column: string) => `${q(rel)}.${q(flatValuesColumn(column))}`;

/** Refuses what ClickHouse cannot run as DuckDB does. */
function unsupported(what: string): never {
  return refuse('construct', `${what} is not supported by the ClickHouse engine.`);
}

/**
 * The translated query as ClickHouse SQL (18.16 and later), printed from the same tree as the
 * DuckDB text the sandbox checked, with only constructs that map one to one: timestamps are
 * microseconds in an Int64, JSON fields are read from each JSON column's flattened paths and
 * values (`_metadata_paths`, `_metadata_values`, written by the loader), unnests are `arrayJoin`s
 * over the same combinations as on DuckDB. Each SELECT's values get internal names and are named
 * outside it, since ClickHouse's aliases are seen everywhere in a query (an alias `timestamp`
 * would replace the column in WHERE). Anything else is an `InvalidSqlError` (never a 500).
 *
 * @example
 * printClickHouse(query, { edge_logs: '(SELECT * FROM logs.edge_logs WHERE project = {project:String})' });
 */
export function printClickHouse(query: QueryIR, tables: ClickHouseTables): string {
  return new Printer(tables, new Map()).query(query);
}

class Printer {
  /** The SELECT items of the query being printed (ORDER BY reads JSON values through them). */
  private items: SelectIR['items'] = [];

  constructor(
    private readonly tables: ClickHouseTables,
    private readonly ctes: ReadonlyMap<string, string>,
  ) {}

  query(query: QueryIR): string {
    let printer: Printer = this;
    for (const cte of query.ctes) printer = new Printer(this.tables, new Map([...printer.ctes, [cte.name, `(${printer.query(cte.query)})`]]));
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
    const orderBy = order.length ? ` ORDER BY ${order.map((o) => `${o.ref} ${o.desc ? 'DESC' : 'ASC'} ${nulls(o.desc, o.nullsFirst)}`).join(', ')}` : '';
    const limit = query.limit === null ? '' : ` LIMIT ${query.offset === null ? '' : `${query.offset}, `}${query.limit}`;
    if (query.limit === null && query.offset !== null) unsupported('OFFSET without LIMIT');
    const inner = `SELECT ${select.distinct ? 'DISTINCT ' : ''}${items.join(', ')}${this.clauses(select)}${orderBy}${limit}`;
    return `SELECT ${names.map((n, i) => `__c${i + 1} AS ${q(n)}`).join(', ')} FROM (${inner})${orderBy}`;
  }

  private setOperation(query: QueryIR, b: Extract<BodyIR, { t: 'setop' }>, names: string[]): string {
    if (b.op !== 'union') unsupported(`${b.op.toUpperCase()}`);
    const union = `SELECT ${b.all ? '' : 'DISTINCT '}* FROM (${this.query(b.left)} UNION ALL ${this.query(b.right)})`;
    const orderBy = query.orderBy.map((o) => `${q(names[(o.e as { index: number }).index - 1]!)} ${o.desc ? 'DESC' : 'ASC'} ${nulls(o.desc, o.nullsFirst)}`);
    const limit = query.limit === null ? '' : ` LIMIT ${query.offset === null ? '' : `${query.offset}, `}${query.limit}`;
    return `SELECT ${names.map((n, i) => `${q(query.body.t === 'setop' ? query.body.left.columns[i]!.name : n)} AS ${q(n)}`).join(', ')} FROM (${union})${orderBy.length ? ` ORDER BY ${orderBy.join(', ')}` : ''}${limit}`;
  }

  private clauses(s: SelectIR): string {
    let sql = s.from ? ` FROM ${this.from(s.from)}` : '';
    if (s.where) sql += ` WHERE ${this.expr(s.where)}`;
    if (s.groupBy.length) sql += ` GROUP BY ${s.groupBy.map((g) => this.output(g)).join(', ')}`;
    if (s.having) sql += ` HAVING ${this.expr(s.having)}`;
    return sql;
  }

  private from(f: FromIR): string {
    if (f.t === 'join') return unsupported('A JOIN of two tables or subqueries');
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

  /** A value where it is a result (SELECT, GROUP BY): a JSON field as its JSON text, a JSON null as NULL. */
  private output(e: Expr): string {
    if (e.t === 'field') return `nullIf(nullIf(${this.fieldJson(e)}, ''), 'null')`;
    return this.expr(e);
  }

  /** A JSON value as selected (ORDER BY of a grouped query reads the selected value, not the rows'). */
  private selected(e: Expr): string {
    const key = JSON.stringify(e);
    const index = this.items.findIndex((item) => JSON.stringify(item.e) === key);
    return index < 0 ? (e.t === 'field' ? this.fieldJson(e) : unsupported('Reading a JSON value that is not a field')) : `__c${index + 1}`;
  }

  /** The JSON text of a field ('' when missing). */
  private fieldJson(e: Extract<Expr, { t: 'field' }>): string {
    const lookup = (path: string) => `arrayElement(${values(e.rel, e.column)}, indexOf(${paths(e.rel, e.column)}, ${path}))`;
    if (!e.unnest) return lookup(str(jsonKeyPath(e.path)));
    const prefix = `tupleElement(${q(e.rel)}.${q(UNNEST_COLUMN)}, ${slotIndex(e.unnest)})`;
    if (e.path.length > 0) return lookup(`concat(${prefix}, ${str(jsonKeyPath(e.path))})`);
    return `if(${prefix} = '', ifNull(${q(e.rel)}.${q(e.column)}, ''), ${lookup(prefix)})`;
  }

  private text(e: Expr): string {
    const json = e.t === 'field' ? this.fieldJson(e) : e.t === 'call' && e.fn === 'json_value' ? this.selected(e.args[0]!) : unsupported('Reading a JSON value that is not a field');
    return bind('__j', json, `if(startsWith(__j, '"'), visitParamExtractString(concat('{"v":', __j, '}'), 'v'), nullIf(nullIf(__j, ''), 'null'))`);
  }

  expr(e: Expr): string {
    switch (e.t) {
      case 'lit':
        if (e.kind === 'null') return 'NULL';
        if (e.kind === 'text') return str(String(e.value));
        if (e.kind === 'boolean') return e.value ? '1' : '0';
        if (e.kind === 'float') return `toFloat64(${str(String(e.value))})`;
        return `toInt64(${e.value})`;
      case 'ts':
        return `toInt64(${e.micros})`;
      case 'interval':
        return unsupported('An INTERVAL outside TIMESTAMP_ADD and TIMESTAMP_SUB');
      case 'col':
        return `${q(e.rel)}.${q(e.name)}`;
      case 'field':
        return this.output(e);
      case 'conv': {
        const text = this.text(e.arg);
        if (e.to === 'text') return text;
        if (e.to === 'float') return `toFloat64OrNull(${text})`;
        return bind('__t', `lower(${text})`, "multiIf(__t = 'true', 1, __t = 'false', 0, NULL)");
      }
      case 'cast':
        return this.cast(e);
      case 'call':
        return this.call(e.fn, e.args);
      case 'op':
        return this.op(e);
      case 'in': {
        // NULL IN (...) is NULL (ClickHouse says 0).
        const arg = this.expr(e.arg);
        const float = kindOf(e.arg) === 'float' || e.list.some((x) => kindOf(x) === 'float');
        const list = e.list.map((x) => (float ? this.float(x) : this.expr(x)));
        return bind('__x', arg, `if(isNull(__x), NULL, ${float ? 'toFloat64(__x)' : '__x'} ${e.not ? 'NOT IN' : 'IN'} (${list.join(', ')}))`);
      }
      case 'in_query':
        if (correlated(e.query)) unsupported('A correlated subquery');
        return `(${this.expr(e.arg)} ${e.not ? 'NOT IN' : 'IN'} (${this.query(e.query)}))`;
      case 'exists':
        return unsupported('EXISTS');
      case 'between': {
        const inside = bind('__x', this.expr(e.arg), and(`(__x >= ${this.expr(e.lo)})`, `(__x <= ${this.expr(e.hi)})`));
        return e.not ? `(NOT ${inside})` : inside;
      }
      case 'case': {
        const value = (x: Expr) => (e.kind === 'float' ? this.float(x) : this.expr(x));
        return `CASE ${e.whens.map(([c, r]) => `WHEN ${this.expr(c)} THEN ${value(r)}`).join(' ')} ELSE ${e.else ? value(e.else) : 'NULL'} END`;
      }
      case 'agg':
        return this.aggregate(e);
      case 'subquery':
        if (correlated(e.query)) unsupported('A correlated subquery');
        return `(${this.query(e.query)})`;
      case 'pos':
        return unsupported('A position outside ORDER BY');
    }
  }

  /** A number as Float64 where floats and integers meet (18.16 finds no common type for Int64 and Float64). */
  private float(e: Expr): string {
    return kindOf(e) === 'integer' ? `toFloat64(${this.expr(e)})` : this.expr(e);
  }

  private op(e: Extract<Expr, { t: 'op' }>): string {
    const [a, b] = e.args.map((x) => this.expr(x));
    switch (e.op) {
      // Three-valued logic spelled out: 18.16's OR reads NULL as false (NULL OR false is false, not NULL).
      case 'and':
        return and(a!, b!);
      case 'or':
        return kleene('greatest', a!, b!);
      case 'not':
        return `(NOT ${a})`;
      case 'neg':
        return `(-${a})`;
      case 'is_null':
        return `(${a} IS NULL)`;
      case 'is_not_null':
        return `(${a} IS NOT NULL)`;
      // ClickHouse's LIKE escapes with a backslash, as BigQuery's.
      case 'like':
        return `like(${a}, ${b})`;
      case 'not_like':
        return `notLike(${a}, ${b})`;
      case '<>':
        return `(${a} != ${b})`;
      default:
        return `(${a} ${e.op} ${b})`;
    }
  }

  private aggregate(e: Extract<Expr, { t: 'agg' }>): string {
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
      default:
        return orNull(`${e.fn}(${arg})`);
    }
  }

  private cast(e: Extract<Expr, { t: 'cast' }>): string {
    const from = kindOf(e.arg);
    const value = from === 'json' ? this.text(e.arg) : this.expr(e.arg);
    // Text read as a number: NULL when it is none for SAFE_CAST, the query's error for CAST (as DuckDB's).
    const parsed = e.safe ? `toFloat64OrNull(${value})` : bind('__v', value, 'plus(toFloat64OrNull(__v), throwIf(isNotNull(__v) AND isNull(toFloat64OrNull(__v))))');
    const number = from === 'float' ? value : from === 'integer' || from === 'boolean' ? `toFloat64(${value})` : parsed;
    switch (e.to) {
      case 'text':
        return `toString(${value})`;
      case 'float':
        return from === 'integer' ? `toFloat64(${value})` : number;
      // BigQuery rounds half away from zero.
      case 'integer':
        return from === 'boolean' ? `toInt64(${value})` : `toInt64(${bind('__n', number, 'if(__n < 0, -floor(-__n + 0.5), floor(__n + 0.5))')})`;
      case 'boolean':
        if (from === 'integer') return `(${value} != 0)`;
        return bind('__b', `lower(${value})`, `multiIf(__b = 'true', 1, __b = 'false', 0, ${e.safe ? 'NULL' : "throwIf(isNotNull(__b) AND __b NOT IN ('true', 'false')) * NULL"})`);
      default:
        return unsupported(`CAST to ${String(e.to).toUpperCase()}`);
    }
  }

  private call(fn: string, args: Expr[]): string {
    const float = ['coalesce', 'nullif', 'greatest', 'least'].includes(fn) && args.some((x) => kindOf(x) === 'float');
    const a = args.map((x) => (x.t === 'interval' ? '' : float ? this.float(x) : this.expr(x)));
    const regex = (i: number) => (args[i]!.t === 'lit' ? str(`(?-s)${String((args[i] as { value: string }).value)}`) : `concat('(?-s)', ${a[i]})`);
    const ts = (x: string) => `toDateTime(intDiv(${x} - (((${x} % 1000000) + 1000000) % 1000000), 1000000), 'UTC')`;
    switch (fn) {
      case 'regexp_contains':
        return `match(${a[0]}, ${regex(1)})`;
      case 'regexp_extract':
        if (args[1]!.t !== 'lit' || capturingGroups(String((args[1] as { value: string }).value)) > 1) return unsupported('This REGEXP_EXTRACT');
        return `if(match(${a[0]}, ${regex(1)}), extract(${a[0]}, ${regex(1)}), NULL)`;
      case 'regexp_replace':
        return `replaceRegexpAll(${a[0]}, ${regex(1)}, ${a[2]})`;
      case 'starts_with':
        return `startsWith(${a[0]}, ${a[1]})`;
      case 'ends_with':
        return `endsWith(${a[0]}, ${a[1]})`;
      case 'strpos':
        return `toInt64(positionUTF8(${a[0]}, ${a[1]}))`;
      case 'lower':
        return `lowerUTF8(${a[0]})`;
      case 'upper':
        return `upperUTF8(${a[0]})`;
      case 'trim':
        return `trimBoth(${a[0]})`;
      case 'ltrim':
        return `trimLeft(${a[0]})`;
      case 'rtrim':
        return `trimRight(${a[0]})`;
      case 'length':
        return `toInt64(lengthUTF8(${a[0]}))`;
      case 'replace':
        return `replaceAll(${a[0]}, ${a[1]}, ${a[2]})`;
      case 'substr':
        if (args[1]!.t !== 'lit' || !/^[1-9][0-9]*$/.test(String(args[1]!.value))) return unsupported('SUBSTR from a position that is not a positive number');
        return `substringUTF8(${a[0]}, toUInt64(${a[1]})${a[2] === undefined ? '' : `, toUInt64(greatest(${a[2]}, 0))`})`;
      case 'concat':
        return `concat(${a.join(', ')})`;
      case 'ln':
        return `log(${a[0]})`;
      case 'safe_divide':
        return `if(${a[1]} = 0, NULL, ${a[0]} / ${a[1]})`;
      case 'mod':
        return `(${a[0]} % ${a[1]})`;
      case 'round':
        return a.length === 1 ? `if(${a[0]} < 0, -floor(-${a[0]} + 0.5), floor(${a[0]} + 0.5))` : `round(${a[0]}, ${a[1]})`;
      case 'coalesce':
        return `coalesce(${a.join(', ')})`;
      case 'nullif':
        return `nullIf(${a[0]}, ${a[1]})`;
      case 'greatest':
      case 'least':
        return a.reduce((x, y) => `${fn}(${x}, ${y})`);
      case 'timestamp_trunc': {
        // As Int64: 18.16 types 3600000000 as UInt32, and `x % u + u` then wraps past 2^32.
        const u = `toInt64(${UNIT_MICROS[(args[1] as { value: TimeUnit }).value]})`;
        return `(${a[0]} - (((${a[0]} % ${u}) + ${u}) % ${u}))`;
      }
      case 'timestamp_add': {
        const i = args[1] as Extract<Expr, { t: 'interval' }>;
        return `(${a[0]} + toInt64(${i.n * UNIT_MICROS[i.unit]}))`;
      }
      case 'timestamp_diff':
        return `intDiv(${a[0]} - ${a[1]}, ${UNIT_MICROS[(args[2] as { value: TimeUnit }).value]})`;
      case 'unix_seconds':
        return `intDiv(${a[0]} - (((${a[0]} % 1000000) + 1000000) % 1000000), 1000000)`;
      case 'unix_millis':
        return `intDiv(${a[0]} - (((${a[0]} % 1000) + 1000) % 1000), 1000)`;
      case 'unix_micros':
        return a[0]!;
      case 'timestamp_seconds':
        return `(${a[0]} * 1000000)`;
      case 'timestamp_millis':
        return `(${a[0]} * 1000)`;
      case 'timestamp_micros':
        return a[0]!;
      case 'format_timestamp':
        return `formatDateTime(${ts(a[1]!)}, ${str(
          String((args[0] as { value: string }).value)
            .replace(/%Z/g, 'UTC')
            .replace(/%z/g, '+0000'),
        )}, 'UTC')`;
      case 'extract':
        return extractPart(String((args[0] as { value: string }).value), ts(a[1]!), a[1]!);
      case 'json_value':
        return this.output(args[0]!);
      case 'json_value_text':
      case 'json_query_text':
        return unsupported('JSON_VALUE and JSON_QUERY of a STRING');
      case 'abs':
      case 'floor':
      case 'ceil':
      case 'sqrt':
      case 'log10':
      case 'exp':
      case 'pow':
        return `${fn}(${a.join(', ')})`;
      default:
        return unsupported(`The function ${fn.toUpperCase()}`);
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

function nulls(desc: boolean, nullsFirst: boolean | null): string {
  return (nullsFirst ?? !desc) ? 'NULLS FIRST' : 'NULLS LAST';
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

function extractPart(part: string, dateTime: string, micros: string): string {
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
      return unsupported(`EXTRACT(${part.toUpperCase()}) of ${micros ? 'a timestamp' : ''}`);
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
