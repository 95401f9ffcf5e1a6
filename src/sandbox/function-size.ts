import { constantNumber } from './constant-number';
import type { SizeRule } from './allowed-functions';
import { constant, POOL_VALUE, scale, sum, times, type Bound } from './size-bound';
import { FIXED_VALUE, refuseTooLarge as refuse, SIZE_LIMITS } from './size-limits';

// What each function's value can take, from its arguments' bounds and constant size arguments,
// by its size rule (allowed-functions.ts): the per-function half of the caller's SQL size check
// (check-sizes.ts walks the query and adds these up).

type Json = Record<string, any>;

/** The bound of a function's value from its arguments' (lambdas aside). */
export function sizeOf(name: string, rule: Exclude<SizeRule, 'transform' | 'filter' | 'reduce'>, nodes: readonly Json[], args: readonly Bound[], row: boolean): Bound {
  switch (rule) {
    case 'fixed':
      return constant(FIXED_VALUE, row);
    case 'collect':
      return POOL_VALUE;
    case 'range':
    case 'series': {
      const count = rangeCount(nodes, rule === 'series');
      return { ...constant(FIXED_VALUE * (count + 1), row), items: count };
    }
    case 'bins': {
      const count = sizeArgument(name, nodes[2], SIZE_LIMITS.listElements);
      return { ...constant(FIXED_VALUE * (count + 1), row), items: count };
    }
    case 'repeat':
      return scale(args[0]!, sizeArgument(name, nodes[1], Number.MAX_SAFE_INTEGER), FIXED_VALUE);
    case 'pad':
      // n characters of at most 4 bytes each, whatever the text.
      return constant(4 * sizeArgument(name, nodes[1], Number.MAX_SAFE_INTEGER) + FIXED_VALUE, row);
    case 'resize': {
      const count = sizeArgument(name, nodes[1], Number.MAX_SAFE_INTEGER);
      return { ...sum([args[0]!, times({ ...constant(0), items: count }, sum([constant(FIXED_VALUE), args[2] ?? constant(0)]))]), items: count };
    }
    case 'format':
    case 'printf':
      return sum([scale(sum(args.slice(1)), 4), constant(formatWidth(name, nodes[0]))]);
    case 'strftime':
      return strftimeBound(nodes, args);
    case 'replace':
      // Each match (an empty pattern matches everywhere) replaced by the replacement.
      return sum([args[0]!, times(args[0]!, args[2] ?? constant(0))], FIXED_VALUE);
    case 'json_path': {
      const paths = nodes[1];
      const count = paths?.function_name === 'list_value' || paths?.type === 'ARRAY_CONSTRUCTOR' ? (paths.children ?? []).length : 1;
      return scale(args[0]!, count, FIXED_VALUE * count);
    }
    case 'join':
      // array_to_string(list, sep): each element as text and a separator after it; concat_ws(sep, ...).
      return name === 'concat_ws' ? sum([...args.slice(1), scale(args[0]!, args.length)]) : sum([scale(args[0]!, 4), times(args[0]!, args[1] ?? constant(0))]);
    default:
      if ('top' in rule) return nodes.length > rule.top ? POOL_VALUE : scale(args[0]!, 1, FIXED_VALUE);
      if ('each' in rule) return copies(args[0]!, nodes[rule.each], args[rule.each]);
      return scale(sum(args), rule.scale, FIXED_VALUE);
  }
}

/** Whether an aggregate's value is its whole state: `collect`, or a `top` given its count. */
export function collects(rule: SizeRule, nodes: readonly Json[]): boolean {
  return rule === 'collect' || (typeof rule === 'object' && 'top' in rule && nodes.length > rule.top);
}

/** `value` once, or once for each element of `list` when it is one (a number, or no argument, picks one): a list written out counts its elements. */
export function copies(value: Bound, node: Json | undefined, list: Bound | undefined): Bound {
  if (node === undefined || list === undefined || constantNumber(node) !== null) return scale(value, 1, FIXED_VALUE);
  const written = LIST_LITERALS.has(String(node.function_name).toLowerCase()) || node.type === 'ARRAY_CONSTRUCTOR' ? (node.children ?? []).length : undefined;
  return sum([times({ ...list, items: written ?? list.items }, sum([value, constant(FIXED_VALUE)]))], FIXED_VALUE);
}

/** Functions that build a list of their arguments (`[a, b]` is `ARRAY_CONSTRUCTOR`). */
const LIST_LITERALS = new Set(['list_value', 'list_pack', 'array_value']);

/** Elements of `range` / `generate_series` over constant arguments (numbers, times and intervals). */
function rangeCount(nodes: readonly Json[], inclusive: boolean): number {
  const values = nodes.map((n) => constantNumber(n));
  if (values.some((v) => v === null) || values.length === 0) {
    refuse('range and generate_series take constant arguments here (numbers, or times and an interval), so their size is known before they run.');
  }
  const [a, b, step] = values as number[];
  const [start, stop] = values.length === 1 ? [0, a!] : [a!, b!];
  const count = Math.floor(Math.abs(stop - start) / Math.abs(step || 1)) + (inclusive ? 1 : 0);
  if (!(count <= SIZE_LIMITS.listElements)) {
    refuse(`range and generate_series build at most ${SIZE_LIMITS.listElements} elements here; this one ${Number.isFinite(count) ? count : 'more'}.`);
  }
  return count;
}

/** A constant count or width argument, at most `max`. */
function sizeArgument(name: string, node: Json | undefined, max: number): number {
  const value = node === undefined ? null : constantNumber(node);
  if (value === null) refuse(`The size argument of ${name} must be a constant number here, so the size of its value is known before it runs.`);
  if (!(value <= max)) refuse(`The size argument of ${name} is too large.`);
  return Math.max(0, Math.ceil(value));
}

/**
 * strftime(time, format) or strftime(format, time): each specifier of the format up to 16 times
 * its two characters, the time a fixed size. A constant with a `%` can only be the format (it is
 * no time: read as one, it fails the query), so the value is bounded by it whatever the other
 * argument reads (GROUP BY FORMAT_TIMESTAMP('%Y-%m-%d', timestamp) is a few bytes a row); else
 * either argument may be the format.
 */
function strftimeBound(nodes: readonly Json[], args: readonly Bound[]): Bound {
  const format = nodes.findIndex((n) => n?.class === 'CONSTANT' && typeof n.value?.value === 'string' && (n.value.value as string).includes('%'));
  if (format >= 0)
    return constant(
      16 * (nodes[format]!.value.value as string).length + FIXED_VALUE,
      args.some((a) => a.row),
    );
  return scale(sum(args), 16, FIXED_VALUE);
}

/** Widths and precisions of a constant format string, added up; a width taken from an argument is refused. */
function formatWidth(name: string, node: Json | undefined): number {
  const text = node?.class === 'CONSTANT' && typeof node.value?.value === 'string' ? (node.value.value as string) : null;
  if (text === null) refuse(`The format of ${name} must be a constant string here.`);
  const dynamic = name === 'printf' ? /%[^a-zA-Z%]*\*/ : /\{[^{}]*\{/;
  if (dynamic.test(text)) refuse(`The format of ${name} cannot take a width or precision from an argument here.`);
  const numbers = [...text.matchAll(/\d+/g)].reduce((n, m) => n + Number(m[0]), 0);
  // Besides the widths: a double's longest text (about 330 characters) for each specifier.
  const specifiers = (text.match(/[%{]/g) ?? []).length;
  return text.length + numbers * 4 + specifiers * 400;
}

/** Rows of a window frame of constant ROWS bounds, or null (unbounded, RANGE, GROUPS). */
export function frameRows(e: Json): number | null {
  const side = (kind: unknown, expr: Json | null) => {
    if (kind === 'CURRENT_ROW_ROWS') return 0;
    if (kind !== 'EXPR_PRECEDING_ROWS' && kind !== 'EXPR_FOLLOWING_ROWS') return null;
    const n = expr ? constantNumber(expr) : null;
    return n === null || n < 0 ? null : n;
  };
  const start = side(e.start, e.start_expr);
  const end = side(e.end, e.end_expr);
  return start === null || end === null ? null : start + end + 1;
}
