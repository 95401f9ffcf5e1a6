import type { ColumnType } from '../sql/column-types';
import type { Expr, FromIR, Kind, QueryIR, SelectIR, TimeUnit } from './ir';
import { kindOf } from './kinds';
import { refuse } from './refuse';

type Of<T extends Expr['t']> = Extract<Expr, { t: T }>;

/** Microseconds in one of each unit of TIMESTAMP_TRUNC, TIMESTAMP_ADD/SUB and TIMESTAMP_DIFF. */
export const UNIT_MICROS: Record<TimeUnit, bigint> = {
  microsecond: 1n,
  millisecond: 1000n,
  second: 1_000_000n,
  minute: 60_000_000n,
  hour: 3_600_000_000n,
  day: 86_400_000_000n,
};

/**
 * The printer of the translated query that both engines' printers extend: every construct spelled
 * the same in DuckDB and ClickHouse is written here once, and a dialect overrides only what it
 * spells otherwise (its quoting, literals, how it stores timestamps and reads JSON, its function
 * names, the logic it lacks). A new construct goes here, built from the dialect's hooks
 * (`micros`, `fromMicros`, `convert`, `round`, ...), and a printer overrides it only where its
 * engine needs other words for the same answer.
 *
 * @example
 * class MyPrinter extends SqlPrinter { ... } // implements the abstract hooks
 * new MyPrinter().query(translated);
 */
export abstract class SqlPrinter {
  /** The whole query, as the dialect runs it. */
  abstract query(query: QueryIR): string;

  /** A quoted name. */
  protected abstract quote(name: string): string;
  /** A string literal. */
  protected abstract string(text: string): string;
  /** A number or boolean literal (its text as written). */
  protected abstract literal(kind: 'integer' | 'float' | 'boolean', value: string | boolean): string;
  /** A timestamp's microseconds since the epoch, as an integer. */
  protected abstract micros(timestamp: string): string;
  /** The timestamp of an integer of microseconds since the epoch. */
  protected abstract fromMicros(micros: string): string;
  /** The request's clock: the endpoint's bound `now` parameter. */
  protected abstract now(): string;
  /** Integer division rounding down (UNIX_SECONDS of a time before 1970). */
  protected abstract floorDiv(value: string, by: bigint): string;
  /** Integer division rounding towards zero (TIMESTAMP_DIFF counts whole units). */
  protected abstract truncDiv(value: string, by: bigint): string;
  /** A JSON field where it is a value: its JSON, a JSON null as NULL. */
  protected abstract jsonField(e: Of<'field'>): string;
  /** A JSON value read as text: a string's text, anything else its JSON. */
  protected abstract jsonText(e: Expr): string;
  /** Whether a JSON field holds a string (NULL when it is missing or null). */
  protected abstract jsonIsString(e: Of<'field'>): string;
  /** A value of kind `from` as a value of kind `to`; `safe` is NULL where CAST fails the query. */
  protected abstract convert(value: string, from: Kind, to: ColumnType, safe: boolean): string;
  /** `[NOT] LIKE` with BigQuery's escape, the backslash. */
  protected abstract like(not: boolean, value: string, pattern: string, patternExpr: Expr): string;
  /** Whether an RE2 pattern matches part of a text; `.` does not match a newline, as in BigQuery. */
  protected abstract matches(text: string, pattern: Expr, printed: string): string;
  /** The text an RE2 pattern's capturing group (or, with none, the whole match) matches. */
  protected abstract extractGroup(text: string, pattern: Expr, printed: string, group: number): string;

  /** The dialect's names of the tree's functions that only differ by name (`lower` is ClickHouse's `lowerUTF8`). */
  protected readonly names: Readonly<Record<string, string>> = {};

  /** ROUND of a FLOAT64: half away from zero, as BigQuery (DuckDB's round does this). */
  protected round(value: string): string {
    return `round(${value})`;
  }

  /** Three-valued AND (false wins over NULL). */
  protected and(a: string, b: string): string {
    return `(${a} AND ${b})`;
  }

  /** Three-valued OR (true wins over NULL). */
  protected or(a: string, b: string): string {
    return `(${a} OR ${b})`;
  }

  /** A number where floats and integers meet (CASE branches, IN lists, COALESCE). */
  protected float(e: Expr): string {
    return this.expr(e);
  }

  /** A query inside another (IN, scalar, EXISTS, FROM). */
  protected subquery(query: QueryIR): string {
    return this.query(query);
  }

  /** A value where it is a result (SELECT, GROUP BY): a JSON field's JSON, a JSON null as NULL. */
  protected output(e: Expr): string {
    return e.t === 'field' ? this.jsonField(e) : this.expr(e);
  }

  /** FROM, WHERE, GROUP BY and HAVING of a SELECT (with the leading space). */
  protected clauses(s: SelectIR): string {
    let sql = s.from ? ` FROM ${this.from(s.from)}` : '';
    if (s.where) sql += ` WHERE ${this.expr(s.where)}`;
    if (s.groupBy.length) sql += ` GROUP BY ${s.groupBy.map((g) => this.output(g)).join(', ')}`;
    if (s.having) sql += ` HAVING ${this.expr(s.having)}`;
    return sql;
  }

  /** A FROM item: a join, or a range (a table or a subquery, with its unnests). */
  protected from(f: FromIR): string {
    if (f.t !== 'join') return this.range(f);
    const left = this.from(f.left);
    const right = this.from(f.right);
    if (f.kind === 'cross') return `${left} CROSS JOIN ${right}`;
    return `${left} ${f.kind.toUpperCase()} JOIN ${right} ON ${this.expr(f.on!)}`;
  }

  /** A table or subquery of FROM with its alias and unnests. */
  protected abstract range(f: Exclude<FromIR, { t: 'join' }>): string;

  /** An ORDER BY key's direction; NULLs first ascending and last descending unless told, as BigQuery. */
  protected direction(o: QueryIR['orderBy'][number]): string {
    return `${o.desc ? 'DESC' : 'ASC'} ${(o.nullsFirst ?? !o.desc) ? 'NULLS FIRST' : 'NULLS LAST'}`;
  }

  expr(e: Expr): string {
    switch (e.t) {
      case 'lit':
        if (e.kind === 'null') return 'NULL';
        if (e.kind === 'text') return this.string(String(e.value));
        return this.literal(e.kind, e.value as string | boolean);
      case 'ts':
        return this.fromMicros(this.literal('integer', String(e.micros)));
      case 'now':
        return this.now();
      case 'interval':
        return refuse('construct', 'An INTERVAL is only an argument of TIMESTAMP_ADD and TIMESTAMP_SUB.');
      case 'col':
        return `${this.quote(e.rel)}.${this.quote(e.name)}`;
      case 'field':
        return this.jsonField(e);
      case 'conv': {
        const text = this.jsonText(e.arg);
        return e.to === 'text' ? text : this.convert(text, 'text', e.to, true);
      }
      case 'cast':
        return this.cast(e);
      case 'call':
        return this.call(e.fn, this.args(e.fn, e.args), e.args);
      case 'op':
        return this.op(e);
      case 'in':
        return this.in(e);
      case 'in_query':
        return `(${this.expr(e.arg)} ${e.not ? 'NOT IN' : 'IN'} (${this.subquery(e.query)}))`;
      case 'exists':
        return this.exists(e);
      case 'between':
        return this.between(e);
      case 'case': {
        const value = (x: Expr) => (e.kind === 'float' ? this.float(x) : this.expr(x));
        return `CASE ${e.whens.map(([c, r]) => `WHEN ${this.expr(c)} THEN ${value(r)}`).join(' ')} ELSE ${e.else ? value(e.else) : 'NULL'} END`;
      }
      case 'agg':
        return this.aggregate(e);
      case 'subquery':
        return `(${this.subquery(e.query)})`;
      case 'pos':
        return String(e.index);
    }
  }

  protected op(e: Of<'op'>): string {
    const [a, b] = e.args.map((x) => this.expr(x));
    switch (e.op) {
      case 'and':
        return this.and(a!, b!);
      case 'or':
        return this.or(a!, b!);
      case 'not':
        return `(NOT ${a})`;
      case 'neg':
        return `(-${a})`;
      case 'is_null':
        return `(${a} IS NULL)`;
      case 'is_not_null':
        return `(${a} IS NOT NULL)`;
      case 'like':
      case 'not_like':
        return this.like(e.op === 'not_like', a!, b!, e.args[1]!);
      default:
        return `(${a} ${e.op} ${b})`;
    }
  }

  protected in(e: Of<'in'>): string {
    const float = kindOf(e.arg) === 'float' || e.list.some((x) => kindOf(x) === 'float');
    const list = e.list.map((x) => (float ? this.float(x) : this.expr(x)));
    return `(${this.expr(e.arg)} ${e.not ? 'NOT IN' : 'IN'} (${list.join(', ')}))`;
  }

  protected exists(e: Of<'exists'>): string {
    return `(${e.not ? 'NOT ' : ''}EXISTS (${this.subquery(e.query)}))`;
  }

  protected between(e: Of<'between'>): string {
    return `(${this.expr(e.arg)} ${e.not ? 'NOT BETWEEN' : 'BETWEEN'} ${this.expr(e.lo)} AND ${this.expr(e.hi)})`;
  }

  /** DuckDB's names; ClickHouse, whose aggregates of no value are 0, overrides them all. */
  protected aggregate(e: Of<'agg'>): string {
    if (e.arg === null) return 'count(*)';
    const arg = this.expr(e.arg);
    const distinct = e.distinct ? 'DISTINCT ' : '';
    switch (e.fn) {
      // BigQuery's COUNTIF is 0 when no value is true (DuckDB's count_if of only NULLs is NULL).
      case 'countif':
        return `count(CASE WHEN ${arg} THEN 1 END)`;
      case 'logical_and':
        return `bool_and(${arg})`;
      case 'logical_or':
        return `bool_or(${arg})`;
      case 'approx_count_distinct':
        return `count(DISTINCT ${arg})`;
      // At the exact decimal k/n: DuckDB then computes the position in integers.
      case 'quantile':
        return `quantile_disc(${arg}, ${e.at!.decimal})`;
      // The numbers cast to their own type: fixed-size values to the sandbox's size check (a column's value counts as an event's size there).
      case 'quantiles': {
        const kind = kindOf(e.arg) === 'integer' ? 'integer' : 'float';
        return `to_json(quantile_disc(${this.convert(arg, kind, kind, false)}, [${e.every!.join(', ')}]))`;
      }
      case 'sum':
        return e.kind === 'integer' ? `CAST(sum(${distinct}${arg}) AS BIGINT)` : `sum(${distinct}${arg})`;
      default:
        return `${e.fn}(${distinct}${arg})`;
    }
  }

  protected cast(e: Of<'cast'>): string {
    const from = kindOf(e.arg);
    const value = from === 'json' ? this.jsonText(e.arg) : this.expr(e.arg);
    const source = from === 'json' ? 'text' : from;
    // BigQuery rounds a FLOAT64 half away from zero; text goes through a number.
    if (e.to === 'integer' && (source === 'float' || source === 'text')) {
      const number = source === 'float' ? value : this.convert(value, 'text', 'float', e.safe);
      return this.convert(this.round(number), 'float', 'integer', e.safe);
    }
    return this.convert(value, source, e.to, e.safe);
  }

  /** A call's arguments printed (an INTERVAL is read from the tree); numbers as floats where floats and integers meet. */
  private args(fn: string, args: Expr[]): string[] {
    const float = ['coalesce', 'nullif', 'greatest', 'least'].includes(fn) && args.some((x) => kindOf(x) === 'float');
    return args.map((x) => (x.t === 'interval' ? '' : float ? this.float(x) : this.expr(x)));
  }

  /** A neutral function of the tree (functions.ts), `a` its arguments printed; one not named here is the dialect's function of its name (`names`). */
  protected call(fn: string, a: string[], args: Expr[]): string {
    const unit = (i: number) => UNIT_MICROS[(args[i] as { value: TimeUnit }).value];
    switch (fn) {
      case 'regexp_contains':
        return this.matches(a[0]!, args[1]!, a[1]!);
      case 'regexp_extract': {
        // BigQuery's REGEXP_EXTRACT: the capturing group if the pattern has one, NULL when nothing matches.
        const pattern = args[1]!;
        if (pattern.t !== 'lit' || typeof pattern.value !== 'string') return refuse('function', 'REGEXP_EXTRACT needs its pattern as a string literal here.');
        const groups = capturingGroups(pattern.value);
        if (groups > 1) refuse('function', 'REGEXP_EXTRACT: the pattern may have at most one capturing group.');
        return `CASE WHEN ${this.matches(a[0]!, pattern, a[1]!)} THEN ${this.extractGroup(a[0]!, pattern, a[1]!, groups)} ELSE NULL END`;
      }
      // NULL when an argument is (DuckDB's concat() skips NULLs; || does not, in either engine).
      case 'concat':
        return `(${a.join(' || ')})`;
      case 'round':
        return a.length === 1 ? this.round(a[0]!) : `round(${a[0]}, ${a[1]})`;
      case 'mod':
        return `(${a[0]} % ${a[1]})`;
      case 'safe_divide':
        return `CASE WHEN ${a[1]} = 0 THEN NULL ELSE ${a[0]} / ${a[1]} END`;
      case 'coalesce':
        return `coalesce(${a.join(', ')})`;
      case 'nullif':
        return `nullif(${a[0]}, ${a[1]})`;
      case 'timestamp_add':
        return this.fromMicros(`${this.micros(a[0]!)} + ${this.literal('integer', String((args[1] as Of<'interval'>).n * UNIT_MICROS[(args[1] as Of<'interval'>).unit]))}`);
      case 'timestamp_diff':
        return this.truncDiv(`${this.micros(a[0]!)} - ${this.micros(a[1]!)}`, unit(2));
      case 'unix_seconds':
        return this.floorDiv(this.micros(a[0]!), 1_000_000n);
      case 'unix_millis':
        return this.floorDiv(this.micros(a[0]!), 1000n);
      case 'unix_micros':
        return this.micros(a[0]!);
      case 'timestamp_seconds':
        return this.fromMicros(`${a[0]} * 1000000`);
      case 'timestamp_millis':
        return this.fromMicros(`${a[0]} * 1000`);
      case 'timestamp_micros':
        return this.fromMicros(a[0]!);
      case 'json_value':
        return this.output(args[0]!);
      // MIN/MAX of a JSON field: its number, a string replaced by the reason, which no number cast reads (the query fails naming it).
      case 'json_number': {
        const f = args[0] as Of<'field'>;
        return this.convert(`CASE WHEN ${this.jsonIsString(f)} THEN ${a[1]} ELSE ${this.jsonText(f)} END`, 'text', 'float', false);
      }
      default:
        return `${this.names[fn] ?? fn}(${a.join(', ')})`;
    }
  }
}

/** Capturing groups of an RE2 pattern: `(` not escaped, not in a class, not `(?`.  *
 * @example
 * capturingGroups('a(b)(?:c)[(]'); // 1
 */
export function capturingGroups(pattern: string): number {
  let n = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(' && pattern[i + 1] !== '?') n++;
    else if (c === '(' && pattern[i + 2] === 'P') n++;
  }
  return n;
}
