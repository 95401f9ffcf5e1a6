import type { ColumnType } from '../sql/column-types';
import type { ExprContext } from './context';
import { callFunction, extractPart } from './functions';
import type { Expr, Op, TimeUnit } from './ir';
import { asKind, commonKind, kindOf, outputKind, retypedColumn, timestampLiteral } from './kinds';
import type { Node } from './parse-bigquery';
import { refuse, shown } from './refuse';
import { bigQueryString } from './string-literal';
import { compoundAccess } from './subscripts';
import { constructName, variantOf } from './tree';

const COMPARISONS: Record<string, Op> = { Eq: '=', NotEq: '<>', Lt: '<', LtEq: '<=', Gt: '>', GtEq: '>=' };
const ARITHMETIC: Record<string, Op> = { Plus: '+', Minus: '-', Multiply: '*', Divide: '/' };

/**
 * One expression of BigQuery's tree as a typed value: names resolved through the scope, JSON
 * fields read by the kind their use asks for, functions mapped (functions.ts). Anything else is
 * refused with the construct's name.
 *
 * @example
 * translateExpr({ Identifier: { value: 'id' } }, ctx); // { t: 'col', rel: 'edge_logs', name: 'id', kind: 'text' }
 */
export function translateExpr(node: unknown, ctx: ExprContext): Expr {
  const [variant, value] = variantOf(node);
  const v = value as Node;
  switch (variant) {
    case 'Identifier':
    case 'CompoundIdentifier':
      return identifier(variant === 'Identifier' ? [v as Node] : (value as Node[]), ctx);
    case 'Value':
      return literal(v, ctx);
    case 'Nested':
      return translateExpr(value, ctx);
    case 'BinaryOp':
      return binary(v, ctx);
    case 'UnaryOp':
      return unary(v, ctx);
    case 'IsNull':
    case 'IsNotNull':
      return isNull(translateExpr(value, ctx), variant === 'IsNotNull');
    case 'IsTrue':
    case 'IsFalse':
    case 'IsNotTrue':
    case 'IsNotFalse':
      return isBoolean(variant, translateExpr(value, ctx));
    case 'InList':
      return inList(v, ctx);
    case 'InSubquery':
      return { t: 'in_query', ...subqueryIn(v, ctx), not: v.negated === true };
    case 'Exists':
      return { t: 'exists', query: ctx.query(v.subquery as Node, ctx.scope), not: v.negated === true };
    case 'Subquery': {
      const query = ctx.query(v, ctx.scope);
      if (query.columns.length !== 1) refuse('query', 'A scalar subquery must select exactly one column.');
      return { t: 'subquery', query, kind: query.columns[0]!.kind };
    }
    case 'Between':
      return between(v, ctx);
    case 'Like':
      return like(v, ctx);
    case 'Case':
      return caseExpr(v, ctx);
    case 'Cast':
      return cast(v, ctx);
    case 'Function':
      return callFunction(v, ctx);
    case 'Interval':
      return interval(v, ctx);
    case 'Extract':
      return extractPart(v, ctx);
    case 'TypedString':
      return typedString(v, ctx);
    case 'Substring': {
      const parts = [v.expr, v.substring_from, ...(v.substring_for === null || v.substring_for === undefined ? [] : [v.substring_for])].map((e) => translateExpr(e, ctx));
      if (v.substring_from === null || v.substring_from === undefined) refuse('function', 'SUBSTR takes 2 to 3 arguments.');
      return { t: 'call', fn: 'substr', args: parts.map((p, i) => asKind(p, i === 0 ? 'text' : 'integer', 'SUBSTR')), kind: 'text' };
    }
    case 'CompoundFieldAccess':
      return compoundAccess(v, ctx);
    case 'ILike':
      return refuse('construct', "BigQuery has no ILIKE: write LOWER(x) LIKE '...'.");
    default:
      return refuse('construct', `${constructName(variant)} is not supported here.`);
  }
}

function identifier(parts: Node[], ctx: ExprContext): Expr {
  const names = parts.map((p) => String(p.value));
  if (names[0]!.startsWith('@') && !parts[0]!.quote_style) refuse('parameter', 'Query parameters (@name) cannot be used: the endpoint binds its own.');
  if (names.length === 1 && ctx.outputs) {
    const output = ctx.outputs.get(names[0]!.toLowerCase());
    if (output) return output.e;
  }
  return ctx.scope.resolve(names);
}

function literal(v: Node, ctx: ExprContext): Expr {
  const [variant, value] = variantOf(v.value);
  switch (variant) {
    case 'Number':
      return { t: 'lit', kind: /^[0-9]+$/.test(String((value as unknown[])[0])) ? 'integer' : 'float', value: numberText(String((value as unknown[])[0])) };
    case 'Boolean':
      return { t: 'lit', kind: 'boolean', value: value === true };
    case 'Null':
      return { t: 'lit', kind: 'null', value: null };
    case 'SingleQuotedString':
    case 'DoubleQuotedString':
    case 'TripleSingleQuotedString':
    case 'TripleDoubleQuotedString':
    case 'SingleQuotedRawStringLiteral':
    case 'DoubleQuotedRawStringLiteral':
      return { t: 'lit', kind: 'text', value: bigQueryString(ctx.src.slice(v.span as never)) };
    default:
      return refuse('construct', `${constructName(variant)} literals are not supported here.`);
  }
}

function numberText(text: string): string {
  if (!/^([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(text)) refuse('syntax', 'A number could not be read.');
  if (/^[0-9]+$/.test(text) && BigInt(text) > 9223372036854775807n) refuse('query', 'An integer literal is out of range for INT64.');
  return text;
}

function binary(v: Node, ctx: ExprContext): Expr {
  const op = String(v.op);
  const left = translateExpr(v.left, ctx);
  const right = translateExpr(v.right, ctx);
  if (op === 'And' || op === 'Or') {
    return { t: 'op', op: op === 'And' ? 'and' : 'or', args: [asKind(left, 'boolean', op.toUpperCase()), asKind(right, 'boolean', op.toUpperCase())], kind: 'boolean' };
  }
  if (op in COMPARISONS) return comparison(COMPARISONS[op]!, left, right);
  if (op === 'StringConcat') return { t: 'op', op: '||', args: [asKind(left, 'text', '||'), asKind(right, 'text', '||')], kind: 'text' };
  if (op in ARITHMETIC) return arithmetic(ARITHMETIC[op]!, left, right);
  return refuse('construct', `The operator ${shown(op)} is not supported here.`);
}

/** `a = b`, `a < b`, ...: both sides as their common kind (JSON as the other side's). */
function comparison(op: Op, left: Expr, right: Expr): Expr {
  const kind = commonKind([left, right], `Operator ${op}`);
  if (kind === 'interval') refuse('query', 'Intervals cannot be compared.');
  const as = kind === 'json' || kind === 'null' ? 'text' : kind;
  return { t: 'op', op, args: [asKind(left, as, `Operator ${op}`), asKind(right, as, `Operator ${op}`)], kind: 'boolean' };
}

function arithmetic(op: Op, left: Expr, right: Expr): Expr {
  const kinds = [kindOf(left), kindOf(right)];
  if (kinds.includes('timestamp') || kinds.includes('interval')) refuse('query', `Operator ${op} on a TIMESTAMP: use TIMESTAMP_ADD, TIMESTAMP_SUB or TIMESTAMP_DIFF.`);
  const integer = op !== '/' && kinds.every((k) => k === 'integer' || k === 'null');
  const want = integer ? 'integer' : 'float';
  return { t: 'op', op, args: [asKind(left, want, `Operator ${op}`), asKind(right, want, `Operator ${op}`)], kind: want };
}

function unary(v: Node, ctx: ExprContext): Expr {
  const arg = translateExpr(v.expr, ctx);
  if (v.op === 'Not') return { t: 'op', op: 'not', args: [asKind(arg, 'boolean', 'NOT')], kind: 'boolean' };
  if (v.op === 'Minus' || v.op === 'Plus') {
    const kind = kindOf(arg) === 'integer' ? 'integer' : 'float';
    const value = asKind(arg, kind, 'Unary minus');
    return v.op === 'Plus' ? value : { t: 'op', op: 'neg', args: [value], kind };
  }
  return refuse('construct', `The operator ${shown(String(v.op))} is not supported here.`);
}

/** `x IS [NOT] NULL`; a JSON null is NULL, as in BigQuery's tables. */
function isNull(arg: Expr, not: boolean): Expr {
  const value = kindOf(arg) === 'json' ? asKind(arg, 'text', 'IS NULL') : arg;
  return { t: 'op', op: not ? 'is_not_null' : 'is_null', args: [value], kind: 'boolean' };
}

function isBoolean(variant: string, arg: Expr): Expr {
  const value = asKind(arg, 'boolean', variant);
  const truth: Expr = { t: 'lit', kind: 'boolean', value: variant === 'IsTrue' || variant === 'IsNotTrue' };
  // x IS TRUE: true only when x is true (never NULL).
  const is: Expr = {
    t: 'call',
    fn: 'coalesce',
    args: [
      { t: 'op', op: '=', args: [value, truth], kind: 'boolean' },
      { t: 'lit', kind: 'boolean', value: false },
    ],
    kind: 'boolean',
  };
  return variant.startsWith('IsNot') ? { t: 'op', op: 'not', args: [is], kind: 'boolean' } : is;
}

function inList(v: Node, ctx: ExprContext): Expr {
  const arg = translateExpr(v.expr, ctx);
  const list = (v.list as unknown[]).map((e) => translateExpr(e, ctx));
  const kind = commonKind([arg, ...list], 'IN');
  const as = kind === 'json' || kind === 'null' ? 'text' : kind;
  return { t: 'in', arg: asKind(arg, as, 'IN'), list: list.map((e) => asKind(e, as, 'IN')), not: v.negated === true };
}

function subqueryIn(v: Node, ctx: ExprContext): { arg: Expr; query: import('./ir').QueryIR } {
  const arg = translateExpr(v.expr, ctx);
  const query = ctx.query(v.subquery as Node, ctx.scope);
  if (query.columns.length !== 1) refuse('query', 'The subquery of IN must select exactly one column.');
  const kind = query.columns[0]!.kind;
  if (kind !== 'json') return { arg: asKind(arg, kind, 'IN'), query };
  // A JSON field selected: compared as the other side's kind (text when that is JSON too), as `=` compares it.
  const argKind = kindOf(arg);
  const as = argKind === 'json' || argKind === 'null' ? 'text' : argKind === 'integer' ? 'float' : outputKind(argKind);
  return { arg: asKind(arg, as, 'IN'), query: retypedColumn(query, 0, (e) => asKind(e, as, 'IN'), as) };
}

function between(v: Node, ctx: ExprContext): Expr {
  const [arg, lo, hi] = [v.expr, v.low, v.high].map((e) => translateExpr(e, ctx)) as [Expr, Expr, Expr];
  const kind = commonKind([arg, lo, hi], 'BETWEEN');
  const as = kind === 'json' || kind === 'null' ? 'text' : kind;
  return { t: 'between', arg: asKind(arg, as, 'BETWEEN'), lo: asKind(lo, as, 'BETWEEN'), hi: asKind(hi, as, 'BETWEEN'), not: v.negated === true };
}

function like(v: Node, ctx: ExprContext): Expr {
  if (v.any === true || (v.escape_char !== null && v.escape_char !== undefined)) refuse('construct', 'LIKE ANY and LIKE ... ESCAPE are not supported here.');
  const arg = asKind(translateExpr(v.expr, ctx), 'text', 'LIKE');
  const pattern = asKind(translateExpr(v.pattern, ctx), 'text', 'LIKE');
  return { t: 'op', op: v.negated === true ? 'not_like' : 'like', args: [arg, pattern], kind: 'boolean' };
}

function caseExpr(v: Node, ctx: ExprContext): Expr {
  const operand = v.operand === null || v.operand === undefined ? null : translateExpr(v.operand, ctx);
  const whens = (v.conditions as Node[]).map((w): [Expr, Expr] => {
    const condition = translateExpr(w.condition, ctx);
    return [operand ? comparison('=', operand, condition) : asKind(condition, 'boolean', 'WHEN'), translateExpr(w.result, ctx)];
  });
  const otherwise = v.else_result === null || v.else_result === undefined ? null : translateExpr(v.else_result, ctx);
  const results = [...whens.map((w) => w[1]), ...(otherwise ? [otherwise] : [])];
  const kind = commonKind(results, 'CASE');
  return { t: 'case', whens: whens.map(([c, r]) => [c, asKind(r, kind, 'CASE')]), else: otherwise && asKind(otherwise, kind, 'CASE'), kind };
}

const CAST_TYPES: Record<string, ColumnType> = {
  Int64: 'integer',
  Int: 'integer',
  Integer: 'integer',
  BigInt: 'integer',
  Float64: 'float',
  Double: 'float',
  Float: 'float',
  Bool: 'boolean',
  Boolean: 'boolean',
  String: 'text',
  Text: 'text',
  Varchar: 'text',
  Timestamp: 'timestamp',
  Datetime: 'timestamp',
};

function cast(v: Node, ctx: ExprContext): Expr {
  const [typeName, detail] = variantOf(v.data_type);
  const to = CAST_TYPES[typeName];
  if (typeName === 'Timestamp' && Array.isArray(detail) && detail[1] !== 'None')
    refuse(
      'type',
      "CAST to TIMESTAMP WITH TIME ZONE (::timestamptz) is not supported here: BigQuery's TIMESTAMP is already an instant in UTC, write CAST(x AS TIMESTAMP) or TIMESTAMP '2026-11-20T10:00:00Z'.",
    );
  if (!to) refuse('type', `CAST to ${constructName(typeName).replace("BigQuery's ", '')} is not supported here: cast to INT64, FLOAT64, BOOL, STRING, TIMESTAMP or DATETIME.`);
  if (v.format !== null && v.format !== undefined) refuse('construct', 'CAST ... FORMAT is not supported here.');
  return castTo(translateExpr(v.expr, ctx), to!, v.kind === 'SafeCast' || v.kind === 'TryCast');
}

/** CAST / SAFE_CAST: what BigQuery converts between, else refused; a no-op cast is dropped. */
function castTo(arg: Expr, to: ColumnType, safe: boolean): Expr {
  const from = kindOf(arg);
  if (from === to) return arg;
  if (from === 'null') return { t: 'cast', arg, to, safe };
  if (from === 'timestamp' && to === 'text') return timestampText(arg);
  if (from === 'timestamp' && to !== 'timestamp') refuse('type', 'CAST of a TIMESTAMP to this type is not supported here: cast it to STRING, or use UNIX_MICROS.');
  if (from === 'boolean' && (to === 'float' || to === 'timestamp')) refuse('type', 'CAST of a BOOL to this type is not supported here.');
  if (to === 'timestamp' && from !== 'text' && from !== 'json') refuse('type', 'Only a STRING can be cast to a TIMESTAMP.');
  if (to === 'json' || from === 'interval') refuse('type', 'This CAST is not supported here.');
  if (to === 'timestamp' && arg.t === 'lit' && typeof arg.value === 'string') return timestampLiteral(arg.value);
  return { t: 'cast', arg, to, safe };
}

/**
 * CAST(timestamp AS STRING) as BigQuery prints it: `2026-11-28 10:00:00.123456+00`, the fraction
 * without its trailing zeros and left out when whole (`2026-11-28 10:00:00+00`). Built from the
 * functions both printers have: the seconds by FORMAT_TIMESTAMP, the fraction from UNIX_MICROS
 * (its six digits are those of 1000000 + micros, past the leading 1).
 */
function timestampText(arg: Expr): Expr {
  const integer = (value: string): Expr => ({ t: 'lit', kind: 'integer', value });
  const text = (value: string): Expr => ({ t: 'lit', kind: 'text', value });
  const micros: Expr = { t: 'call', fn: 'unix_micros', args: [arg], kind: 'integer' };
  const mod = (x: Expr): Expr => ({ t: 'call', fn: 'mod', args: [x, integer('1000000')], kind: 'integer' });
  const fraction = mod({ t: 'op', op: '+', args: [mod(micros), integer('1000000')], kind: 'integer' });
  const digits: Expr = {
    t: 'call',
    fn: 'substr',
    args: [{ t: 'cast', arg: { t: 'op', op: '+', args: [fraction, integer('1000000')], kind: 'integer' }, to: 'text', safe: false }, integer('2'), integer('6')],
    kind: 'text',
  };
  const trimmed: Expr = { t: 'call', fn: 'regexp_replace', args: [digits, text('0+$'), text('')], kind: 'text' };
  const dot: Expr = {
    t: 'case',
    whens: [[{ t: 'op', op: '=', args: [fraction, integer('0')], kind: 'boolean' }, text('')]],
    else: { t: 'op', op: '||', args: [text('.'), trimmed], kind: 'text' },
    kind: 'text',
  };
  const seconds: Expr = { t: 'call', fn: 'format_timestamp', args: [text('%F %T'), arg], kind: 'text' };
  return { t: 'call', fn: 'concat', args: [seconds, dot, text('+00')], kind: 'text' };
}

const UNITS: Record<string, TimeUnit> = {
  Microsecond: 'microsecond',
  Microseconds: 'microsecond',
  Millisecond: 'millisecond',
  Milliseconds: 'millisecond',
  Second: 'second',
  Seconds: 'second',
  Minute: 'minute',
  Minutes: 'minute',
  Hour: 'hour',
  Hours: 'hour',
  Day: 'day',
  Days: 'day',
};

function interval(v: Node, ctx: ExprContext): Expr {
  const unit = UNITS[String(v.leading_field)];
  if (!unit || (v.last_field !== null && v.last_field !== undefined)) refuse('construct', 'Only INTERVAL n MICROSECOND|MILLISECOND|SECOND|MINUTE|HOUR|DAY is supported here.');
  const n = translateExpr(v.value, ctx);
  const text = n.t === 'lit' && (n.kind === 'integer' || n.kind === 'text') ? String(n.value) : n.t === 'op' && n.op === 'neg' && n.args[0]!.t === 'lit' ? `-${String(n.args[0]!.value)}` : '';
  if (!/^-?[0-9]{1,15}$/.test(text.trim())) refuse('construct', 'An INTERVAL needs a whole number (INTERVAL 1 HOUR).');
  return { t: 'interval', n: BigInt(text.trim()), unit: unit! };
}

function typedString(v: Node, ctx: ExprContext): Expr {
  const [typeName] = variantOf(v.data_type);
  if (typeName !== 'Timestamp' && typeName !== 'Datetime') refuse('construct', `${constructName(typeName)} literals are not supported here.`);
  const text = literal(v.value as Node, ctx);
  return timestampLiteral(String((text as { value: unknown }).value));
}
