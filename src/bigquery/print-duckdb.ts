import type { ColumnType } from '../sql/column-types';
import type { BodyIR, Expr, FromIR, Kind, QueryIR, SelectIR, TimeUnit, UnnestAlias } from './ir';
import { countsPerValue, type CountsPerValue } from './counts-per-value';
import { countsPerGroup, type CountsPerGroup } from './counts-per-group';
import type { HourCounts } from './hour-counts';
import { jsonKeys, jsonKeysText, RESERVED_PREFIX, unnestColumn } from './ir';
import { jsonPathLiteral } from '../duckdb/typed-columns';
import { SqlPrinter, UNIT_MICROS } from './print-sql';

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
const str = (text: string) => `'${text.replaceAll("'", "''")}'`;
// The one spelling of a field's path: the typed columns hold what these expressions give (typed-columns.ts).
const jsonPath = jsonPathLiteral;
/** The largest BIGINT: DuckDB's own `infinity` timestamp, beyond every finite timestamp's microseconds (the smallest is -9223372022400000000). */
const INFINITE = '9223372036854775807';
const TYPES = { text: 'VARCHAR', integer: 'BIGINT', float: 'DOUBLE', boolean: 'BOOLEAN', timestamp: 'TIMESTAMP', json: 'JSON' } as const;

/**
 * The translated query as DuckDB SQL: a SELECT over the endpoint's CTE names, using only what the
 * sandbox's allowlist lets through (it checks this very text before anything runs).
 *
 * Unnests keep BigQuery's rows without multiplying them when nothing is an array: each range
 * with unnest aliases gets one column of the combinations of its aliases' values, computed only for
 * rows whose JSON text holds a `[` (elsewhere no value can be an array, so every alias has exactly
 * one value, read straight from the column by its whole path).
 *
 * A source table's typed fields (schema.ts, `TypedJson`) are read from their columns: a field's
 * whole-path read is its column, and a range with unnests over a JSON column that has them reads
 * the rows whose JSON text holds no `[` (the column's `arrays` flag) with every alias NULL, without
 * reading the JSON, and unnests the others as above, in one scan. Each column holds what its
 * expression gives on that row, so the answer is the same as reading the JSON.
 *
 * With `arraysFree`, each such range is printed as its rows without a `[` alone: the text an engine runs
 * when every input the query reads is known to hold no `[` (its flag false on every row), so DuckDB
 * neither plans nor reads the second (docs/definitions.md, "Typed fields"). Only the printing
 * differs: the same tree, checked by the sandbox as the full text is.
 *
 * @example
 * printDuckDb(translated); // 'SELECT "id" AS "id" FROM "edge_logs" AS "edge_logs"'
 * printDuckDb(translated, { arraysFree: true }); // the same text without the unnested half of its ranges
 */
export function printDuckDb(query: QueryIR, options: { arraysFree?: boolean; hourCounts?: HourCounts } = {}): string {
  return new DuckDbPrinter(options.arraysFree ?? false, options.hourCounts ?? null).query(query);
}

/** DuckDB's words for the shared printer (print-sql.ts): timestamps as TIMESTAMP, JSON as JSON. */
class DuckDbPrinter extends SqlPrinter {
  /** Whether a split range is printed as its half without arrays alone (`printDuckDb`). */
  constructor(
    private readonly arraysFree: boolean,
    /** A chart's first step read from the hour counts too (hour-counts.ts): printed for the query itself, no other. */
    private hourCounts: HourCounts | null = null,
  ) {
    super();
  }

  /** The range alias whose unnest aliases this text reads as NULL while printing (`unnestsNull`). */
  private nullUnnests: string | null = null;

  query(query: QueryIR): string {
    const withClause = query.ctes.length ? `WITH ${query.ctes.map((c) => `${q(c.name)} AS (${this.query(c.query)})`).join(', ')} ` : '';
    const late = this.lateOutputs(query);
    if (late !== null) return withClause + late;
    const counts = countsPerValue(query);
    const hourly = this.hourCounts;
    this.hourCounts = null;
    // A count grouped by fields the hour counts keep is printed in two steps only to read them.
    const groups = counts === null && hourly?.groups !== undefined ? countsPerGroup(query) : null;
    const twoSteps =
      counts !== null
        ? this.countsInTwoSteps(query.body as SelectIR, counts, hourly)
        : groups !== null && groups.field === hourly!.field
          ? this.groupsInTwoSteps(query.body as SelectIR, groups, hourly!)
          : null;
    let sql = withClause + (twoSteps ?? this.body(query.body));
    if (query.orderBy.length) sql += ` ORDER BY ${query.orderBy.map((o) => `${this.expr(o.e)} ${this.direction(o)}`).join(', ')}`;
    if (query.limit !== null) sql += ` LIMIT ${query.limit}`;
    if (query.offset !== null) sql += ` OFFSET ${query.offset}`;
    return sql;
  }

  /**
   * A newest-first page (one range, no aggregates, ORDER BY ... LIMIT n) with its JSON outputs read
   * for the page's rows only: the rows are filtered, sorted and cut first, then each output is
   * computed n times instead of once per row of the window (DuckDB evaluates a SELECT's values
   * before its ORDER BY ... LIMIT). Studio's list query, one hour of 44 000 gateway events: 10x
   * less work. Null when the query is not of that shape.
   */
  private lateOutputs(query: QueryIR): string | null {
    const b = query.body;
    if (b.t !== 'select' || query.limit === null || query.orderBy.length === 0 || b.distinct || b.groupBy.length || b.having) return null;
    if (!b.from || b.from.t === 'join' || [...b.items.map((i) => i.e), ...query.orderBy.map((o) => o.e)].some(hasAggregate)) return null;
    if (!b.items.some((i) => i.e.t === 'field')) return null;
    const keys = query.orderBy.map((o) => `${this.output(o.e.t === 'pos' ? b.items[o.e.index - 1]!.e : o.e)} ${this.direction(o)}`);
    const cut = `ORDER BY ${keys.join(', ')} LIMIT ${query.limit}${query.offset === null ? '' : ` OFFSET ${query.offset}`}`;
    // Without WHERE, sorted by the range's own columns: an unnest only adds rows beside a row (of its
    // timestamp), so the page's rows come from the first limit + offset rows of the range itself.
    const ownColumns = query.orderBy.every((o) => (o.e.t === 'pos' ? b.items[o.e.index - 1]!.e : o.e).t === 'col');
    const before = !b.where && ownColumns && b.from.unnests.length > 0 ? `ORDER BY ${keys.join(', ')} LIMIT ${query.limit + (query.offset ?? 0n)}` : null;
    const page = `SELECT * FROM ${this.range(b.from, before)}${b.where ? ` WHERE ${this.expr(b.where)}` : ''} ${cut}`;
    const items = b.items.map((i) => `${this.output(i.e)} AS ${q(i.name)}`).join(', ');
    return `SELECT ${items} FROM (${page}) AS ${q(b.from.alias)} ORDER BY ${keys.join(', ')}`;
  }

  /**
   * A chart's counts by time bucket in two steps (counts-per-value.ts): the rows counted per bucket
   * and value of the columns the counts read, then each count the sum of the first step's counts
   * where its value is counted (`count(x)`: x not NULL; `COUNTIF(x)`: x true), as a BIGINT as
   * `count` gives. Null when the printed counts read a column of the range other than those.
   */
  private countsInTwoSteps(b: SelectIR, c: CountsPerValue, hourly: HourCounts | null = null): string | null {
    const alias = q(c.from.alias);
    const args = this.unnestsNull(c.from, b.where, () => c.outputs.map((o) => ('count' in o && o.count.arg !== null ? this.expr(o.count.arg) : null)));
    const printed = args.filter((a) => a !== null).join(' ');
    const ref = (column: string) => `${alias}.${q(column)}`;
    const leaves = c.leaves.filter((l) => printed.includes(ref(l)));
    // Every reference to the range in the counts is to one of those columns (a text naming the
    // range otherwise, such as a string literal holding it, is counted in one step).
    const refs = printed.split(`${alias}.`).length - 1;
    if (!leaves.length || refs !== leaves.reduce((n, l) => n + printed.split(ref(l)).length - 1, 0)) return null;
    const keys = c.keys.map((k, i) => ({ ...this.bucketNumber(k), name: q(`${RESERVED_PREFIX}k${i + 1}`) }));
    const n = q(`${RESERVED_PREFIX}n`);
    const groups = [...keys.map((k) => k.number), ...leaves.map(ref)];
    const where = b.where ? this.unnestsNull(c.from, b.where, () => this.expr(b.where!)) : null;
    let first = `SELECT ${[...keys.map((k) => `${k.number} AS ${k.name}`), ...leaves.map(ref), `count(*) AS ${n}`].join(', ')} FROM ${this.from(c.from)}${where ? ` WHERE ${where}` : ''} GROUP BY ${groups.join(', ')}`;
    if (hourly !== null) first = `(${first}) UNION ALL (${this.hourCountsStep(c, hourly, keys, leaves, n)})`;
    const outputs = c.outputs.map((o, i) => {
      const name = q(b.items[i]!.name);
      if ('key' in o) return `${keys[o.key]!.instant(`${alias}.${keys[o.key]!.name}`)} AS ${name}`;
      const arg = args[i];
      const counted = arg === null ? `${alias}.${n}` : `CASE WHEN ${o.count.fn === 'countif' ? arg : `(${arg}) IS NOT NULL`} THEN ${alias}.${n} END`;
      return `CAST(coalesce(sum(${counted}), 0) AS BIGINT) AS ${name}`;
    });
    return `SELECT ${outputs.join(', ')} FROM (${first}) AS ${alias} GROUP BY ${keys.map((k) => `${alias}.${k.name}`).join(', ')}`;
  }

  /**
   * A count grouped by fields the hour counts keep (counts-per-group.ts) in two steps: the rows
   * counted per value of the columns the keys, the WHERE and the counts read, beside the hour
   * counts' rows for the hours they serve (their values in those columns, every unnest alias NULL
   * as on the rows whose JSON holds no `[`, the only files an engine reads them for; `json` and
   * `json2` are JSON as stored, read without a cast, which the sandbox's size check would take for
   * eight times the value at each of the keys' reads); then the
   * WHERE, the keys and each count over those counts: `count(*)` their sum, `count` of the
   * timestamp the sum of the rows' counted timestamps (every row an hour counts has one), and
   * `count(x)` / `COUNTIF(x)` the sum where x is counted. Null when the printed keys, WHERE or
   * counts read a column of the range other than those.
   */
  private groupsInTwoSteps(b: SelectIR, g: CountsPerGroup, hourly: HourCounts): string | null {
    const alias = q(g.from.alias);
    const ref = (column: string) => `${alias}.${q(column)}`;
    const isTimestamp = (e: Expr | null) => e?.t === 'col' && e.name === 'timestamp';
    const [keys, where, args] = this.unnestsNull(
      g.from,
      b.where,
      () =>
        [
          g.keys.map((k) => this.expr(k)),
          b.where ? this.expr(b.where) : null,
          g.outputs.map((o) => ('count' in o && o.count.arg !== null && !isTimestamp(o.count.arg) ? this.expr(o.count.arg) : null)),
        ] as const,
    );
    const printed = [...keys, where ?? '', ...args.map((a) => a ?? '')].join(' ');
    const leaves = g.leaves.filter((l) => printed.includes(ref(l)));
    const refs = printed.split(`${alias}.`).length - 1;
    if (!leaves.length || refs !== leaves.reduce((n, l) => n + printed.split(ref(l)).length - 1, 0)) return null;
    const n = q(`${RESERVED_PREFIX}n`);
    const stamped = q(`${RESERVED_PREFIX}nt`);
    const rows = `SELECT ${[...leaves.map(ref), `count(*) AS ${n}`, `count(${ref('timestamp')}) AS ${stamped}`].join(', ')} FROM ${this.from(g.from)} GROUP BY ${leaves.map(ref).join(', ')}`;
    const fields = Object.values(g.from.typed!.metadata!.fields);
    const [first, second] = g.fields.map((path) => fields.find((f) => f.path === path)!);
    const column = (l: string) =>
      l === first!.text ? `${alias}."text"` : l === first!.json ? `${alias}."json"` : l === second?.text ? `${alias}."text2"` : l === second?.json ? `${alias}."json2"` : 'CAST(NULL AS JSON)';
    const hours = `SELECT ${[...leaves.map((l) => `${column(l)} AS ${q(l)}`), `${alias}."n" AS ${n}`, `${alias}."n" AS ${stamped}`].join(', ')} FROM ${q(hourly.hourly)} AS ${alias} WHERE ${alias}."field" = ${str(hourly.field)}`;
    const outputs = g.outputs.map((o, i) => {
      const name = q(b.items[i]!.name);
      if ('key' in o) return `${keys[o.key]} AS ${name}`;
      const arg = args[i];
      const counted = o.count.arg === null ? `${alias}.${n}` : arg === null ? `${alias}.${stamped}` : `CASE WHEN ${o.count.fn === 'countif' ? arg : `(${arg}) IS NOT NULL`} THEN ${alias}.${n} END`;
      return `CAST(coalesce(sum(${counted}), 0) AS BIGINT) AS ${name}`;
    });
    return `SELECT ${outputs.join(', ')} FROM ((${rows}) UNION ALL (${hours})) AS ${alias}${where === null ? '' : ` WHERE ${where}`} GROUP BY ${keys.join(', ')}`;
  }

  /**
   * Prints with the unnest aliases of `from` read as NULL where this text knows them to be: without
   * the arrays half (`arraysFree`), a split range is its rows without a `[` alone, every alias of
   * them the constant NULL (`range`), so a field read through one is its whole path's column. The
   * counts in two steps then neither group by those constants nor test them in each condition:
   * Studio's charts took 1.02 - 1.18 times less CPU bare, the chart by minute 1.0 - 1.17 through
   * the library (docs/performance.md, "The chart by minute without its constant unnest aliases"). Not where the
   * WHERE holds a subquery, whose own ranges could take the same alias.
   */
  private unnestsNull<T>(from: Extract<FromIR, { t: 'table' }>, where: Expr | null, print: () => T): T {
    const outer = this.nullUnnests;
    if (this.arraysFree && from.unnests.length > 0 && arraysFlag(from) !== null && !holdsQuery(where)) this.nullUnnests = from.alias;
    try {
      return print();
    } finally {
      this.nullUnnests = outer;
    }
  }

  /**
   * The first step's rows of the hours the hour counts serve (hour-counts.ts): per hour and value
   * of the field its count, the bucket numbered from the hour's first instant (the hour refines the
   * bucket), the field's columns from the counts' `text` and `json`, every unnest alias NULL (as on
   * the rows whose JSON holds no `[`, the only files an engine reads them for). No WHERE: the
   * engine gives the relation only hours wholly inside the window.
   */
  private hourCountsStep(c: CountsPerValue, hourly: HourCounts, keys: Array<{ number: string; name: string }>, leaves: string[], n: string): string {
    const alias = q(c.from.alias);
    const field = Object.values(c.from.typed!.metadata!.fields).find((f) => f.path === hourly.field)!;
    const leaf = (l: string) => (l === field.text ? `${alias}."text"` : l === field.json ? `CAST(${alias}."json" AS JSON)` : 'CAST(NULL AS JSON)');
    const items = [...keys.map((k) => `${k.number} AS ${k.name}`), ...leaves.map((l) => `${leaf(l)} AS ${q(l)}`), `${alias}."n" AS ${n}`];
    return `SELECT ${items.join(', ')} FROM ${q(hourly.hourly)} AS ${alias} WHERE ${alias}."field" = ${str(hourly.field)}`;
  }

  private body(b: BodyIR): string {
    if (b.t === 'setop') return `(${this.query(b.left)}) ${b.op.toUpperCase()}${b.all ? ' ALL' : ''} (${this.query(b.right)})`;
    return `SELECT ${b.distinct ? 'DISTINCT ' : ''}${b.items.map((i) => `${this.output(i.e)} AS ${q(i.name)}`).join(', ')}${this.clauses(b)}`;
  }

  /** A range; `before` (ORDER BY ... LIMIT n over the range's own columns) cuts it before its unnests. */
  protected range(f: Exclude<FromIR, { t: 'join' }>, before: string | null = null): string {
    const plain = f.t === 'table' ? q(f.name) : `(${this.query(f.query)})`;
    const source = before ? `(SELECT * FROM ${plain} AS ${q(f.alias)} ${before})` : plain;
    // Not after a cut: its two halves would each cut the rows again, and rows tied at the cut could
    // land in both or neither; the cut leaves the unnests a page of rows anyway.
    const flag = f.t === 'table' && before === null ? arraysFlag(f) : null;
    // Where no JSON text holds a '[', every alias has one value, NULL (values() below): no JSON read.
    // Its condition kept: over inputs whose flag is the constant false DuckDB drops it when planning.
    if (flag !== null && this.arraysFree) {
      return `(SELECT *, ${f.unnests.map((a) => `CAST(NULL AS JSON) AS ${q(unnestColumn(a))}`).join(', ')} FROM ${source} AS ${q(f.alias)} WHERE NOT (${flag})) AS ${q(f.alias)}`;
    }
    let range = `${source} AS ${q(f.alias)}`;
    // One level per alias, each a column of its own: an alias's rows are its value's elements, and
    // the rows before it are repeated for each (DuckDB's UNNEST operator multiplies rows; no value
    // holds more than one JSON value's elements). Where the flag is false a root alias is NULL, and
    // so are its children, as the arrays-free text reads every row. In one scan: the rows without
    // the flag UNION ALL those with it read the table twice, and DuckDB then materializes a
    // relation it cannot copy (a union of parts, a read of NDJSON) whole in memory, every column of
    // every row of its inputs: Studio's chart by minute took the server 260 MiB over its 200 at
    // 5,000 events/s (docs/performance.md, "Studio's chart by minute read once").
    for (const a of f.unnests) {
      const each = flag !== null && a.parent === null ? `CASE WHEN ${flag} THEN ${values(a)} ELSE [CAST(NULL AS JSON)] END` : values(a);
      range = `(SELECT *, unnest(${each}) AS ${q(unnestColumn(a))} FROM ${range}) AS ${q(f.alias)}`;
    }
    return range;
  }

  protected quote(name: string): string {
    return q(name);
  }

  protected string(text: string): string {
    return str(text);
  }

  protected literal(kind: 'integer' | 'float' | 'boolean', value: string | boolean): string {
    return kind === 'float' ? `CAST(${value} AS DOUBLE)` : String(value);
  }

  protected micros(timestamp: string): string {
    return `epoch_us(${timestamp})`;
  }

  protected fromMicros(micros: string): string {
    return `make_timestamp(${micros})`;
  }

  protected now(): string {
    return '$now';
  }

  /**
   * In integers: the value less its remainder towards minus infinity, divided exactly. Through
   * `floor` of a DOUBLE quotient, microseconds past 2^53 (after the year 2255) lost their last
   * digits: UNIX_SECONDS of 2500-01-01 00:00:00.999999 gave 16725225601.
   */
  protected floorDiv(value: string, by: bigint): string {
    return `((${value} - ((${value} % ${by}) + ${by}) % ${by}) // ${by})`;
  }

  protected truncDiv(value: string, by: bigint): string {
    return `(((${value}) - (${value}) % ${by}) // ${by})`;
  }

  protected jsonField(e: Extract<Expr, { t: 'field' }>): string {
    return `nullif(${field(e, 'json_extract', this.nullUnnests === e.rel)}, CAST('null' AS JSON))`;
  }

  /** A field's text, or the text of a JSON value that is not a field (JSON_QUERY of text). */
  protected jsonText(e: Expr): string {
    if (e.t === 'field') return field(e, 'json_extract_string', this.nullUnnests === e.rel);
    return `json_extract_string(${this.expr(e)}, '$')`;
  }

  protected jsonIsString(e: Extract<Expr, { t: 'field' }>): string {
    return `(json_type(${field(e, 'json_extract', this.nullUnnests === e.rel)}) = 'VARCHAR')`;
  }

  protected convert(value: string, _from: Kind, to: ColumnType, safe: boolean): string {
    const c = safe ? 'TRY_CAST' : 'CAST';
    if (to === 'timestamp') return `${c}(${c}(${value} AS TIMESTAMPTZ) AS TIMESTAMP)`;
    return `${c}(${value} AS ${TYPES[to]})`;
  }

  protected like(not: boolean, value: string, pattern: string, patternExpr: Expr): string {
    // BigQuery's LIKE escapes with a backslash; DuckDB's only when told.
    if (patternExpr.t === 'lit' && !String(patternExpr.value).includes('\\')) return `(${value} ${not ? 'NOT LIKE' : 'LIKE'} ${pattern})`;
    return `${not ? 'NOT ' : ''}like_escape(${value}, ${pattern}, '\\')`;
  }

  protected matches(text: string, _pattern: Expr, printed: string): string {
    return `regexp_matches(${text}, ${printed})`;
  }

  protected extractGroup(text: string, _pattern: Expr, printed: string, group: number): string {
    return `regexp_extract(${text}, ${printed}, ${group})`;
  }

  /**
   * TIMESTAMP_TRUNC of a timestamp printed as `value`: DuckDB's `date_trunc`, the same instant for
   * every input. Of a column, from 1970 on (its microseconds not negative, where integer division
   * rounds down) the microseconds divided by the unit's and multiplied back, and `date_trunc`
   * for the others (before 1970, NULL, infinite), which costs more on each row
   * (docs/performance.md, "The time bucket in integer arithmetic"). Not of another expression,
   * which it would print and evaluate three times.
   */
  private bucket(value: string, arg: Expr, unit: TimeUnit): string {
    const exact = `date_trunc(${str(unit)}, ${value})`;
    if (arg.t !== 'col') return exact;
    const micros = this.micros(value);
    const by = UNIT_MICROS[unit];
    return `CASE WHEN ${micros} >= 0 THEN ${this.fromMicros(`(${micros} // ${by}) * ${by}`)} ELSE ${exact} END`;
  }

  /**
   * A bucket (TIMESTAMP_TRUNC of a column) as the first step of counts in two steps groups by it:
   * its `number`, the bucket's microseconds divided by the unit's (from 1970 on integer division,
   * before it `date_trunc`'s; the infinities the two integers no finite timestamp's microseconds
   * reach, NULL kept), and the bucket of a `number`, `instant`, computed once per group of the
   * second step instead of once per row: the 7-day charts took a quarter less CPU than with
   * `date_trunc` (docs/performance.md, "The time bucket in integer arithmetic").
   */
  private bucketNumber(k: Extract<Expr, { t: 'call' }>): { number: string; instant: (number: string) => string } {
    const value = this.expr(k.args[0]!);
    const unit = (k.args[1] as { value: TimeUnit }).value;
    const by = UNIT_MICROS[unit];
    const micros = this.micros(value);
    const epoch = this.fromMicros('0');
    const number = `CASE WHEN ${micros} >= 0 THEN ${micros} // ${by} WHEN isfinite(${value}) THEN ${this.micros(`date_trunc(${str(unit)}, ${value})`)} // ${by} WHEN ${value} > ${epoch} THEN ${INFINITE} WHEN ${value} < ${epoch} THEN -${INFINITE} END`;
    const instant = (n: string) =>
      `CASE WHEN ${n} = ${INFINITE} THEN CAST('infinity' AS TIMESTAMP) WHEN ${n} = -${INFINITE} THEN CAST('-infinity' AS TIMESTAMP) ELSE ${this.fromMicros(`${n} * ${by}`)} END`;
    return { number, instant };
  }

  protected override call(fn: string, a: string[], args: Expr[]): string {
    const textArg = (i: number) => String((args[i] as { value: string }).value);
    switch (fn) {
      case 'regexp_replace':
        return `regexp_replace(${a[0]}, ${a[1]}, ${a[2]}, 'g')`;
      // BigQuery's GREATEST and LEAST are NULL when an argument is (DuckDB's skip NULLs).
      case 'greatest':
      case 'least':
        return `CASE WHEN ${a.map((x) => `${x} IS NULL`).join(' OR ')} THEN NULL ELSE ${fn}(${a.join(', ')}) END`;
      case 'timestamp_trunc':
        return this.bucket(a[0]!, args[0]!, textArg(1) as TimeUnit);
      case 'format_timestamp':
        return `strftime(${a[1]}, ${str(textArg(0).replace(/%(.)/g, (m, c: string) => (({ F: '%Y-%m-%d', T: '%H:%M:%S', Z: 'UTC', z: '+0000' }) as Record<string, string>)[c] ?? m))})`;
      case 'extract': {
        const part = textArg(0);
        if (part === 'dayofweek') return `(dayofweek(${a[1]}) + 1)`;
        if (part === 'dayofyear') return `dayofyear(${a[1]})`;
        return `date_part(${str(part)}, ${a[1]})`;
      }
      // A scalar's text: an object or an array is NULL, as in BigQuery (json_extract_string would give its JSON).
      case 'json_value_text': {
        const json = `CASE WHEN json_valid(${a[0]}) THEN ${a[0]} END`;
        const path = jsonPath(jsonKeys(textArg(1)));
        return `CASE WHEN json_type(${json}, ${path}) IN ('OBJECT', 'ARRAY') THEN NULL ELSE json_extract_string(${json}, ${path}) END`;
      }
      case 'json_query_text':
        return `nullif(json_extract(CASE WHEN json_valid(${a[0]}) THEN ${a[0]} END, ${jsonPath(jsonKeys(textArg(1)))}), CAST('null' AS JSON))`;
      default:
        return super.call(fn, a, args);
    }
  }
}

/**
 * The condition of the rows where some unnest alias of a table range may have elements (its JSON
 * column's text holds a `[`), read from the columns flagging it; null when a root alias's column
 * has no such flag (or there is no unnest).
 */
function arraysFlag(f: Extract<FromIR, { t: 'table' }>): string | null {
  const roots = f.unnests.filter((a) => a.parent === null);
  if (!roots.length || !roots.every((a) => f.typed?.[a.column])) return null;
  return [...new Set(roots.map((a) => f.typed![a.column]!.arrays))].map((c) => `coalesce(${q(c)}, false)`).join(' OR ');
}

/** Whether an expression holds a subquery (`IN (SELECT ...)`, `EXISTS`, a scalar one). */
function holdsQuery(e: unknown): boolean {
  if (e === null || typeof e !== 'object') return false;
  if ('query' in e) return true;
  return Object.values(e).some((child) => (Array.isArray(child) ? child.some(holdsQuery) : holdsQuery(child)));
}

function hasAggregate(e: unknown): boolean {
  if (e === null || typeof e !== 'object') return false;
  if ((e as { t?: unknown }).t === 'agg') return true;
  return Object.entries(e).some(([key, child]) => key !== 'query' && key !== 'unnest' && (Array.isArray(child) ? child.some(hasAggregate) : hasAggregate(child)));
}

/**
 * An alias's values for one row: NULL where its column's JSON text holds no `[` (no value on its
 * path can be an array, so its fields are read from the column by their whole path), else its
 * value's elements. A child of an alias that is NULL is NULL too.
 */
function values(a: UnnestAlias): string {
  if (a.parent) return elements(extract(q(unnestColumn(a.parent)), a.path.slice(a.parent.path.length), 'json_extract'));
  return `CASE WHEN contains(${q(a.column)}, '[') THEN ${elements(q(a.column))} ELSE [NULL] END`;
}

/** An unnested value's rows: an array's elements (one NULL row when empty), anything else once. */
function elements(v: string): string {
  return `CASE WHEN json_type(${v}) = 'ARRAY' THEN CASE WHEN json_array_length(${v}) > 0 THEN json_extract(${v}, '$[*]') ELSE [CAST(NULL AS JSON)] END ELSE [${v}] END`;
}

function extract(value: string, path: readonly string[], fn: 'json_extract' | 'json_extract_string'): string {
  if (path.length === 0) return fn === 'json_extract' ? value : `json_extract_string(${value}, '$')`;
  return `${fn}(${value}, ${jsonPath(path)})`;
}

/** A field read as JSON or as its text; with a subscript, the rest of its path read in the element (ir.ts, `Element`). */
function field(e: Extract<Expr, { t: 'field' }>, fn: 'json_extract' | 'json_extract_string', unnestNull = false): string {
  if (!e.element) return read(e, e.path, fn, unnestNull);
  const { at, k, safe } = e.element;
  const record = read(e, e.path.slice(0, at), 'json_extract', unnestNull);
  const rest = e.path.slice(at);
  const type = `json_type(${record})`;
  const value = `CASE WHEN ${type} = 'ARRAY' THEN ${extract(`json_extract(${record}, '$[${k}]')`, rest, fn)} ELSE ${k === 0 ? extract(record, rest, fn) : 'NULL'} END`;
  if (safe) return value;
  // Out of bounds fails the query as BigQuery's OFFSET does: a text no JSON cast reads, naming it (not a constant, so only where reached).
  const out = `(${type} = 'ARRAY' AND json_array_length(${record}) <= ${k})${k === 0 ? '' : ` OR ${type} NOT IN ('ARRAY', 'NULL')`}`;
  const fail = `CAST(('Array index ${k} is out of bounds of ' || ${type}) AS JSON)`;
  return `CASE WHEN ${out} THEN ${fn === 'json_extract' ? fail : `CAST(${fail} AS VARCHAR)`} ELSE ${value} END`;
}

/**
 * A path of a field read as JSON or as its text: from its alias's value, or by its whole path where
 * that is NULL (always, with `unnestNull`); by its whole path, a typed field's column (which holds
 * what that read gives).
 */
function read(e: Extract<Expr, { t: 'field' }>, path: readonly string[], fn: 'json_extract' | 'json_extract_string', unnestNull = false): string {
  const whole = [...(e.unnest?.path ?? []), ...path];
  const typed = e.typed?.fields[jsonKeysText(whole)];
  const bound = typed ? `${q(e.rel)}.${q(fn === 'json_extract' ? typed.json : typed.text)}` : extract(`${q(e.rel)}.${q(e.column)}`, whole, fn);
  if (!e.unnest || unnestNull) return bound;
  const value = `${q(e.rel)}.${q(unnestColumn(e.unnest))}`;
  return `CASE WHEN ${value} IS NULL THEN ${bound} ELSE ${extract(value, path, fn)} END`;
}
