import type { ExprContext } from './context';
import { jsonKeysText, type AggFn, type Expr, type Kind, type TimeUnit } from './ir';
import { asKind, commonKind, kindOf } from './kinds';
import type { Node } from './parse-bigquery';
import { refuse, shown } from './refuse';
import { checkedPath } from './scope';
import { variantOf } from './tree';

type Handler = (args: Expr[], ctx: ExprContext, raw: unknown[]) => Expr;

const text = (e: Expr, f: string) => asKind(e, 'text', f);
const float = (e: Expr, f: string) => asKind(e, 'float', f);
const integer = (e: Expr, f: string) => asKind(e, 'integer', f);
const timestamp = (e: Expr, f: string) => asKind(e, 'timestamp', f);
const call = (fn: string, args: Expr[], kind: Kind): Expr => ({ t: 'call', fn, args, kind });

/** Functions taking text and giving `kind`: the same neutral name in both printers. */
function textFunction(name: string, arity: [number, number], kind: Kind, argKinds: Array<'text' | 'integer'> = []): Handler {
  return (args) => {
    count(name, args, ...arity);
    return call(
      name,
      args.map((a, i) => (argKinds[i] === 'integer' ? integer(a, name) : text(a, name))),
      kind,
    );
  };
}

function mathFunction(name: string, arity: [number, number], kind: Kind = 'float'): Handler {
  return (args) => {
    count(name, args, ...arity);
    return call(
      name,
      args.map((a) => float(a, name)),
      kind,
    );
  };
}

/** BigQuery functions by lower-case name (docs/sandboxing.md, "BigQuery dialect"). */
const FUNCTIONS: Record<string, Handler> = {
  regexp_contains: textFunction('regexp_contains', [2, 2], 'boolean'),
  regexp_extract: textFunction('regexp_extract', [2, 2], 'text'),
  regexp_replace: textFunction('regexp_replace', [3, 3], 'text'),
  starts_with: textFunction('starts_with', [2, 2], 'boolean'),
  ends_with: textFunction('ends_with', [2, 2], 'boolean'),
  strpos: textFunction('strpos', [2, 2], 'integer'),
  lower: textFunction('lower', [1, 1], 'text'),
  upper: textFunction('upper', [1, 1], 'text'),
  trim: textFunction('trim', [1, 1], 'text'),
  ltrim: textFunction('ltrim', [1, 1], 'text'),
  rtrim: textFunction('rtrim', [1, 1], 'text'),
  length: textFunction('length', [1, 1], 'integer'),
  char_length: textFunction('length', [1, 1], 'integer'),
  character_length: textFunction('length', [1, 1], 'integer'),
  replace: textFunction('replace', [3, 3], 'text'),
  substr: textFunction('substr', [2, 3], 'text', ['text', 'integer', 'integer']),
  substring: textFunction('substr', [2, 3], 'text', ['text', 'integer', 'integer']),
  concat: (args) => {
    count('CONCAT', args, 1, 64);
    return call(
      'concat',
      args.map((a) => text(a, 'CONCAT')),
      'text',
    );
  },
  abs: mathFunction('abs', [1, 1]),
  floor: mathFunction('floor', [1, 1]),
  ceil: mathFunction('ceil', [1, 1]),
  ceiling: mathFunction('ceil', [1, 1]),
  sqrt: mathFunction('sqrt', [1, 1]),
  ln: mathFunction('ln', [1, 1]),
  log10: mathFunction('log10', [1, 1]),
  exp: mathFunction('exp', [1, 1]),
  pow: mathFunction('pow', [2, 2]),
  power: mathFunction('pow', [2, 2]),
  safe_divide: mathFunction('safe_divide', [2, 2]),
  round: (args) => {
    count('ROUND', args, 1, 2);
    return call('round', [float(args[0]!, 'ROUND'), ...(args[1] ? [integer(args[1], 'ROUND')] : [])], 'float');
  },
  mod: (args) => {
    count('MOD', args, 2, 2);
    return call(
      'mod',
      args.map((a) => integer(a, 'MOD')),
      'integer',
    );
  },
  ifnull: (args) => coalesce('IFNULL', args, 2, 2),
  coalesce: (args) => coalesce('COALESCE', args, 1, 64),
  nullif: (args) => {
    count('NULLIF', args, 2, 2);
    const kind = valueKind(commonKind(args, 'NULLIF'));
    return call(
      'nullif',
      args.map((a) => asKind(a, kind, 'NULLIF')),
      kind,
    );
  },
  if: (args) => {
    count('IF', args, 3, 3);
    const kind = commonKind(args.slice(1), 'IF');
    return { t: 'case', whens: [[asKind(args[0]!, 'boolean', 'IF'), asKind(args[1]!, kind, 'IF')]], else: asKind(args[2]!, kind, 'IF'), kind };
  },
  timestamp_trunc: (args, _ctx, raw) => {
    count('TIMESTAMP_TRUNC', args, 2, 2);
    return call('timestamp_trunc', [timestamp(args[0]!, 'TIMESTAMP_TRUNC'), { t: 'lit', kind: 'text', value: unitArgument(raw[1], 'TIMESTAMP_TRUNC') }], 'timestamp');
  },
  timestamp_add: (args) => shift('TIMESTAMP_ADD', args, 1n),
  timestamp_sub: (args) => shift('TIMESTAMP_SUB', args, -1n),
  timestamp_diff: (args, _ctx, raw) => {
    count('TIMESTAMP_DIFF', args, 3, 3);
    const unit = unitArgument(raw[2], 'TIMESTAMP_DIFF');
    return call('timestamp_diff', [timestamp(args[0]!, 'TIMESTAMP_DIFF'), timestamp(args[1]!, 'TIMESTAMP_DIFF'), { t: 'lit', kind: 'text', value: unit }], 'integer');
  },
  unix_seconds: (args) => epoch('unix_seconds', args),
  unix_millis: (args) => epoch('unix_millis', args),
  unix_micros: (args) => epoch('unix_micros', args),
  timestamp_seconds: (args) => fromEpoch('timestamp_seconds', args),
  timestamp_millis: (args) => fromEpoch('timestamp_millis', args),
  timestamp_micros: (args) => fromEpoch('timestamp_micros', args),
  format_timestamp: (args) => {
    count('FORMAT_TIMESTAMP', args, 2, 3);
    const format = args[0]!;
    if (format.t !== 'lit' || typeof format.value !== 'string') refuse('function', 'FORMAT_TIMESTAMP needs its format as a string literal.');
    if (args[2] && !(args[2].t === 'lit' && typeof args[2].value === 'string' && /^(UTC|Z|\+00(:00)?)$/i.test(args[2].value))) refuse('function', 'FORMAT_TIMESTAMP is supported in UTC only.');
    return call('format_timestamp', [{ t: 'lit', kind: 'text', value: checkedFormat(format.value as string) }, timestamp(args[1]!, 'FORMAT_TIMESTAMP')], 'text');
  },
  // The request's clock (the endpoint's `$now`), so answers depend only on the request; DATETIME is a timestamp in UTC here.
  current_timestamp: (args) => {
    count('CURRENT_TIMESTAMP', args, 0, 0);
    return { t: 'now' };
  },
  current_datetime: (args) => {
    if (args.length > 1 || (args[0] && !(args[0].t === 'lit' && typeof args[0].value === 'string' && /^(UTC|Z|\+00(:00)?)$/i.test(args[0].value))))
      refuse('function', 'CURRENT_DATETIME is supported in UTC only.');
    return { t: 'now' };
  },
  // DATETIME(timestamp [, 'UTC']): the same instant read in UTC, as CAST(x AS DATETIME) is here.
  datetime: (args) => {
    count('DATETIME', args, 1, 2);
    if (args[1] && !(args[1].t === 'lit' && typeof args[1].value === 'string' && /^(UTC|Z|\+00(:00)?)$/i.test(args[1].value))) refuse('function', 'DATETIME is supported in UTC only.');
    if (kindOf(args[0]!) !== 'timestamp' && !(args[0]!.t === 'lit' && typeof args[0]!.value === 'string')) refuse('function', 'DATETIME takes a TIMESTAMP here (DATETIME(timestamp)).');
    return timestamp(args[0]!, 'DATETIME');
  },
  json_value: (args) => jsonPath('JSON_VALUE', args, 'text'),
  json_extract_scalar: (args) => jsonPath('JSON_EXTRACT_SCALAR', args, 'text'),
  json_query: (args) => jsonPath('JSON_QUERY', args, 'json'),
  json_extract: (args) => jsonPath('JSON_EXTRACT', args, 'json'),
  greatest: (args) => extreme('greatest', args),
  least: (args) => extreme('least', args),
};

const AGGREGATES: Record<string, AggFn> = {
  count: 'count',
  countif: 'countif',
  sum: 'sum',
  avg: 'avg',
  min: 'min',
  max: 'max',
  any_value: 'any_value',
  logical_and: 'logical_and',
  logical_or: 'logical_or',
  approx_count_distinct: 'approx_count_distinct',
};

/** BigQuery functions people reach for that are refused by name (each with what to use instead, when there is one). */
const REFUSED: Record<string, string> = {
  array_agg: 'it builds arrays',
  string_agg: 'it builds strings of many rows',
  array_length: 'arrays are not supported',
  generate_array: 'arrays are not supported',
  current_date: 'DATE values are not supported: use TIMESTAMP_TRUNC(CURRENT_TIMESTAMP(), DAY)',
  session_user: 'it reads the session',
  rand: 'answers must depend only on the request',
  generate_uuid: 'answers must depend only on the request',
};

/**
 * A function call: one of the supported functions or aggregates (checked arguments, neutral
 * name), or a refusal naming it.
 *
 * @example
 * callFunction(node /* regexp_contains(event_message, 'x') *\/, ctx); // { t: 'call', fn: 'regexp_contains', ... }
 */
export function callFunction(v: Node, ctx: ExprContext): Expr {
  const nameParts = (v.name as Node[]).map((p) => String((variantOf(p)[1] as Node).value));
  const name = nameParts.join('.').toLowerCase();
  if (nameParts.length !== 1) refuse('function', `BigQuery's ${shown(name.toUpperCase())} is not supported here.`);
  if (v.over !== null && v.over !== undefined) refuse('construct', 'Window functions (OVER) are not supported here.');
  if ((v.filter !== null && v.filter !== undefined) || (v.null_treatment !== null && v.null_treatment !== undefined) || (Array.isArray(v.within_group) && v.within_group.length > 0)) {
    refuse('construct', `${shown(name.toUpperCase())} with FILTER, IGNORE NULLS or WITHIN GROUP is not supported here.`);
  }
  if (name === 'approx_quantiles') return approxQuantiles(v, ctx);
  const { raw, star, distinct } = functionArguments(v, name);
  if (name in AGGREGATES) return aggregate(AGGREGATES[name]!, raw, star, distinct, ctx);
  const handler = FUNCTIONS[name];
  if (!handler || star || distinct) {
    const why = REFUSED[name];
    return refuse('function', `BigQuery's ${shown(name.toUpperCase())} is not supported here${why ? ` (${why})` : ''}.`);
  }
  const args = raw.map((a, i) => (isUnitArgument(name, i) ? { t: 'lit' as const, kind: 'null' as const, value: null } : ctx.translate(a, ctx)));
  return handler(args, ctx, raw);
}

function functionArguments(v: Node, name: string): { raw: unknown[]; star: boolean; distinct: boolean } {
  if (v.args === 'None') return { raw: [], star: false, distinct: false };
  const [kind, list] = variantOf(v.args);
  if (kind !== 'List') refuse('function', `${shown(name.toUpperCase())}(...) with a subquery argument is not supported here.`);
  const l = list as Node;
  if (Array.isArray(l.clauses) && l.clauses.length > 0) refuse('construct', `${shown(name.toUpperCase())} with ORDER BY, LIMIT or HAVING inside is not supported here.`);
  let star = false;
  const raw = (l.args as unknown[]).map((a) => {
    const [argKind, value] = variantOf(a);
    if (argKind !== 'Unnamed') refuse('function', 'Named function arguments are not supported here.');
    if (value === 'Wildcard') {
      star = true;
      return null;
    }
    const [exprKind, expr] = variantOf(value);
    if (exprKind !== 'Expr') refuse('function', 'This function argument is not supported here.');
    return expr;
  });
  return { raw: raw.filter((a) => a !== null), star, distinct: l.duplicate_treatment === 'Distinct' };
}

function isUnitArgument(name: string, index: number): boolean {
  return (name === 'timestamp_trunc' && index === 1) || (name === 'timestamp_diff' && index === 2);
}

const TRUNC_UNITS = new Set<TimeUnit>(['microsecond', 'millisecond', 'second', 'minute', 'hour', 'day']);

/** A date part written as a bare word (`minute`), as BigQuery takes it. */
function unitArgument(raw: unknown, f: string): TimeUnit {
  const [kind, value] = variantOf(raw);
  const unit = kind === 'Identifier' ? String((value as Node).value).toLowerCase() : '';
  if (!TRUNC_UNITS.has(unit as TimeUnit)) refuse('function', `${f} supports MICROSECOND, MILLISECOND, SECOND, MINUTE, HOUR and DAY here.`);
  return unit as TimeUnit;
}

function count(name: string, args: readonly unknown[], min: number, max: number): void {
  if (args.length < min || args.length > max) refuse('function', `${name.toUpperCase()} takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}.`);
}

/** A kind values can be printed as (JSON compared as text). */
function valueKind(kind: Kind): Kind {
  return kind === 'null' ? 'text' : kind;
}

function coalesce(name: string, args: Expr[], min: number, max: number): Expr {
  count(name, args, min, max);
  const kind = commonKind(args, name);
  return call(
    'coalesce',
    args.map((a) => asKind(a, kind, name)),
    kind,
  );
}

function extreme(name: string, args: Expr[]): Expr {
  count(name, args, 1, 64);
  const kind = commonKind(args, name.toUpperCase());
  if (kind === 'json') refuse('function', `${name.toUpperCase()} of JSON values: cast them first.`);
  return call(
    name,
    args.map((a) => asKind(a, kind, name)),
    kind,
  );
}

function shift(name: string, args: Expr[], sign: bigint): Expr {
  count(name, args, 2, 2);
  const amount = args[1]!;
  if (amount.t !== 'interval') return refuse('function', `${name} takes a TIMESTAMP and an INTERVAL (INTERVAL 1 HOUR).`);
  return call('timestamp_add', [timestamp(args[0]!, name), { ...amount, n: amount.n * sign }], 'timestamp');
}

function epoch(fn: string, args: Expr[]): Expr {
  count(fn, args, 1, 1);
  return call(fn, [timestamp(args[0]!, fn.toUpperCase())], 'integer');
}

function fromEpoch(fn: string, args: Expr[]): Expr {
  count(fn, args, 1, 1);
  return call(fn, [integer(args[0]!, fn.toUpperCase())], 'timestamp');
}

/** JSON_VALUE(x, '$.a.b'): on a JSON field, a deeper field; on text, the text parsed as JSON. */
function jsonPath(name: string, args: Expr[], kind: 'text' | 'json'): Expr {
  count(name, args, 1, 2);
  const pathArg = args[1] ?? { t: 'lit', kind: 'text', value: '$' };
  if (pathArg.t !== 'lit' || typeof pathArg.value !== 'string') return refuse('function', `${name} needs its JSONPath as a string literal.`);
  const path = parseJsonPath(pathArg.value, name);
  const arg = args[0]!;
  if (arg.t === 'field') {
    const field: Expr = { ...arg, path: [...arg.path, ...path] };
    return kind === 'text' ? asKind(field, 'text', name) : field;
  }
  if (kindOf(arg) !== 'text') refuse('function', `${name} reads a JSON field or a STRING holding JSON.`);
  return call(kind === 'text' ? 'json_value_text' : 'json_query_text', [arg, { t: 'lit', kind: 'text', value: jsonKeysText(path) }], kind);
}

/** `$.a.b` or `$."a b"` (no array subscripts) as keys. */
function parseJsonPath(text: string, name: string): string[] {
  const keys: string[] = [];
  const rest = text.trim();
  if (!rest.startsWith('$')) refuse('function', `${name}: a JSONPath starts with $ ($.request.path).`);
  const pattern = /\.(?:([A-Za-z0-9_$@-]+)|"([^"\\]+)")/y;
  let at = 1;
  while (at < rest.length) {
    pattern.lastIndex = at;
    const m = pattern.exec(rest);
    if (!m) return refuse('function', `${name}: only $.name.name paths are supported here (no array subscripts).`);
    keys.push(m[1] ?? m[2]!);
    at = pattern.lastIndex;
  }
  return checkedPath(keys);
}

/** FORMAT_TIMESTAMP elements both engines print alike. */
function checkedFormat(format: string): string {
  for (const m of format.matchAll(/%(.)/g)) {
    if (!'YmdHMSFTjyZz%'.includes(m[1]!)) refuse('function', `FORMAT_TIMESTAMP: the element %${shown(m[1]!)} is not supported here (supported: %Y %m %d %H %M %S %F %T %j %y %Z %z %%).`);
  }
  return format;
}

function aggregate(fn: AggFn, raw: unknown[], star: boolean, distinct: boolean, ctx: ExprContext): Expr {
  if (!ctx.aggregates) refuse('construct', `Aggregate function ${fn.toUpperCase()} is not allowed here (only in SELECT, HAVING and ORDER BY).`);
  const inner: ExprContext = { ...ctx, aggregates: false, outputs: null };
  if (star) {
    if (fn !== 'count' || raw.length > 0 || distinct) refuse('function', `${fn.toUpperCase()}(*) is not supported.`);
    return { t: 'agg', fn, arg: null, distinct: false, kind: 'integer' };
  }
  count(fn, raw, 1, 1);
  const arg = ctx.translate(raw[0], inner);
  const kind = kindOf(arg);
  switch (fn) {
    case 'count':
    case 'approx_count_distinct':
      return { t: 'agg', fn, arg: kind === 'json' ? asKind(arg, 'text', fn) : arg, distinct: distinct || fn === 'approx_count_distinct', kind: 'integer' };
    case 'countif':
      return { t: 'agg', fn, arg: asKind(arg, 'boolean', 'COUNTIF'), distinct: false, kind: 'integer' };
    case 'logical_and':
    case 'logical_or':
      return { t: 'agg', fn, arg: asKind(arg, 'boolean', fn), distinct: false, kind: 'boolean' };
    case 'sum':
    case 'avg': {
      const value = kind === 'integer' && fn === 'sum' ? arg : float(arg, fn.toUpperCase());
      return { t: 'agg', fn, arg: value, distinct, kind: fn === 'sum' && kind === 'integer' ? 'integer' : 'float' };
    }
    case 'min':
    case 'max':
      if (kind === 'json' && arg.t === 'field') return { t: 'agg', fn, arg: jsonNumber(arg, fn), distinct, kind: 'float' };
      return typedAggregate(arg, fn, distinct, kind);
    default:
      return typedAggregate(arg, fn, distinct, kind);
  }
}

/** An aggregate whose answer has its argument's kind (JSON refused: its values have no one order). */
function typedAggregate(arg: Expr, fn: AggFn, distinct: boolean, kind: Kind): Expr {
  if (kind === 'json') refuse('function', `${fn.toUpperCase()} of a JSON field: cast it first (${fn.toUpperCase()}(CAST(x AS INT64)) or ${fn.toUpperCase()}(CAST(x AS STRING))).`);
  return { t: 'agg', fn, arg, distinct, kind };
}

/**
 * MIN/MAX of a JSON field compare its values as numbers, as BigQuery's numeric field would (the
 * answer a FLOAT64, as APPROX_QUANTILES's): a JSON number is its value, and a value that is no
 * number (a string, even "12", true, an object) fails the query with a message naming the
 * aggregate, where BigQuery's field of text would compare as text; MAX(CAST(x AS STRING)) does.
 *
 * @example
 * jsonNumber(field, 'max'); // { t: 'call', fn: 'json_number', args: [field, { t: 'lit', kind: 'text', value: 'MAX of a JSON field holding ...' }], kind: 'float' }
 */
function jsonNumber(arg: Expr, fn: AggFn): Expr {
  const name = fn.toUpperCase();
  const why = `${name} of a JSON field compares numbers: this value is no number (for text, ${name}(CAST(x AS STRING)))`;
  return call('json_number', [arg, { t: 'lit', kind: 'text', value: why }], 'float');
}

/**
 * `APPROX_QUANTILES(x, n)[OFFSET(k)]`: BigQuery's n + 1 values from the minimum to the maximum,
 * the k-th of them, computed exactly: of the non-NULL values sorted, the one at 1-based position
 * max(1, ceil(k * count / n)), NULL when there is none. k/n must be an exact decimal (n of the
 * form 2^a * 5^b: 2, 4, 10, 20, 100, 1000, ...), which DuckDB's `quantile_disc` reads exactly.
 *
 * @example
 * approxQuantile(node /* approx_quantiles(x, 100) *\/, { offset: 95, safe: false }, ctx); // { t: 'agg', fn: 'quantile', at: { k: 95, n: 100, decimal: '0.95' }, ... }
 */
export function approxQuantile(v: Node, at: { offset: number; safe: boolean }, ctx: ExprContext): Expr {
  const { raw, n } = quantileArguments(v, ctx);
  if (at.offset < 0 || at.offset > n) {
    if (at.safe) return { t: 'lit', kind: 'null', value: null };
    refuse('query', `APPROX_QUANTILES(x, ${n}) has ${n + 1} values: OFFSET ${at.offset} is out of bounds.`);
  }
  const decimal = exactDecimal(at.offset, n);
  if (decimal === null)
    return refuse('function', `APPROX_QUANTILES(x, ${n})[OFFSET(${at.offset})] is not supported here: the quantile ${at.offset}/${n} is no exact decimal (use n = 2, 4, 10, 20, 100, 1000, ...).`);
  const value = quantileValue(raw[0], ctx, true);
  return { t: 'agg', fn: 'quantile', arg: value, distinct: false, kind: kindOf(value) === 'null' ? 'float' : kindOf(value), at: { k: at.offset, n, decimal } };
}

/** The largest n of the whole array: its row stays within the sandbox's size of an answer's row (docs/sandboxing.md, "Limits"). */
const MAX_QUANTILES = 250;

/**
 * `APPROX_QUANTILES(x, n)` as a whole: BigQuery's array of n + 1 numbers, the one at position k
 * being `APPROX_QUANTILES(x, n)[OFFSET(k)]` (same rule, same exact decimals), as a JSON array
 * (NULL when there is no value). Numbers only (a JSON field read as one), n up to 250.
 *
 * @example
 * approxQuantiles(node /* approx_quantiles(x, 4) *\/, ctx); // { t: 'agg', fn: 'quantiles', every: ['0', '0.25', '0.5', '0.75', '1'], kind: 'json', ... }
 */
function approxQuantiles(v: Node, ctx: ExprContext): Expr {
  const { raw, n } = quantileArguments(v, ctx);
  if (n > MAX_QUANTILES) refuse('function', `APPROX_QUANTILES(x, ${n}) as a whole array is not supported here: n at most ${MAX_QUANTILES} (or read one, [OFFSET(k)]).`);
  const every = Array.from({ length: n + 1 }, (_, k) => exactDecimal(k, n));
  if (every.some((d) => d === null)) refuse('function', `APPROX_QUANTILES(x, ${n}) is not supported here: its quantiles k/${n} are no exact decimals (use n = 2, 4, 10, 20, 100, 1000, ...).`);
  const value = quantileValue(raw[0], ctx, false);
  return { t: 'agg', fn: 'quantiles', arg: value, distinct: false, kind: 'json', every: every as string[] };
}

/** APPROX_QUANTILES's two arguments checked: the value (untranslated) and n, a whole number literal. */
function quantileArguments(v: Node, ctx: ExprContext): { raw: unknown[]; n: number } {
  if (!ctx.aggregates) refuse('construct', 'Aggregate function APPROX_QUANTILES is not allowed here (only in SELECT, HAVING and ORDER BY).');
  if (v.over !== null && v.over !== undefined) refuse('construct', 'Window functions (OVER) are not supported here.');
  const { raw, star, distinct } = functionArguments(v, 'approx_quantiles');
  if (star || distinct || raw.length !== 2) refuse('function', 'APPROX_QUANTILES takes 2 arguments here: APPROX_QUANTILES(x, 100)[OFFSET(95)].');
  const count = JSON.stringify(((variantOf(raw[1])[1] as Node | null) ?? {}).value ?? null);
  const m = /^\{"Number":\["([0-9]{1,6})",false\]\}$/.exec(count);
  const n = m ? Number(m[1]) : 0;
  if (n < 1) refuse('function', 'APPROX_QUANTILES takes its number of quantiles as a whole number literal from 1 to 999999.');
  return { raw, n };
}

/** The value APPROX_QUANTILES sorts: a number (a JSON field read as one) or, for one quantile, a timestamp. */
function quantileValue(raw: unknown, ctx: ExprContext, timestamps: boolean): Expr {
  const arg = ctx.translate(raw, { ...ctx, aggregates: false, outputs: null });
  const kind = kindOf(arg);
  if (kind !== 'integer' && kind !== 'float' && kind !== 'json' && !(timestamps && kind === 'timestamp') && kind !== 'null')
    refuse('function', `APPROX_QUANTILES of this type is not supported here: numbers${timestamps ? ' and timestamps' : ' (a timestamp: read one quantile, [OFFSET(k)])'}.`);
  return kind === 'json' || kind === 'null' ? float(arg, 'APPROX_QUANTILES') : arg;
}

/** k/n as a decimal literal when it is one exactly (n = 2^a * 5^b), else null. */
function exactDecimal(k: number, n: number): string | null {
  let rest = n;
  let twos = 0;
  let fives = 0;
  while (rest % 2 === 0) [rest, twos] = [rest / 2, twos + 1];
  while (rest % 5 === 0) [rest, fives] = [rest / 5, fives + 1];
  if (rest !== 1) return null;
  const digits = Math.max(twos, fives);
  const scaled = ((BigInt(k) * 10n ** BigInt(digits)) / BigInt(n)).toString().padStart(digits + 1, '0');
  return digits === 0 ? scaled : `${scaled.slice(0, -digits)}.${scaled.slice(-digits)}`;
}

const EXTRACT_PARTS: Record<string, string> = {
  Second: 'second',
  Minute: 'minute',
  Hour: 'hour',
  Day: 'day',
  Month: 'month',
  Year: 'year',
  DayOfWeek: 'dayofweek',
  Dow: 'dayofweek',
  DayOfYear: 'dayofyear',
  Doy: 'dayofyear',
};

/** EXTRACT(part FROM timestamp), in UTC.  *
 * @example
 * extractPart({ field: 'Hour', expr: { Identifier: { value: 'timestamp' } } }, ctx); // { t: 'call', fn: 'extract', ... }
 */
export function extractPart(v: Node, ctx: ExprContext): Expr {
  const [field] = variantOf(v.field);
  const part = EXTRACT_PARTS[field];
  if (!part) return refuse('function', 'EXTRACT supports SECOND, MINUTE, HOUR, DAY, MONTH, YEAR, DAYOFWEEK and DAYOFYEAR here.');
  return call('extract', [{ t: 'lit', kind: 'text', value: part }, timestamp(ctx.translate(v.expr, ctx), 'EXTRACT')], 'integer');
}
